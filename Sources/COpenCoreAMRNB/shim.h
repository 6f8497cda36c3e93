#ifndef CHUTE_COPENCOREAMRNB_SHIM_H
#define CHUTE_COPENCOREAMRNB_SHIM_H

// The encoder half of opencore-amrnb's interface: Debian's FFmpeg has no AMR-NB encoder, so Chute encodes AMR-NB
// through this library directly.
#include <opencore-amrnb/interf_enc.h>

#endif
