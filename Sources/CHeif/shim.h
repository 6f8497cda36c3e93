#ifndef CHUTE_CHEIF_SHIM_H
#define CHUTE_CHEIF_SHIM_H

// libheif's pkg-config file puts the multiarch include directory on the path; the header lives below it.
#include <libheif/heif.h>

#endif
