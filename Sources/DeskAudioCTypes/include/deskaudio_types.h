/* The C ABI's structs, defined in C so that the C compiler fixes their layout. Swift uses
 * them through this module; the header generator copies what stands between the markers
 * into include/deskaudio.h. */
#ifndef DESKAUDIO_TYPES_H
#define DESKAUDIO_TYPES_H

#include <stdint.h>

/* BEGIN PUBLIC TYPES */
/**
 * One AudioFrame's header fields, as deskaudio_parse_frame() reads them
 * (docs/wire-format.md), and where its Opus packet is.
 */
typedef struct deskaudio_frame_info {
    /** 48 kHz sample index of the frame's first sample; it runs on through gated silence. */
    uint64_t sample_clock;
    /** CLOCK_MONOTONIC time (ns), on the sender, at which the first sample was captured. */
    uint64_t capture_time_ns;
    /** The Opus packet: points into the bytes that were parsed, valid as long as they are. */
    const uint8_t *payload;
    /** Frames sent before this one (wraps at 2^32): a hole means loss in transit. */
    uint32_t sequence;
    /** Sample rate of the encoded audio, Hz (48000). */
    uint32_t sample_rate;
    /** Bytes of Opus packet at `payload`. */
    uint32_t payload_length;
    /** Samples per channel the payload decodes to (480). */
    uint16_t frame_samples;
    /** Layout version (1). */
    uint8_t version;
    /** DESKAUDIO_FRAME_* bits. */
    uint8_t flags;
    /** Channels of the encoded audio (1 or 2). */
    uint8_t channels;
    /** Codec of the payload (1 = Opus). */
    uint8_t codec;
} deskaudio_frame_info;

/** A decoder's running counts (deskaudio_decoder_get_stats()). */
typedef struct deskaudio_decoder_stats {
    /** Frames decoded. */
    uint64_t frames_decoded;
    /** Frames lost in transit (holes in the sequence). */
    uint64_t frames_lost;
    /**
     * Lost frames replaced by concealment (in-band FEC, else Opus PLC); holes longer than
     * 100 ms are not concealed.
     */
    uint64_t frames_concealed;
    /** Frames that came after a later one, or twice: dropped. */
    uint64_t frames_late;
    /** Frames flagged DESKAUDIO_FRAME_AFTER_GAP (the sender was silent; nothing concealed). */
    uint64_t gaps;
} deskaudio_decoder_stats;
/* END PUBLIC TYPES */

#endif
