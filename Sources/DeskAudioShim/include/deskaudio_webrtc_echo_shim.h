/* WebRTC's echo canceller (AEC3) as PipeWire ships it: the SPA plugin aec/libspa-aec-webrtc.so,
 * loaded with dlopen on first use and kept (never linked: libdeskaudio.so stays free of
 * libstdc++), through the SPA AEC interface's version 0 methods (init, run), which every
 * PipeWire since 0.3.39 has. Mono, 48 kHz, whole 10 ms blocks. One caller at a time per
 * canceller. Hidden: they never leave libdeskaudio.so. */
#ifndef DESKAUDIO_WEBRTC_ECHO_SHIM_H
#define DESKAUDIO_WEBRTC_ECHO_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define DESKAUDIO_WEBRTC_ECHO_HIDDEN __attribute__((visibility("hidden")))

typedef struct deskaudio_webrtc_echo deskaudio_webrtc_echo;

/* A canceller at `rate` Hz; NULL when the plugin is missing, will not load, or is built on a
 * WebRTC before AEC3 (webrtc-audio-processing 0.x, as Debian 12's PipeWire 0.3.65 is): then
 * `why` (of `why_size` bytes) says which. $SPA_PLUGIN_DIR (its first folder) moves the plugin,
 * as it does for PipeWire; by default it is beside libpipewire-0.3, in spa-0.2/aec/. */
DESKAUDIO_WEBRTC_ECHO_HIDDEN deskaudio_webrtc_echo *deskaudio_webrtc_echo_create(
    uint32_t rate, char *why, size_t why_size);

/* Cancels `samples` (whole 10 ms blocks) of `microphone` against `speakers`, what played as
 * the microphone heard it (the canceller finds the delay left between them), into `out`.
 * 0, or a negative errno. */
DESKAUDIO_WEBRTC_ECHO_HIDDEN int deskaudio_webrtc_echo_run(
    deskaudio_webrtc_echo *echo, const float *microphone, const float *speakers, float *out, uint32_t samples);

/* Frees a canceller; NULL is ignored. The plugin stays loaded. */
DESKAUDIO_WEBRTC_ECHO_HIDDEN void deskaudio_webrtc_echo_destroy(deskaudio_webrtc_echo *echo);

#endif
