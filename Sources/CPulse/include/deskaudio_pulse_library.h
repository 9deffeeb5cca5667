/* libpulse, loaded with dlopen the first time the PulseAudio backend is used, so a host on
 * PipeWire never maps libpulse and the libraries it pulls in (about 2.5 MB). The library
 * calls libpulse only through the function table below (the way Mozilla's cubeb does).
 * Hidden: nothing here leaves libdeskaudio.so. */
#ifndef DESKAUDIO_PULSE_LIBRARY_H
#define DESKAUDIO_PULSE_LIBRARY_H

#include <pulse/pulseaudio.h>
#include <stddef.h>

/* Every libpulse function DeskAudio calls. */
#define DESKAUDIO_PULSE_FUNCTIONS(X) \
    X(pa_channel_map_init_stereo) \
    X(pa_context_connect) \
    X(pa_context_disconnect) \
    X(pa_context_errno) \
    X(pa_context_get_server_info) \
    X(pa_context_get_sink_info_by_index) \
    X(pa_context_get_sink_info_by_name) \
    X(pa_context_get_sink_info_list) \
    X(pa_context_get_module_info_list) \
    X(pa_context_get_sink_input_info) \
    X(pa_context_get_sink_input_info_list) \
    X(pa_context_get_source_info_by_name) \
    X(pa_context_get_source_info_list) \
    X(pa_context_get_state) \
    X(pa_context_load_cookie_from_file) \
    X(pa_context_load_module) \
    X(pa_context_move_sink_input_by_index) \
    X(pa_context_move_source_output_by_name) \
    X(pa_context_new_with_proplist) \
    X(pa_context_set_state_callback) \
    X(pa_context_set_subscribe_callback) \
    X(pa_context_subscribe) \
    X(pa_context_unload_module) \
    X(pa_context_unref) \
    X(pa_operation_get_state) \
    X(pa_operation_unref) \
    X(pa_proplist_free) \
    X(pa_proplist_gets) \
    X(pa_proplist_new) \
    X(pa_proplist_sets) \
    X(pa_stream_begin_write) \
    X(pa_stream_connect_playback) \
    X(pa_stream_connect_record) \
    X(pa_stream_cork) \
    X(pa_stream_disconnect) \
    X(pa_stream_drop) \
    X(pa_stream_get_device_name) \
    X(pa_stream_get_index) \
    X(pa_stream_get_latency) \
    X(pa_stream_get_state) \
    X(pa_stream_get_timing_info) \
    X(pa_stream_new) \
    X(pa_stream_peek) \
    X(pa_stream_readable_size) \
    X(pa_stream_set_monitor_stream) \
    X(pa_stream_set_moved_callback) \
    X(pa_stream_set_read_callback) \
    X(pa_stream_set_state_callback) \
    X(pa_stream_set_write_callback) \
    X(pa_stream_unref) \
    X(pa_stream_update_timing_info) \
    X(pa_stream_write) \
    X(pa_strerror) \
    X(pa_threaded_mainloop_free) \
    X(pa_threaded_mainloop_get_api) \
    X(pa_threaded_mainloop_in_thread) \
    X(pa_threaded_mainloop_lock) \
    X(pa_threaded_mainloop_new) \
    X(pa_threaded_mainloop_start) \
    X(pa_threaded_mainloop_stop) \
    X(pa_threaded_mainloop_unlock) \

/* One pointer per function, each named as the function it points to. */
struct deskaudio_pulse_functions {
#define DESKAUDIO_PULSE_POINTER(name) __typeof__(name) *_Nonnull name;
    DESKAUDIO_PULSE_FUNCTIONS(DESKAUDIO_PULSE_POINTER)
#undef DESKAUDIO_PULSE_POINTER
};

/* Loads libpulse.so.0 and looks up every function, once per process (later calls return the
 * first call's result). Returns 0, or -1 with the reason in `error` (NUL-terminated,
 * truncated to `size`). Thread-safe. */
__attribute__((visibility("hidden"))) int deskaudio_pulse_load(char *_Nonnull error, size_t size);

/* The function table; only after deskaudio_pulse_load returned 0. */
__attribute__((visibility("hidden"))) const struct deskaudio_pulse_functions *_Nonnull deskaudio_pulse(void);

#endif
