/* The C ABI's structs, defined in C so that the C compiler fixes their layout. Swift uses
 * them through this module; the header generator copies what stands between the markers
 * into include/deskaudio.h. */
#ifndef DESKAUDIO_TYPES_H
#define DESKAUDIO_TYPES_H

#include <stdint.h>

/* BEGIN PUBLIC TYPES */
/* GROUP 7 */
/**
 * One AudioFrame's header fields, as deskaudio_parse_frame() reads them
 * (docs/wire-format.md), and where its Opus packet is.
 */
typedef struct deskaudio_frame_info {
    /** 48 kHz sample index of the frame's first sample; it runs on through gated silence. */
    uint64_t sample_clock;
    /**
     * CLOCK_MONOTONIC time (ns), on the sender, at which the first sample was played into
     * the sink (app audio) or captured by the device (the microphone), by the audio
     * server's clock (docs/wire-format.md).
     */
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
    /** Layout version: 1, or 2 for surround (docs/wire-format.md). */
    uint8_t version;
    /** DESKAUDIO_FRAME_* bits. */
    uint8_t flags;
    /** Channels of the encoded audio: 1 or 2 in version 1; 1 to 8 in version 2 (6: 5.1, 8: 7.1). */
    uint8_t channels;
    /** Codec of the payload: 1 = Opus (version 1), 2 = Opus multistream, mapping family 1 (version 2). */
    uint8_t codec;
} deskaudio_frame_info;

/* GROUP 7 */
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

/* GROUP 6 */
/** An encoder's running counts (deskaudio_encoder_get_stats()). */
typedef struct deskaudio_encoder_stats {
    /** 10 ms frames cut from the pushed audio. */
    uint64_t frames_encoded;
    /** Frames handed to the callback. */
    uint64_t frames_sent;
    /** Frames the zero gate held back (after 800 all-zero frames, until sound returns). */
    uint64_t frames_gated;
    /** AudioFrame bytes handed to the callback. */
    uint64_t bytes_sent;
    /** The echo canceller that runs (deskaudio_encoder_set_echo_cancel()): 0 none (off),
        else a deskaudio_echo_canceller: 1 speexdsp, 2 WebRTC's AEC3. */
    int32_t echo_canceller;
    /** The acoustic delay found from the playback's times to the microphone's, ms; -1 until
        found, or while cancellation is off. */
    int32_t echo_delay_ms;
    /** Echo return loss enhancement over the last second of microphone audio the speakers
        played in: its level less the result's, dB (lower while the near end talks); 0 while off. */
    double echo_return_loss_enhancement_db;
    /** 10 ms microphone blocks cancelled, and of them those with no playback pushed for their
        times (deskaudio_encoder_push_playback() too late, or not at all). */
    uint64_t echo_blocks;
    uint64_t echo_blocks_without_playback;
} deskaudio_encoder_stats;

/* GROUP 7 */
/** A remote microphone's counts (deskaudio_remote_mic_get_stats()). */
typedef struct deskaudio_remote_mic_stats {
    /** Frames fed and taken. */
    uint64_t frames_fed;
    /** Frames dropped on feeding: no application recorded from the microphone then, or 640 ms were already waiting. */
    uint64_t frames_refused;
    /** Frames played as decoded. */
    uint64_t frames_played;
    /** Frames lost in transit, played concealed (in-band FEC, else Opus PLC). */
    uint64_t frames_concealed;
    /** Frames that came after their time, or twice: dropped. */
    uint64_t frames_late;
    /** Concealed frames inserted while a late frame was awaited (the delay grew by 10 ms). */
    uint64_t frames_inserted;
    /** Frames dropped to bring the delay back down (steady arrival, or a fast sender clock). */
    uint64_t frames_dropped;
    /** Times the sender went silent (its zero gate) and silence was played. */
    uint64_t gaps;
    /** The delay the jitter buffer aims at now, ms (10 to 300). */
    int32_t target_delay_ms;
    /** 1 while an application records from the microphone, else 0. */
    int32_t recorded;
    /** How long the frames played so far waited between being fed and being played, ms: median. */
    int32_t delay_p50_ms;
    /** The same, 99th percentile. */
    int32_t delay_p99_ms;
} deskaudio_remote_mic_stats;

/* GROUP 2 */
/**
 * What the library has done so far and how the sound is (deskaudio_get_stats()). Counts
 * run from the library's load, through stops and restarts. Levels are over the last
 * second; -120 stands for silence and for a source that is not captured.
 */
typedef struct deskaudio_stats {
    /** 10 ms frames cut from captured audio. */
    uint64_t frames_captured;
    /** Frames encoded and handed to the frame callback. */
    uint64_t frames_sent;
    /** Frames held back by the zero gate (silence). */
    uint64_t frames_gated;
    /**
     * Frames' worth of captured audio dropped because the library's worker fell more
     * than 0.5 s behind the audio server (a starved machine).
     */
    uint64_t frames_dropped_overflow;
    /**
     * Frames' worth of one source's audio dropped because it arrived as a backlog after
     * its time had been filled with silence in the app + mic mix or in the mix of chosen
     * applications' streams (through the PulseAudio API).
     */
    uint64_t frames_dropped_late;
    /** Frames lost because the Opus encoder failed on them. */
    uint64_t frames_dropped_encoder;
    /**
     * Frames' worth of a lagging source that the app + mic mix, or the mix of chosen
     * applications' streams (through the PulseAudio API), filled with silence.
     */
    uint64_t frames_silence_filled;
    /** AudioFrame bytes handed to the frame callback. */
    uint64_t bytes_sent;
    /**
     * Mean time (ns), over the last second's frames, from the arrival of the audio that
     * completed a frame to the start of the frame callback with it.
     */
    uint64_t callback_latency_mean_ns;
    /** Longest such time (ns) over the last second's frames. */
    uint64_t callback_latency_max_ns;
    /** Device-to-stream latency (ns) the server reports for app audio; -1 if unknown. */
    int64_t app_server_latency_ns;
    /** Device-to-stream latency (ns) the server reports for the microphone; -1 if unknown. */
    int64_t mic_server_latency_ns;
    /** Bits per second the encoder uses now. */
    int32_t bitrate;
    /** The backend capturing now: a deskaudio_backend_kind. */
    int32_t backend;
    /** App audio's peak level, dBFS. */
    float app_peak_dbfs;
    /** App audio's RMS level, dBFS (a full-scale sine: -3). */
    float app_rms_dbfs;
    /** The microphone's peak level, dBFS. */
    float mic_peak_dbfs;
    /** The microphone's RMS level, dBFS. */
    float mic_rms_dbfs;
    /**
     * Encoded frames dropped, oldest first, because the frame callback fell more than
     * 0.5 s (DESKAUDIO_QUEUE_FRAMES frames of 10 ms) behind; the next frame delivered carries
     * DESKAUDIO_FRAME_AFTER_LOSS.
     */
    uint64_t frames_dropped_slow_callback;
    /**
     * 10 ms frames' worth of audio the server's graph moved past without a capture stream,
     * whose thread was not run in time (a starved machine), each time rounded up: lost
     * before it reached the library, and queued as silence in its place (up to 0.25 s each
     * time) so that later frames keep their place on the timeline. PipeWire's native API
     * only (it tells); the log says when, as a warning.
     */
    uint64_t frames_skipped_by_server;
    /**
     * Graph cycles of exact zeros a capture stream got alone between two cycles of sound,
     * one cycle or a run of at most 256 samples (PipeWire's native API): a short pause in the
     * sound, or the server's own (on PipeWire 0.3.65 one consumer of a monitor gets such a run
     * now and then with nothing lost, the audio after it later than its capture times say).
     * Passed on as they came; counted so that a short silence can be told to be the server's.
     */
    uint64_t server_zero_cycles;
} deskaudio_stats;

/* GROUP 2 */
/**
 * Where a capture's sample clock stands on CLOCK_MONOTONIC (deskaudio_get_clock()): the
 * AudioFrames' sample_clock mapped to the time its sample sounded, as the last chunk of
 * audio placed it. Sample `s` sounded at
 * time_ns + (s - sample_clock) * nanoseconds_per_sample.
 */
typedef struct deskaudio_clock {
    /** A sample clock value, as AudioFrames count samples. */
    uint64_t sample_clock;
    /** CLOCK_MONOTONIC time (ns) at which that sample was played into the sink (app audio)
     * or captured by the device (the microphone). */
    uint64_t time_ns;
    /** Nanoseconds one sample lasts on CLOCK_MONOTONIC (20833.3 at 48 kHz when the sound
     * card's clock and the system's agree). */
    double nanoseconds_per_sample;
    /** The sound card's rate against CLOCK_MONOTONIC, parts per million (positive: its
     * samples last longer). */
    double rate_error_ppm;
    /** Root mean square of the server's timing reports' distance from the mapping, ns: how
     * far one report strays (the mapping, smoothed over many, strays less). */
    double jitter_ns;
    /** Times the mapping started again from a report far off it (a stall, a skip, a
     * restart). */
    uint32_t relocks;
    /** The source whose server clock this is: DESKAUDIO_FRAME_APP or DESKAUDIO_FRAME_MIC;
     * 0 when estimated from when the audio reached the library (no server clock yet, or
     * only the host's own PCM). */
    uint32_t source;
} deskaudio_clock;
/* END PUBLIC TYPES */

#endif
