#ifndef CHUTE_CTURBOJPEG_SHIM_H
#define CHUTE_CTURBOJPEG_SHIM_H

// turbojpeg.h uses size_t without including a header that defines it.
#include <stddef.h>
#include <turbojpeg.h>

#endif
