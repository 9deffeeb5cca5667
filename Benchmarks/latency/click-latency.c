/* click-latency: how long from a sound reaching the default sink to the host callback
 * getting the frame that holds it.
 *
 *   click-latency [CLICKS] [INTERVAL_MS] [FRAME_US]     (defaults 100, 200, 10000)
 *
 * FRAME_US is the frame length asked for with deskaudio_set_frame_duration(): 2500, 5000,
 * 10000 or 20000.
 * It captures app audio through libdeskaudio (backend from DESKAUDIO_BACKEND) and plays,
 * through libpulse-simple into the default sink, silence with a 10 ms 2 kHz burst about every
 * INTERVAL_MS: each burst PHASE_STEP samples later after the one before than INTERVAL_MS says,
 * so that the bursts fall at every place in the frame (a whole number of frames apart, every
 * burst of a run met the frame grid at the same place, and the run's latency said where). For
 * each burst it notes when the sink will play its first sample: the CLOCK_MONOTONIC time of
 * the write plus the stream's playback latency as the server reports it
 * (pa_simple_get_latency) plus the burst's offset in the block. The callback
 * decodes every frame with the library's decoder and timestamps the first frame whose
 * level jumps above -30 dBFS. The difference is the latency: capture, the library's
 * framing (a frame is only complete at its last sample), Opus's 2.5 ms look-ahead and
 * the hand-over to the callback. Prints each latency and a summary line:
 *   latency_ms backend=auto frame_us=10000 n=100 missed=0 min=9.8 p50=12.3 p99=18.1 max=19.0 */
#include <deskaudio.h>

#include <math.h>
#include <pulse/error.h>
#include <pulse/simple.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000
#define BLOCK 240 /* 5 ms written at a time */
#define PHASE_STEP 53 /* samples each burst moves against the frame grid (stamp-error.c) */

static _Atomic long long click_at_ns;  /* when the pending burst plays; 0: none pending */
static _Atomic long long heard_at_ns;  /* when the callback saw it */
static deskaudio_decoder *decoder;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void on_frame(const uint8_t *frame, size_t len, void *user_data) {
    (void)user_data;
    long long arrived = now_ns();
    float pcm[2 * 960];
    int32_t samples = deskaudio_decoder_decode(decoder, frame, len, pcm, 960);
    if (samples <= 0) return;
    double sum = 0;
    for (int i = 0; i < 2 * samples; i++) sum += (double)pcm[i] * pcm[i];
    double level = 10 * log10(sum / (2 * samples) + 1e-12);
    if (level > -30 && atomic_load(&click_at_ns) != 0 && atomic_load(&heard_at_ns) == 0)
        atomic_store(&heard_at_ns, arrived);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int clicks = argc > 1 ? atoi(argv[1]) : 100;
    int interval_ms = argc > 2 ? atoi(argv[2]) : 200;
    int frame_us = argc > 3 ? atoi(argv[3]) : 10000;
    if (clicks <= 0 || interval_ms < 50) {
        fprintf(stderr, "usage: click-latency [CLICKS>0] [INTERVAL_MS>=50] [FRAME_US]\n");
        return 2;
    }
    decoder = deskaudio_decoder_create();
    set_audio_callback(on_frame, NULL);
    int32_t status = deskaudio_set_frame_duration(frame_us);
    if (status == DESKAUDIO_OK) status = enable_audio(false, true);
    if (status != DESKAUDIO_OK) {
        fprintf(stderr, "click-latency: %s: %s\n", deskaudio_strerror(status), deskaudio_last_error());
        return 1;
    }

    pa_sample_spec spec = {.format = PA_SAMPLE_FLOAT32LE, .rate = RATE, .channels = 2};
    pa_buffer_attr attr = {.maxlength = (uint32_t)-1, .tlength = 4 * BLOCK * 8, .prebuf = (uint32_t)-1,
                           .minreq = (uint32_t)-1, .fragsize = (uint32_t)-1};
    int error = 0;
    pa_simple *player = pa_simple_new(NULL, "click-latency", PA_STREAM_PLAYBACK, NULL, "clicks", &spec,
                                      NULL, &attr, &error);
    if (!player) {
        fprintf(stderr, "click-latency: cannot play: %s\n", pa_strerror(error));
        return 1;
    }

    float silence[2 * BLOCK] = {0}, burst[2 * BLOCK];
    int blocks_per_click = interval_ms * RATE / 1000 / BLOCK;
    double *latencies = calloc((size_t)clicks, sizeof *latencies);
    int measured = 0, missed = 0;
    for (int block = 0; block < 200; block++) pa_simple_write(player, silence, sizeof silence, &error);
    for (int click = 0; click < clicks; click++) {
        /* Two blocks (10 ms) of burst, at 2 kHz, -9 dBFS RMS, then silence. */
        atomic_store(&heard_at_ns, 0);
        for (int half = 0; half < 2; half++) {
            for (int i = 0; i < BLOCK; i++) {
                float sample = 0.5f * sinf(2.0f * 3.14159265f * 2000.0f * (float)(half * BLOCK + i) / RATE);
                burst[2 * i] = burst[2 * i + 1] = sample;
            }
            if (half == 0) {
                pa_usec_t latency = pa_simple_get_latency(player, &error);
                atomic_store(&click_at_ns, now_ns() + (long long)latency * 1000);
            }
            pa_simple_write(player, burst, sizeof burst, &error);
        }
        for (int block = 2; block < blocks_per_click; block++)
            pa_simple_write(player, silence, sizeof silence, &error);
        pa_simple_write(player, silence, PHASE_STEP * 2 * sizeof(float), &error);
        long long heard = atomic_load(&heard_at_ns);
        if (heard == 0) {
            missed++;
        } else {
            latencies[measured] = (double)(heard - atomic_load(&click_at_ns)) / 1e6;
            printf("click %d: %.2f ms\n", click, latencies[measured]);
            measured++;
        }
        atomic_store(&click_at_ns, 0);
    }
    pa_simple_drain(player, &error);
    pa_simple_free(player);
    enable_audio(false, false);
    set_audio_callback(NULL, NULL);
    deskaudio_decoder_destroy(decoder);

    if (measured == 0) {
        fprintf(stderr, "click-latency: no click was heard (%d missed)\n", missed);
        return 1;
    }
    qsort(latencies, (size_t)measured, sizeof *latencies, compare);
    double p50 = latencies[(measured - 1) * 50 / 100], p99 = latencies[(measured - 1) * 99 / 100];
    printf("latency_ms backend=%s frame_us=%d n=%d missed=%d min=%.1f p50=%.1f p99=%.1f max=%.1f\n",
           getenv("DESKAUDIO_BACKEND") ? getenv("DESKAUDIO_BACKEND") : "auto", frame_us, measured, missed,
           latencies[0], p50, p99, latencies[measured - 1]);
    free(latencies);
    return 0;
}
