/* stamp-error: how far a frame's capture_time_ns is from the time its sound truly reached
 * the sink, and how long from then to the frame callback, with a reference taken from the
 * audio server's own clock instead of a player's reported latency.
 *
 *   stamp-error [CLICKS] [INTERVAL_MS] [FRAME_US] [QUANTUM] [CAPTURE_QUANTUM]
 *                                           (defaults 100, 200, 10000, 256, 0)
 *
 * It captures app audio through libdeskaudio (backend from DESKAUDIO_BACKEND) and plays into
 * the default sink through its own native PipeWire stream: silence, and about every
 * INTERVAL_MS a 2 kHz burst starting at its peak. Each burst comes PHASE_STEP samples later
 * after the one before than INTERVAL_MS says, so that the bursts fall at every place in the
 * frame and in the graph cycle: at a whole number of frames apart (200 ms is 20 frames of
 * 10 ms) every burst of a run met the frame grid at the same place, set by when the capture
 * and the player happened to start, and a run's latency said where that was (p50 5.9 to
 * 12.5 ms from run to run, docs/performance.md). In the player's process callback the
 * stream's pw_time says when the buffer being filled reaches the sink: `now` (the graph
 * cycle's start, on CLOCK_MONOTONIC) plus `delay`, `buffered` and `queued` samples; plus the
 * burst's offset in the buffer, that is the burst's first sample's true time at the sink. The frame callback decodes each
 * frame with the library's decoder and finds the burst's first sample (the first above half
 * its amplitude); the decoder's output lags its input by the encoder's pre-skip, so that
 * sample's time by the frame is capture_time_ns + (index - pre_skip) samples. Prints, per
 * burst, the stamp error (that minus the true time) and the latency (the callback's arrival
 * minus the true time), then a summary line, the worst distance of consecutive frames' capture
 * times from their nominal length within continuous runs (from 2 s in, once the clock has
 * locked; a frame flagged DESKAUDIO_FRAME_TIME_STEP, where the server's clock stepped against
 * the samples and the library says so, ends a run and is counted as time_steps; over_0.05ms
 * counts the frames more than 0.05 ms off), the bursts after which the capture's sample
 * count against the player's moved (sample_slips: audio the capture path lost or gained
 * between two bursts, and how many samples in all; each burst's line shows the count), and
 * deskaudio_get_clock()'s mapping (each burst's line ends with its true time, true_ns, for
 * other recorders of the same sink to be judged against):
 *   stamp_ms backend=pipewire frame_us=10000 quantum=256 capture_quantum=0 n=200 unreferenced=0 missed=0
 *     error_p50=0.000 error_abs_p99=0.000 error_min=-0.000 error_max=0.000 latency_min=3.10
 *     latency_p50=10.03 latency_p99=16.40 latency_max=17.26
 * (n: bursts heard and judged; unreferenced: heard before the player had their true time, so
 * not judged; missed: never heard)
 *   steps n=1200 worst_ms=0.0001 over_0.05ms=0 time_steps=0 largest_time_step_ms=0.0000 sample_slips=0
 *     slipped_samples=0
 *   clock source=2 jitter_ms=0.000 rate_ppm=-0.1 relocks=0
 * and, as they come, the first 8 time steps (all of them, and each frame more than 0.05 ms
 * off, with STAMP_FRAMES=1): "time step 3.210 s after the first: +0.1234 ms against the
 * sample clock".
 * QUANTUM is the node.latency the player asks for (samples at 48 kHz): the graph's cycle, and
 * with it how long a frame's last sample waits for its cycle to reach the capture.
 * CAPTURE_QUANTUM is the quantum the library's PipeWire capture asks for
 * (deskaudio_set_pipewire_quantum(): 0 the library's default, the frame's length; 32 to 480
 * samples): the graph runs at the smaller of the two. The PulseAudio backend ignores it.
 * A PipeWire server is needed (PipeWire native or pipewire-pulse, for the library's either
 * backend), unless STAMP_PLAYER=pulse: then the player is a PulseAudio playback stream, for a
 * plain PulseAudio daemon, which has no graph clock. Its reference is the sink's own account
 * of its stream: every 10 ms the player asks for its timing info (pa_stream_update_timing_info)
 * and takes the read index and the sink's latency in it as current at the midpoint of the
 * request's round trip (CLOCK_MONOTONIC before and after; replies that took over 1 ms are not
 * used): a sample s plays at that time + (s - read_index) / rate + sink_usec. On a null sink,
 * whose "playing" is its timer's clock and whose monitor hands each block over as it renders
 * it, that is when the sample is played, to within half the round trip (the summary's
 * reference_rtt_us line: its p50 and max over the replies used). QUANTUM is not used then. */
#include <deskaudio.h>

#include <math.h>
#include <pipewire/pipewire.h>
#include <pulse/pulseaudio.h>
#include <spa/param/audio/format-utils.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000
#define BURST_SAMPLES 480
#define AMPLITUDE 0.6f
#define MAX_CLICKS 10000
/* Samples each burst moves against the frame grid and the graph cycle (prime: over a run the
 * bursts fall at every 53rd sample of a 480- or 240-sample frame and a 256-sample cycle). */
#define PHASE_STEP 53

struct probe {
    struct pw_thread_loop *loop;
    struct pw_stream *player;
    struct spa_hook listener;
    /* STAMP_PLAYER=pulse: the PulseAudio player, and its timing replies' round trips. */
    pa_threaded_mainloop *pulse_loop;
    pa_context *pulse_context;
    pa_stream *pulse_player;
    double rtts_us[100000];
    int rtts;
    uint64_t played;            /* samples the player has written */
    uint64_t next_click_at;     /* the player's sample index of the next burst */
    uint64_t interval_samples;
    int clicks_played, clicks_wanted;
    _Atomic long long pending_true_ns; /* true sink time of the burst not yet heard; 0: none */
    _Atomic long long pending_sample;  /* its first sample's index in what the player played */
    /* Samples of the capture's stream (sample_clock) before a burst, less the player's before
     * it, at the last burst heard: a change from burst to burst is audio the capture lost or
     * gained between them (a skip), told apart from a timing error. */
    long long last_offset;
    int have_offset;
    long sample_slips, slipped_samples;
    _Atomic int pending_click;  /* the burst being played, -1 before the first */
    _Atomic int heard_click;    /* the last burst heard, -1 before the first */
    deskaudio_decoder *decoder;
    int32_t pre_skip;
    double errors_ms[MAX_CLICKS], latencies_ms[MAX_CLICKS];
    _Atomic int heard;          /* bursts heard with their true time: errors_ms, latencies_ms */
    int unreferenced;           /* bursts heard without one (the delivery thread's) */
    /* Consecutive frames of a continuous run (in sequence, no gap flag): the worst distance
     * of their capture times' difference from the frames' nominal length, ns. */
    uint64_t first_sample_clock, last_sample_clock, last_capture_ns;
    uint32_t last_sequence;
    int have_last;
    double worst_step_ns;
    long steps, steps_over, time_steps; /* steps_over: more than 0.05 ms off the frame */
    double largest_time_step_ns;        /* the largest flagged step, either way */
};

static struct probe probe;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The player's next `frames` samples (stereo float): silence, and a burst where one is due.
 * Returns the index in `out` where a burst starts, or -1; that burst is the pending one, its
 * true time for the player to set. */
static long fill(float *out, uint32_t frames) {
    long burst_at = -1;
    for (uint32_t i = 0; i < frames; i++) {
        uint64_t sample = probe.played + i;
        float value = 0;
        if (probe.clicks_played < probe.clicks_wanted && sample >= probe.next_click_at) {
            uint64_t into = sample - probe.next_click_at;
            if (into == 0) {
                burst_at = i;
                atomic_store(&probe.pending_true_ns, 0);
                atomic_store(&probe.pending_click, probe.clicks_played);
                atomic_store(&probe.pending_sample, (long long)sample);
            }
            /* cos: the burst starts at its peak, a sharp onset for the detector. */
            value = AMPLITUDE * cosf(2.0f * 3.14159265f * 2000.0f * (float)into / RATE);
            if (into + 1 == BURST_SAMPLES) {
                probe.clicks_played++;
                probe.next_click_at += probe.interval_samples + PHASE_STEP;
            }
        }
        out[2 * i] = out[2 * i + 1] = value;
    }
    probe.played += frames;
    return burst_at;
}

/* PipeWire's data thread: fill the next buffer, a burst where one is due. */
static void on_process(void *data) {
    (void)data;
    struct pw_buffer *b = pw_stream_dequeue_buffer(probe.player);
    if (!b) return;
    struct spa_data *d = &b->buffer->datas[0];
    float *out = d->data;
    if (!out) return;
    uint32_t frames = d->maxsize / (2 * sizeof(float));
    if (b->requested && b->requested < frames) frames = (uint32_t)b->requested;
    struct pw_time time;
    int timed = pw_stream_get_time_n(probe.player, &time, sizeof time) == 0 && time.rate.denom > 0;
    long i = fill(out, frames);
    if (i >= 0 && timed) {
        double per_tick = 1e9 * time.rate.num / time.rate.denom;
        /* queued: the samples of buffers queued before this one (b->size below). */
        long long true_ns = time.now + (long long)((double)(time.delay + (int64_t)time.buffered) * per_tick) +
                            (long long)((double)(time.queued + (uint64_t)i) * 1e9 / RATE);
        if (getenv("STAMP_DEBUG"))
            fprintf(stderr, "player: now %lld delay %lld buffered %llu queued %llu ticks %llu i %ld frames %u\n",
                    (long long)time.now, (long long)time.delay, (unsigned long long)time.buffered,
                    (unsigned long long)time.queued, (unsigned long long)time.ticks, i, frames);
        atomic_store(&probe.pending_true_ns, true_ns);
    }
    d->chunk->offset = 0;
    d->chunk->stride = 2 * sizeof(float);
    d->chunk->size = frames * 2 * sizeof(float);
    b->size = frames; /* counted in samples in pw_time.queued */
    pw_stream_queue_buffer(probe.player, b);
}

static const struct pw_stream_events player_events = {
    PW_VERSION_STREAM_EVENTS,
    .process = on_process,
};

/* The library's delivery thread. */
static void on_frame(const uint8_t *frame, size_t len, void *user_data) {
    (void)user_data;
    long long arrived = now_ns();
    deskaudio_frame_info info;
    if (deskaudio_parse_frame(frame, len, &info, sizeof info) != DESKAUDIO_OK) return;
    if (!probe.have_last) probe.first_sample_clock = info.sample_clock;
    /* The library flags the frame where the server's clock stepped against the samples (a
     * quantum skipped or changed): the run is not continuous there, and the step is counted
     * apart. */
    int stepped = (info.flags & DESKAUDIO_FRAME_TIME_STEP) != 0;
    if (stepped && probe.have_last) {
        probe.time_steps++;
        double moved = (double)info.capture_time_ns - (double)probe.last_capture_ns -
                       (double)(info.sample_clock - probe.last_sample_clock) * 1e9 / RATE;
        if (fabs(moved) > probe.largest_time_step_ns) probe.largest_time_step_ns = fabs(moved);
        /* Where and how far (the first 8, all with STAMP_FRAMES=1): what a check of "no
         * step" that fails has to show. */
        if (probe.time_steps <= 8 || getenv("STAMP_FRAMES"))
            printf("time step %.3f s after the first: %+.4f ms against the sample clock\n",
                   (double)(info.sample_clock - probe.first_sample_clock) / RATE, moved / 1e6);
    }
    /* Judged once the clock has locked: 2 s into the capture. */
    if (probe.have_last && !stepped && info.sequence == probe.last_sequence + 1 &&
        !(info.flags & DESKAUDIO_FRAME_AFTER_GAP) && info.sample_clock == probe.last_sample_clock + info.frame_samples &&
        info.sample_clock >= probe.first_sample_clock + 2 * RATE) {
        double step = (double)info.capture_time_ns - (double)probe.last_capture_ns;
        double beyond = step - (double)info.frame_samples * 1e9 / RATE; /* step less the frame's length */
        double off = fabs(beyond);
        if (off > probe.worst_step_ns) probe.worst_step_ns = off;
        if (off > 50000) {
            probe.steps_over++;
            /* STAMP_FRAMES=1: each frame off its length by more than 0.05 ms, to place it. */
            if (getenv("STAMP_FRAMES"))
                printf("frame %.3f s after the first: %+.4f ms off its length\n",
                       (double)(info.sample_clock - probe.first_sample_clock) / RATE,
                       beyond / 1e6);
        }
        probe.steps++;
    }
    probe.have_last = 1;
    probe.last_sequence = info.sequence;
    probe.last_sample_clock = info.sample_clock;
    probe.last_capture_ns = info.capture_time_ns;
    float pcm[2 * 960];
    int32_t samples = deskaudio_decoder_decode(probe.decoder, frame, len, pcm, 960);
    int click = atomic_load(&probe.pending_click);
    if (samples <= 0 || click < 0 || click == atomic_load(&probe.heard_click)) return;
    long long true_ns = atomic_load(&probe.pending_true_ns);
    for (int32_t i = 0; i < samples; i++) {
        if (fabsf(pcm[2 * i]) < AMPLITUDE / 2) continue;
        if (true_ns == 0) {
            /* Heard, but the player has no true time for it (STAMP_PLAYER=pulse: no timing
             * reply answered within 1 ms while it was pending): the capture's part is done. */
            probe.unreferenced++;
            printf("burst %d: heard, no reference\n", click);
            atomic_store(&probe.heard_click, click);
            return;
        }
        double stamped_ns = (double)info.capture_time_ns + (double)(i - probe.pre_skip) * 1e9 / RATE;
        int n = atomic_load(&probe.heard);
        if (n < MAX_CLICKS) {
            probe.errors_ms[n] = (stamped_ns - (double)true_ns) / 1e6;
            probe.latencies_ms[n] = (double)(arrived - true_ns) / 1e6;
            long long offset = (long long)info.sample_clock + i - probe.pre_skip - atomic_load(&probe.pending_sample);
            if (probe.have_offset && llabs(offset - probe.last_offset) > 2) {
                probe.sample_slips++;
                probe.slipped_samples += offset - probe.last_offset;
            }
            probe.last_offset = offset;
            probe.have_offset = 1;
            printf("burst %d: stamp error %+.3f ms, latency %.2f ms, capture-player samples %lld, true_ns %lld\n",
                   click, probe.errors_ms[n], probe.latencies_ms[n], offset, true_ns);
            atomic_store(&probe.heard, n + 1);
        }
        atomic_store(&probe.heard_click, click);
        atomic_store(&probe.pending_true_ns, 0);
        return;
    }
}

/* STAMP_PLAYER=pulse. The mainloop's thread: the stream asks for `bytes` more. */
static void on_pulse_write(pa_stream *stream, size_t bytes, void *data) {
    (void)data;
    while (bytes >= 2 * sizeof(float)) {
        void *buffer = NULL;
        size_t size = bytes;
        if (pa_stream_begin_write(stream, &buffer, &size) < 0 || !buffer || size < 2 * sizeof(float)) return;
        uint32_t frames = (uint32_t)(size / (2 * sizeof(float)));
        fill(buffer, frames);
        if (pa_stream_write(stream, buffer, frames * 2 * sizeof(float), NULL, 0, PA_SEEK_RELATIVE) < 0) return;
        bytes -= frames * 2 * sizeof(float);
    }
}

static void on_pulse_signal(pa_stream *stream, int success, void *data) {
    (void)stream;
    *(int *)data = success ? 1 : -1;
    pa_threaded_mainloop_signal(probe.pulse_loop, 0);
}

static void on_pulse_context_state(pa_context *context, void *data) {
    (void)context;
    (void)data;
    pa_threaded_mainloop_signal(probe.pulse_loop, 0);
}

static void on_pulse_stream_state(pa_stream *stream, void *data) {
    (void)stream;
    (void)data;
    pa_threaded_mainloop_signal(probe.pulse_loop, 0);
}

/* The main thread, every 10 ms: the pending burst's time at the sink from the stream's timing
 * info, current at the midpoint of the request's round trip (see the top of the file). */
static void pulse_reference(void) {
    pa_threaded_mainloop_lock(probe.pulse_loop);
    int done = 0;
    long long before = now_ns();
    pa_operation *operation = pa_stream_update_timing_info(probe.pulse_player, on_pulse_signal, &done);
    while (operation && done == 0) pa_threaded_mainloop_wait(probe.pulse_loop);
    long long after = now_ns();
    if (operation) pa_operation_unref(operation);
    const pa_timing_info *timing = done == 1 ? pa_stream_get_timing_info(probe.pulse_player) : NULL;
    int click = atomic_load(&probe.pending_click);
    if (timing && !timing->read_index_corrupt && after - before <= 1000000) {
        if (probe.rtts < (int)(sizeof probe.rtts_us / sizeof probe.rtts_us[0]))
            probe.rtts_us[probe.rtts++] = (double)(after - before) / 1e3;
        if (click >= 0 && click != atomic_load(&probe.heard_click)) {
            long long read = timing->read_index / (long long)(2 * sizeof(float));
            long long sample = atomic_load(&probe.pending_sample);
            long long true_ns = (before + after) / 2 + (long long)((double)(sample - read) * 1e9 / RATE) +
                                (long long)timing->sink_usec * 1000;
            atomic_store(&probe.pending_true_ns, true_ns);
        }
    }
    pa_threaded_mainloop_unlock(probe.pulse_loop);
}

/* Connects the PulseAudio player to the default sink, asking for 20 ms of buffer; 0 or -1. */
static int pulse_start(void) {
    probe.pulse_loop = pa_threaded_mainloop_new();
    if (!probe.pulse_loop || pa_threaded_mainloop_start(probe.pulse_loop) < 0) return -1;
    pa_threaded_mainloop_lock(probe.pulse_loop);
    probe.pulse_context = pa_context_new(pa_threaded_mainloop_get_api(probe.pulse_loop), "stamp-error");
    pa_context_set_state_callback(probe.pulse_context, on_pulse_context_state, NULL);
    int ok = pa_context_connect(probe.pulse_context, NULL, PA_CONTEXT_NOFLAGS, NULL) == 0;
    pa_context_state_t context_state;
    while (ok && (context_state = pa_context_get_state(probe.pulse_context)) != PA_CONTEXT_READY) {
        if (!PA_CONTEXT_IS_GOOD(context_state)) ok = 0;
        else pa_threaded_mainloop_wait(probe.pulse_loop);
    }
    if (ok) {
        pa_sample_spec spec = {.format = PA_SAMPLE_FLOAT32LE, .rate = RATE, .channels = 2};
        probe.pulse_player = pa_stream_new(probe.pulse_context, "stamp-error", &spec, NULL);
        pa_stream_set_state_callback(probe.pulse_player, on_pulse_stream_state, NULL);
        pa_stream_set_write_callback(probe.pulse_player, on_pulse_write, NULL);
        pa_buffer_attr attributes = {.maxlength = (uint32_t)-1, .tlength = (uint32_t)pa_usec_to_bytes(20000, &spec),
                                     .prebuf = (uint32_t)-1, .minreq = (uint32_t)-1, .fragsize = (uint32_t)-1};
        ok = pa_stream_connect_playback(probe.pulse_player, NULL, &attributes, PA_STREAM_ADJUST_LATENCY, NULL,
                                        NULL) == 0;
        pa_stream_state_t stream_state;
        while (ok && (stream_state = pa_stream_get_state(probe.pulse_player)) != PA_STREAM_READY) {
            if (!PA_STREAM_IS_GOOD(stream_state)) ok = 0;
            else pa_threaded_mainloop_wait(probe.pulse_loop);
        }
    }
    pa_threaded_mainloop_unlock(probe.pulse_loop);
    return ok ? 0 : -1;
}

static void pulse_stop(void) {
    pa_threaded_mainloop_lock(probe.pulse_loop);
    if (probe.pulse_player) {
        pa_stream_disconnect(probe.pulse_player);
        pa_stream_unref(probe.pulse_player);
    }
    pa_context_disconnect(probe.pulse_context);
    pa_context_unref(probe.pulse_context);
    pa_threaded_mainloop_unlock(probe.pulse_loop);
    pa_threaded_mainloop_stop(probe.pulse_loop);
    pa_threaded_mainloop_free(probe.pulse_loop);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double *values, int n, int p) { return values[(n - 1) * p / 100]; }

/* The PipeWire player, on the default sink, asking for QUANTUM samples a cycle; 0 or -1. */
static int start_pipewire_player(int *argc, char ***argv, int quantum) {
    pw_init(argc, argv);
    probe.loop = pw_thread_loop_new("stamp-error", NULL);
    char latency[32];
    snprintf(latency, sizeof latency, "%d/%d", quantum, RATE);
    pw_thread_loop_lock(probe.loop);
    probe.player = pw_stream_new_simple(
        pw_thread_loop_get_loop(probe.loop), "stamp-error",
        pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback", PW_KEY_MEDIA_ROLE,
                          "Music", PW_KEY_NODE_LATENCY, latency, NULL),
        &player_events, NULL);
    uint8_t buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof buffer);
    struct spa_audio_info_raw format = {.format = SPA_AUDIO_FORMAT_F32, .channels = 2, .rate = RATE};
    format.position[0] = SPA_AUDIO_CHANNEL_FL;
    format.position[1] = SPA_AUDIO_CHANNEL_FR;
    const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &format)};
    int connected = pw_stream_connect(probe.player, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                                      PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS |
                                          PW_STREAM_FLAG_RT_PROCESS,
                                      params, 1);
    pw_thread_loop_unlock(probe.loop);
    if (connected < 0) return -1;
    pw_thread_loop_start(probe.loop);
    return 0;
}

/* Prints the run's summary lines (see the top of the file); the exit status. */
static int summarize(int clicks, int frame_us, int quantum, int capture_quantum, int32_t clocked, const deskaudio_clock *clock, int pulse) {
    int heard = atomic_load(&probe.heard);
    if (heard == 0) {
        if (probe.unreferenced > 0)
            fprintf(stderr, "stamp-error: no burst was judged: %d heard with no true time from the player\n", probe.unreferenced);
        else
            fprintf(stderr, "stamp-error: no burst was heard\n");
        return 1;
    }
    qsort(probe.errors_ms, (size_t)heard, sizeof(double), compare);
    qsort(probe.latencies_ms, (size_t)heard, sizeof(double), compare);
    /* The error's spread around zero: p99 of its size. */
    double sizes[MAX_CLICKS];
    for (int i = 0; i < heard; i++) sizes[i] = fabs(probe.errors_ms[i]);
    qsort(sizes, (size_t)heard, sizeof(double), compare);
    printf("stamp_ms backend=%s frame_us=%d quantum=%d capture_quantum=%d n=%d unreferenced=%d missed=%d error_p50=%.3f "
           "error_abs_p99=%.3f error_min=%.3f error_max=%.3f latency_min=%.2f latency_p50=%.2f latency_p99=%.2f "
           "latency_max=%.2f\n",
           getenv("DESKAUDIO_BACKEND") ? getenv("DESKAUDIO_BACKEND") : "auto", frame_us, quantum, capture_quantum, heard,
           probe.unreferenced, clicks - heard - probe.unreferenced, percentile(probe.errors_ms, heard, 50), percentile(sizes, heard, 99), probe.errors_ms[0],
           probe.errors_ms[heard - 1], probe.latencies_ms[0], percentile(probe.latencies_ms, heard, 50),
           percentile(probe.latencies_ms, heard, 99), probe.latencies_ms[heard - 1]);
    printf("steps n=%ld worst_ms=%.4f over_0.05ms=%ld time_steps=%ld largest_time_step_ms=%.4f sample_slips=%ld "
           "slipped_samples=%ld\n",
           probe.steps, probe.worst_step_ns / 1e6, probe.steps_over, probe.time_steps, probe.largest_time_step_ns / 1e6,
           probe.sample_slips, probe.slipped_samples);
    if (clocked == DESKAUDIO_OK)
        printf("clock source=%u jitter_ms=%.3f rate_ppm=%.1f relocks=%u\n", clock->source, clock->jitter_ns / 1e6,
               clock->rate_error_ppm, clock->relocks);
    else
        printf("clock unavailable: %s\n", deskaudio_last_error());
    if (pulse && probe.rtts > 0) {
        qsort(probe.rtts_us, (size_t)probe.rtts, sizeof(double), compare);
        printf("reference_rtt_us n=%d p50=%.0f max=%.0f\n", probe.rtts, percentile(probe.rtts_us, probe.rtts, 50),
               probe.rtts_us[probe.rtts - 1]);
    }
    return 0;
}

int main(int argc, char **argv) {
    int clicks = argc > 1 ? atoi(argv[1]) : 100;
    int interval_ms = argc > 2 ? atoi(argv[2]) : 200;
    int frame_us = argc > 3 ? atoi(argv[3]) : 10000;
    int quantum = argc > 4 ? atoi(argv[4]) : 256;
    int capture_quantum = argc > 5 ? atoi(argv[5]) : 0;
    if (clicks <= 0 || clicks > MAX_CLICKS || interval_ms < 50 || quantum < 16 || quantum > 8192) {
        fprintf(stderr,
                "usage: stamp-error [CLICKS 1-%d] [INTERVAL_MS>=50] [FRAME_US] [QUANTUM 16-8192] [CAPTURE_QUANTUM]\n",
                MAX_CLICKS);
        return 2;
    }
    probe.decoder = deskaudio_decoder_create();
    probe.pre_skip = deskaudio_encoder_pre_skip();
    set_audio_callback(on_frame, NULL);
    int32_t status = deskaudio_set_frame_duration(frame_us);
    if (status == DESKAUDIO_OK) status = deskaudio_set_pipewire_quantum(capture_quantum);
    if (status == DESKAUDIO_OK) status = enable_audio(false, true);
    if (status != DESKAUDIO_OK) {
        fprintf(stderr, "stamp-error: %s: %s\n", deskaudio_strerror(status), deskaudio_last_error());
        return 1;
    }

    probe.interval_samples = (uint64_t)interval_ms * RATE / 1000;
    probe.next_click_at = RATE; /* one second of silence first */
    probe.clicks_wanted = clicks;
    atomic_store(&probe.pending_click, -1);
    atomic_store(&probe.heard_click, -1);
    const char *player = getenv("STAMP_PLAYER");
    int pulse = player && strcmp(player, "pulse") == 0;
    if (pulse) {
        if (pulse_start() < 0) {
            fprintf(stderr, "stamp-error: cannot connect the PulseAudio player\n");
            return 1;
        }
    } else if (start_pipewire_player(&argc, &argv, quantum) < 0) {
        fprintf(stderr, "stamp-error: cannot connect the player\n");
        return 1;
    }

    long long deadline =
        now_ns() + (long long)(1000 + clicks * interval_ms + clicks * PHASE_STEP * 1000 / RATE + 1000) * 1000000LL;
    while (now_ns() < deadline) {
        struct timespec pause = {0, pulse ? 10000000 : 50000000};
        nanosleep(&pause, NULL);
        if (pulse) pulse_reference();
    }
    deskaudio_clock clock = {0};
    int32_t clocked = deskaudio_get_clock(&clock, sizeof clock);
    if (pulse) {
        pulse_stop();
    } else {
        pw_thread_loop_stop(probe.loop);
        pw_stream_destroy(probe.player);
        pw_thread_loop_destroy(probe.loop);
        pw_deinit();
    }
    enable_audio(false, false);
    set_audio_callback(NULL, NULL);
    deskaudio_decoder_destroy(probe.decoder);
    return summarize(clicks, frame_us, quantum, capture_quantum, clocked, &clock, pulse);
}
