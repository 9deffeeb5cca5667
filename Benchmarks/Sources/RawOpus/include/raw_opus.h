/* The baseline for DeskAudio's pipeline benchmark: libopus called directly, set up as
 * DeskAudio's encoder is (48 kHz stereo, restricted low-delay, VBR). */
#include <opus/opus.h>

/* An encoder with `bitrate` bits per second and `complexity` (0-10); NULL on failure. */
OpusEncoder *raw_opus_encoder_create(opus_int32 bitrate, int complexity);

#include <opus/opus_multistream.h>

/* A surround encoder (mapping family 1) for `channels` (6 or 8), set up as DeskAudio's: its
 * input is in Vorbis order. NULL on failure. */
OpusMSEncoder *raw_opus_surround_encoder_create(int channels, opus_int32 bitrate, int complexity);
