/* tap-trace: when a PulseAudio server hands per-application record streams their audio.
 *
 *   tap-trace SECONDS shared|own
 *
 * Records, through libpulse alone, the default sink's whole monitor and, for each sink input
 * whose application.name starts with "Tone", the same monitor limited to that input
 * (pa_stream_set_monitor_stream, as DeskAudio's PulseAppCapture and pavucontrol's meters do),
 * all with 10 ms fragments. "shared": every stream on one client connection; "own": each
 * application's stream on a client connection of its own. Prints one line per read:
 *
 *   TIME_MS STREAM MS_READ A440 A1000 A1500
 *
 * (TIME_MS since start on CLOCK_MONOTONIC; STREAM -1 for the whole monitor, else the sink
 * input's index; the amplitudes of 440, 1000 and 1500 Hz in the left channel of what was
 * read), and "TIME_MS new INDEX NAME" when an application's stream is opened. So the whole
 * monitor says when each tone truly played, and each application's stream when it was
 * handed over. Benchmarks/pulse-taps/run plays the tones and sums the lines up.
 */
#include <math.h>
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_INPUTS 1024

struct trace {
    pa_mainloop *loop;
    pa_context *context;
    int own_clients;
    double start_ms;
    char monitor[256];
    char opened[MAX_INPUTS];
};

struct tap {
    struct trace *trace;
    long input; /* -1: the whole monitor */
};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The amplitude of `frequency` in the left channel of `frames` stereo frames. */
static double amplitude(const float *samples, size_t frames, double frequency) {
    double re = 0, im = 0;
    for (size_t i = 0; i < frames; i++) {
        double phase = 2 * M_PI * frequency * (double)i / 48000;
        re += samples[2 * i] * cos(phase);
        im += samples[2 * i] * sin(phase);
    }
    return frames ? 2 * sqrt(re * re + im * im) / (double)frames : 0;
}

static void on_read(pa_stream *stream, size_t readable, void *userdata) {
    struct tap *tap = userdata;
    double frames = 0, levels[3] = {0, 0, 0};
    const double frequencies[3] = {440, 1000, 1500};
    const void *data;
    size_t bytes;
    (void)readable;
    while (pa_stream_readable_size(stream) > 0 && pa_stream_peek(stream, &data, &bytes) == 0 && bytes > 0) {
        if (data)
            for (int k = 0; k < 3; k++) levels[k] = fmax(levels[k], amplitude(data, bytes / 8, frequencies[k]));
        frames += (double)bytes / 8;
        pa_stream_drop(stream);
    }
    printf("%.1f %ld %.1f %.3f %.3f %.3f\n", now_ms() - tap->trace->start_ms, tap->input, frames / 48,
           levels[0], levels[1], levels[2]);
}

static void record(pa_context *context, struct tap *tap) {
    pa_sample_spec spec = {PA_SAMPLE_FLOAT32LE, 48000, 2};
    pa_buffer_attr attributes = {(uint32_t)-1, (uint32_t)-1, (uint32_t)-1, (uint32_t)-1, 480 * 8};
    pa_stream *stream = pa_stream_new(context, "tap-trace", &spec, NULL);
    if (!stream) return;
    if (tap->input >= 0) pa_stream_set_monitor_stream(stream, (uint32_t)tap->input);
    pa_stream_set_read_callback(stream, on_read, tap);
    pa_stream_connect_record(stream, tap->trace->monitor, &attributes,
                             PA_STREAM_ADJUST_LATENCY | PA_STREAM_DONT_MOVE);
}

static void on_own_client_state(pa_context *context, void *userdata) {
    if (pa_context_get_state(context) == PA_CONTEXT_READY) record(context, userdata);
}

static void on_sink_input(pa_context *context, const pa_sink_input_info *input, int eol, void *userdata) {
    struct trace *trace = userdata;
    const char *name = input ? pa_proplist_gets(input->proplist, PA_PROP_APPLICATION_NAME) : NULL;
    (void)eol;
    if (!name || strncmp(name, "Tone", 4) != 0 || input->index >= MAX_INPUTS || trace->opened[input->index]) return;
    trace->opened[input->index] = 1;
    printf("%.1f new %u %s\n", now_ms() - trace->start_ms, input->index, name);
    struct tap *tap = malloc(sizeof *tap);
    *tap = (struct tap){trace, (long)input->index};
    if (!trace->own_clients) {
        record(context, tap);
        return;
    }
    pa_context *own = pa_context_new(pa_mainloop_get_api(trace->loop), "tap-trace app");
    pa_context_set_state_callback(own, on_own_client_state, tap);
    pa_context_connect(own, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL);
}

static void on_event(pa_context *context, pa_subscription_event_type_t event, uint32_t index, void *userdata) {
    if ((event & PA_SUBSCRIPTION_EVENT_TYPE_MASK) != PA_SUBSCRIPTION_EVENT_REMOVE)
        pa_operation_unref(pa_context_get_sink_input_info(context, index, on_sink_input, userdata));
}

static void on_sink(pa_context *context, const pa_sink_info *sink, int eol, void *userdata) {
    struct trace *trace = userdata;
    (void)eol;
    if (!sink) return;
    snprintf(trace->monitor, sizeof trace->monitor, "%s", sink->monitor_source_name);
    struct tap *whole = malloc(sizeof *whole);
    *whole = (struct tap){trace, -1};
    record(context, whole);
    pa_context_set_subscribe_callback(context, on_event, trace);
    pa_operation_unref(pa_context_subscribe(context, PA_SUBSCRIPTION_MASK_SINK_INPUT, NULL, NULL));
    printf("ready\n");
}

static void on_server(pa_context *context, const pa_server_info *server, void *userdata) {
    pa_operation_unref(pa_context_get_sink_info_by_name(context, server->default_sink_name, on_sink, userdata));
}

static void on_state(pa_context *context, void *userdata) {
    pa_context_state_t state = pa_context_get_state(context);
    if (state == PA_CONTEXT_READY) pa_operation_unref(pa_context_get_server_info(context, on_server, userdata));
    if (state == PA_CONTEXT_FAILED) {
        fprintf(stderr, "tap-trace: %s\n", pa_strerror(pa_context_errno(context)));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "shared") && strcmp(argv[2], "own"))) {
        fprintf(stderr, "usage: tap-trace SECONDS shared|own\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    static struct trace trace;
    trace.own_clients = strcmp(argv[2], "own") == 0;
    trace.start_ms = now_ms();
    trace.loop = pa_mainloop_new();
    trace.context = pa_context_new(pa_mainloop_get_api(trace.loop), "tap-trace");
    pa_context_set_state_callback(trace.context, on_state, &trace);
    if (pa_context_connect(trace.context, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
        fprintf(stderr, "tap-trace: no server\n");
        return 1;
    }
    while (now_ms() - trace.start_ms < atof(argv[1]) * 1000) pa_mainloop_iterate(trace.loop, 1, NULL);
    return 0;
}
