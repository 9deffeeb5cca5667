#include "raw_opus.h"

#include <stddef.h>

OpusEncoder *raw_opus_encoder_create(opus_int32 bitrate, int complexity) {
    int status = OPUS_OK;
    OpusEncoder *encoder = opus_encoder_create(48000, 2, OPUS_APPLICATION_RESTRICTED_LOWDELAY, &status);
    if (status != OPUS_OK) return NULL;
    opus_encoder_ctl(encoder, OPUS_SET_VBR(1));
    opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
    opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
    return encoder;
}

OpusMSEncoder *raw_opus_surround_encoder_create(int channels, opus_int32 bitrate, int complexity) {
    int status = OPUS_OK, streams = 0, coupled = 0;
    unsigned char mapping[8];
    OpusMSEncoder *encoder = opus_multistream_surround_encoder_create(
        48000, channels, 1, &streams, &coupled, mapping, OPUS_APPLICATION_RESTRICTED_LOWDELAY, &status);
    if (status != OPUS_OK) return NULL;
    opus_multistream_encoder_ctl(encoder, OPUS_SET_VBR(1));
    opus_multistream_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
    opus_multistream_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
    return encoder;
}
