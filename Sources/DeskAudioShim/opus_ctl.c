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

int deskaudio_shim_encoder_set_inband_fec(OpusEncoder *encoder, opus_int32 enabled) {
    return opus_encoder_ctl(encoder, OPUS_SET_INBAND_FEC(enabled));
}

int deskaudio_shim_encoder_get_inband_fec(OpusEncoder *encoder, opus_int32 *enabled) {
    return opus_encoder_ctl(encoder, OPUS_GET_INBAND_FEC(enabled));
}

int deskaudio_shim_encoder_set_packet_loss_perc(OpusEncoder *encoder, opus_int32 percent) {
    return opus_encoder_ctl(encoder, OPUS_SET_PACKET_LOSS_PERC(percent));
}

int deskaudio_shim_encoder_get_packet_loss_perc(OpusEncoder *encoder, opus_int32 *percent) {
    return opus_encoder_ctl(encoder, OPUS_GET_PACKET_LOSS_PERC(percent));
}

int deskaudio_shim_encoder_reset_state(OpusEncoder *encoder) {
    return opus_encoder_ctl(encoder, OPUS_RESET_STATE);
}
