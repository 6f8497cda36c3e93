#ifndef CHUTE_CFFMPEG_SHIM_H
#define CHUTE_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

// AVERROR(e) and AVERROR_EOF are function-like or structured macros that Swift cannot import.
static inline int chute_averror(int e) { return AVERROR(e); }
static inline int chute_averror_eof(void) { return AVERROR_EOF; }

// The other AVERROR_* codes are FFERRTAG(...) expressions, which Swift cannot import either.
static inline int chute_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int chute_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int chute_averror_demuxer_not_found(void) { return AVERROR_DEMUXER_NOT_FOUND; }
static inline int chute_averror_encoder_not_found(void) { return AVERROR_ENCODER_NOT_FOUND; }
static inline int chute_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }

// AV_NOPTS_VALUE is a cast expression and AV_TIME_BASE_Q a compound literal; neither imports.
static inline int64_t chute_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational chute_time_base_q(void) { return AV_TIME_BASE_Q; }

#endif
