/* Fixed-argument wrappers for libopus's variadic opus_encoder_ctl / opus_decoder_ctl
 * requests, which Swift cannot call. Hidden: they never leave libdeskaudio.so. */
#ifndef DESKAUDIO_SHIM_H
#define DESKAUDIO_SHIM_H

#include <opus.h>

#define DESKAUDIO_SHIM_HIDDEN __attribute__((visibility("hidden")))

DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_set_complexity(OpusEncoder *encoder, opus_int32 complexity);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_set_vbr(OpusEncoder *encoder, opus_int32 enabled);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_get_lookahead(OpusEncoder *encoder, opus_int32 *samples);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_get_bitrate(OpusEncoder *encoder, opus_int32 *bitsPerSecond);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_set_inband_fec(OpusEncoder *encoder, opus_int32 enabled);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_get_inband_fec(OpusEncoder *encoder, opus_int32 *enabled);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_set_packet_loss_perc(OpusEncoder *encoder, opus_int32 percent);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_get_packet_loss_perc(OpusEncoder *encoder, opus_int32 *percent);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_reset_state(OpusEncoder *encoder);

#endif
