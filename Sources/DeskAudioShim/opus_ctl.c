#include "deskaudio_shim.h"

int deskaudio_shim_encoder_set(OpusEncoder *encoder, int request, opus_int32 value) {
    return opus_encoder_ctl(encoder, request, value);
}

int deskaudio_shim_encoder_get(OpusEncoder *encoder, int request, opus_int32 *value) {
    return opus_encoder_ctl(encoder, request, value);
}

int deskaudio_shim_encoder_reset_state(OpusEncoder *encoder) {
    return opus_encoder_ctl(encoder, OPUS_RESET_STATE);
}

int deskaudio_shim_ms_encoder_set(OpusMSEncoder *encoder, int request, opus_int32 value) {
    return opus_multistream_encoder_ctl(encoder, request, value);
}

int deskaudio_shim_ms_encoder_get(OpusMSEncoder *encoder, int request, opus_int32 *value) {
    return opus_multistream_encoder_ctl(encoder, request, value);
}

int deskaudio_shim_ms_encoder_reset_state(OpusMSEncoder *encoder) {
    return opus_multistream_encoder_ctl(encoder, OPUS_RESET_STATE);
}
