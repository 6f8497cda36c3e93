#ifndef CHUTE_CFFMPEG_SHIM_H
#define CHUTE_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>

// AVERROR(e) and AVERROR_EOF are function-like or structured macros that Swift cannot import.
static inline int chute_averror(int e) { return AVERROR(e); }
static inline int chute_averror_eof(void) { return AVERROR_EOF; }

#endif
