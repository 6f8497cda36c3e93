#ifndef CHUTE_CLIBRAW_SHIM_H
#define CHUTE_CLIBRAW_SHIM_H

// libraw.h uses FILE and size_t without including their headers in C mode.
#include <stdio.h>
#include <stdlib.h>
// libraw_r's pkg-config file puts /usr/include/libraw on the include path.
#include <libraw.h>

#endif
