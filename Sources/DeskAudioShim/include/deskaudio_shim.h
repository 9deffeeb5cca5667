/* Fixed-argument wrappers for libopus's variadic opus_encoder_ctl and
 * opus_multistream_encoder_ctl, which Swift cannot call: one to set an opus_int32 setting
 * (the OPUS_SET_*_REQUEST codes) and one to read one (OPUS_GET_*_REQUEST), for each kind of
 * encoder, and OPUS_RESET_STATE. Hidden: they never leave libdeskaudio.so. */
#ifndef DESKAUDIO_SHIM_H
#define DESKAUDIO_SHIM_H

#include <opus.h>
#include <opus_multistream.h>

#define DESKAUDIO_SHIM_HIDDEN __attribute__((visibility("hidden")))

DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_set(OpusEncoder *encoder, int request, opus_int32 value);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_get(OpusEncoder *encoder, int request, opus_int32 *value);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_encoder_reset_state(OpusEncoder *encoder);

DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_ms_encoder_set(OpusMSEncoder *encoder, int request, opus_int32 value);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_ms_encoder_get(OpusMSEncoder *encoder, int request, opus_int32 *value);
DESKAUDIO_SHIM_HIDDEN int deskaudio_shim_ms_encoder_reset_state(OpusMSEncoder *encoder);

#endif
