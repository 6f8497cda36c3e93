#ifndef CHUTE_CMAGICKWAND_SHIM_H
#define CHUTE_CMAGICKWAND_SHIM_H

// libc first: magick-baseconfig.h defines _GNU_SOURCE, and if it came first glibc's fd_set would be defined here
// with `fds_bits` instead of `__fds_bits`, clashing with Dispatch's copy in any module that sees both.
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdint.h>
#include <math.h>
#include <time.h>
#include <sys/types.h>
#include <sys/select.h>

// SwiftPM drops the -D flags from MagickWand's pkg-config file; Debian's build is Q16 with HDRI off.
#ifndef MAGICKCORE_HDRI_ENABLE
#define MAGICKCORE_HDRI_ENABLE 0
#endif
#ifndef MAGICKCORE_QUANTUM_DEPTH
#define MAGICKCORE_QUANTUM_DEPTH 16
#endif

#include <wand/MagickWand.h>

#endif
