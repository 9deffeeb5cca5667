#include "deskaudio_shim.h"

int deskaudio_shim_encoder_set_bitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitsPerSecond));
}

int deskaudio_shim_encoder_set_complexity(OpusEncoder *encoder, opus_int32 complexity) {
    return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
}

int deskaudio_shim_encoder_set_vbr(OpusEncoder *encoder, opus_int32 enabled) {
    return opus_encoder_ctl(encoder, OPUS_SET_VBR(enabled));
}

int deskaudio_shim_encoder_get_lookahead(OpusEncoder *encoder, opus_int32 *samples) {
    return opus_encoder_ctl(encoder, OPUS_GET_LOOKAHEAD(samples));
}

int deskaudio_shim_encoder_get_bitrate(OpusEncoder *encoder, opus_int32 *bitsPerSecond) {
    return opus_encoder_ctl(encoder, OPUS_GET_BITRATE(bitsPerSecond));
}
