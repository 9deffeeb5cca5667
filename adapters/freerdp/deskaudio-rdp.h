/*
 * deskaudio-rdp: DeskAudio's sound in RDP clients, and their microphones on the host, for a
 * host built on FreeRDP 3's server library (libdeskaudio-rdp.so, pkg-config deskaudio-rdp).
 *
 * One deskaudio_rdp_audio per connected peer:
 *   - audio output (MS-RDPEA, the static "rdpsnd" channel, or the dynamic one where the client
 *     joined no static one or the options ask for it): offers Opus 48 kHz stereo (the AudioFrames' own packets, passed
 *     through; surround frames folded to stereo and encoded again) and 16-bit PCM 48 kHz stereo
 *     (decoded by the library's decoder), and sends in the first of them the client lists;
 *     one Wave2 PDU per AudioFrame, wTimeStamp our milliseconds, dwAudioTimeStamp the frame's
 *     capture time in ms;
 *   - the client's wave confirmations: a frame is dropped, and counted, while the oldest block
 *     the client has not confirmed was sent more than max_late_ms ago;
 *   - audio input (MS-RDPEAI, the dynamic "AUDIO_INPUT" channel), when a microphone name is
 *     given: the client's 16-bit PCM (48 or 44.1 kHz, mono or stereo, 10 ms packets) becomes
 *     AudioFrames (deskaudio_encoder) fed to a deskaudio_remote_mic of that name, which host
 *     applications record from.
 *
 * Threads: deskaudio_rdp_audio_new(), _check() and _free() on the peer's thread;
 * deskaudio_rdp_audio_send() from any one thread at a time (the capture's frame callback);
 * FreeRDP's rdpsnd and audin threads call into the adapter, which serializes with its own lock.
 * docs/rdp.md has the host's few lines.
 */
#ifndef DESKAUDIO_RDP_H
#define DESKAUDIO_RDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <deskaudio.h>
#include <freerdp/peer.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What libdeskaudio-rdp.so exports (it is built with hidden visibility otherwise). */
#define DESKAUDIO_RDP_EXPORT __attribute__((visibility("default")))

/** Codecs (deskaudio_rdp_options.codecs, deskaudio_rdp_stats.codec). */
#define DESKAUDIO_RDP_OPUS 1
#define DESKAUDIO_RDP_PCM 2

/** What deskaudio_rdp_audio_new() takes. Zero it, set `size`, then what you need. */
typedef struct deskaudio_rdp_options {
    /** sizeof(deskaudio_rdp_options). */
    size_t size;
    /** DESKAUDIO_RDP_OPUS and/or DESKAUDIO_RDP_PCM: the formats offered; 0: both. */
    uint32_t codecs;
    /** Frames are dropped while the oldest block in flight was sent longer ago than this, ms;
     *  0: 200. */
    uint32_t max_late_ms;
    /** Name of the remote microphone the client's microphone feeds (deskaudio_remote_mic_create());
     *  NULL: the audio input channel is not opened. */
    const char *microphone_name;
    /** Its description; NULL: the name. */
    const char *microphone_description;
    /** true: audio output on the dynamic channel (AUDIO_PLAYBACK_DVC) once the client's dynamic
     *  channels are ready, even where it joined the static one (for a client that offers no
     *  dynamic one, the static one is never opened then); false: the static one where joined. */
    bool dynamic_channel;
} deskaudio_rdp_options;

/** A peer's counts (deskaudio_rdp_audio_get_stats()). */
typedef struct deskaudio_rdp_stats {
    /** DESKAUDIO_RDP_OPUS or _PCM once the client chose; 0 before; -1 if it lists neither. */
    int32_t codec;
    /** The client's audio protocol version (wVersion), 0 before it said. */
    int32_t client_version;
    /** Frames sent as Wave2 PDUs. */
    uint64_t frames_sent;
    /** Frames not sent while the client was more than max_late_ms behind. */
    uint64_t frames_dropped_late;
    /** Frames that came before the client chose a format (or when it chose none). */
    uint64_t frames_before_format;
    /** Bytes that were no AudioFrame, or frames FreeRDP failed to send. */
    uint64_t frames_invalid;
    uint64_t frames_failed;
    /** Wave confirmations read. */
    uint64_t confirmations;
    /** Blocks in flight now, and the oldest one's age, ms. */
    uint32_t blocks_in_flight;
    uint32_t oldest_in_flight_ms;
    /** The last block's time from sending to the client's arrival confirmation, ms; -1 before. */
    int32_t arrival_ms;
    /** The client's last reported delay from a block's arrival to its speakers, ms; -1 before. */
    int32_t client_render_ms;
    /** Microphone: 1 once the client opened it; the PCM packets taken, and the AudioFrames fed
     *  to the remote microphone. */
    int32_t microphone_open;
    uint64_t microphone_packets;
    uint64_t microphone_frames;
    /** Microphone packets refused: not whole samples, or the encoder refused them. */
    uint64_t microphone_invalid;
} deskaudio_rdp_stats;

/** One peer's audio channels. */
typedef struct deskaudio_rdp_audio deskaudio_rdp_audio;

/**
 * Makes a peer's audio channels, on the peer's thread after it activated (its static channels
 * are joined then); channels open in deskaudio_rdp_audio_check(), called here once. `vcm` is the
 * peer's virtual channel manager (WTSOpenServerA()); `options` NULL: the defaults. NULL on
 * failure (a bad option, no memory), with a WLog error.
 */
DESKAUDIO_RDP_EXPORT deskaudio_rdp_audio *deskaudio_rdp_audio_new(freerdp_peer *peer, HANDLE vcm, const deskaudio_rdp_options *options);

/**
 * Opens what is ready: the audio output (static at once; dynamic, and the microphone, once the
 * client's dynamic channels are ready). Call on the peer's thread after each
 * WTSVirtualChannelManagerCheckFileDescriptor(). DESKAUDIO_OK, or
 * DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL.
 */
DESKAUDIO_RDP_EXPORT int32_t deskaudio_rdp_audio_check(deskaudio_rdp_audio *audio);

/**
 * Sends one AudioFrame (as a capture's frame callback hands it) to the client: DESKAUDIO_OK,
 * also when it is held back (no format yet, the client late: counted); a DESKAUDIO_ERROR_FRAME_*
 * code for bytes that are no AudioFrame; DESKAUDIO_ERROR_STREAM when FreeRDP fails to send.
 */
DESKAUDIO_RDP_EXPORT int32_t deskaudio_rdp_audio_send(deskaudio_rdp_audio *audio, const uint8_t *frame, size_t len);

/** Copies the counts: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT (NULL, size 0). */
DESKAUDIO_RDP_EXPORT int32_t deskaudio_rdp_audio_get_stats(deskaudio_rdp_audio *audio, deskaudio_rdp_stats *stats, size_t stats_size);

/**
 * Closes the channels, joins FreeRDP's audio threads, removes the remote microphone and frees;
 * NULL is ignored. On the peer's thread, before the vcm is closed, and not while a
 * deskaudio_rdp_audio_send() on it may run (take it out of your frame fan-out first).
 */
DESKAUDIO_RDP_EXPORT void deskaudio_rdp_audio_free(deskaudio_rdp_audio *audio);

#ifdef __cplusplus
}
#endif

#endif
