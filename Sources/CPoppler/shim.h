#ifndef CHUTE_CPOPPLER_SHIM_H
#define CHUTE_CPOPPLER_SHIM_H

// poppler's GLib interface (C, with GObject reference counting), which draws a page into a cairo surface; cairo
// encodes the surface as PNG. poppler's C++ interface would need a C wrapper of Chute's own.
#include <poppler.h>
#include <cairo.h>

#endif
