/* One run of the echo rig (Tests/Echo/echo_rig.py) through the C API, as a native viewer calls
 * it: every 10 ms it pushes what it is about to play 40 ms ahead (deskaudio_encoder_push_playback)
 * and what its microphone heard (deskaudio_encoder_push_pcm), each with its CLOCK_MONOTONIC time
 * (simulated, so the run is exact and repeatable), decodes the frames out with deskaudio_decoder
 * and writes them. A program of its own so that the rig runs where Python has no numpy: in the
 * Debian 13 root (scripts/server-root), where PipeWire's plugin has WebRTC's AEC3.
 *
 *   echo_driver MICROPHONE PLAYBACK OUT CANCELLER MIC_RATE_ERROR
 *
 * Files are 48 kHz mono float32. CANCELLER: off, best, speexdsp or webrtc-aec3. The
 * microphone's times run (1 + MIC_RATE_ERROR) too fast, as a device clock off by that much.
 * Prints "second DELAY_MS ERLE_DB" each second and, at the end, "stats CANCELLER DELAY_MS
 * ERLE_DB BLOCKS BLOCKS_WITHOUT_PLAYBACK CPU_US", CPU_US the process's CPU time per 10 ms of
 * microphone audio (its pushes, the canceller, encoding and decoding); exits 1 with a message
 * on any error. */
#define _POSIX_C_SOURCE 200809L
#include <deskaudio.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

enum { RATE = 48000, BLOCK = 480, AHEAD_BLOCKS = 4 };
static const uint64_t START_NS = 1000000000000ULL;

static float *read_floats(const char *path, size_t *count) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long bytes = ftell(file);
    fseek(file, 0, SEEK_SET);
    float *samples = malloc(bytes > 0 ? (size_t)bytes : 1);
    *count = samples ? fread(samples, sizeof(float), (size_t)bytes / sizeof(float), file) : 0;
    fclose(file);
    return samples;
}

static double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int fail(const char *what) {
    const char *error = deskaudio_last_error();
    fprintf(stderr, "echo_driver: %s: %s\n", what, error ? error : "(no message)");
    return 1;
}

struct decoding {
    deskaudio_decoder *decoder;
    FILE *out;
    float pcm[DESKAUDIO_DECODER_MAX_SAMPLES * 2];
    int failed;
};

static void on_frame(const uint8_t *frame, size_t length, void *data) {
    struct decoding *decoding = data;
    int32_t count = deskaudio_decoder_decode(decoding->decoder, frame, length, decoding->pcm, DESKAUDIO_DECODER_MAX_SAMPLES);
    if (count < 0) {
        decoding->failed = 1;
        return;
    }
    for (int32_t index = 0; index < count; index++) fwrite(&decoding->pcm[index * 2], sizeof(float), 1, decoding->out);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: echo_driver MICROPHONE PLAYBACK OUT off|best|speexdsp|webrtc-aec3 MIC_RATE_ERROR\n");
        return 2;
    }
    size_t microphone_count = 0, playback_count = 0;
    float *microphone = read_floats(argv[1], &microphone_count);
    float *playback = read_floats(argv[2], &playback_count);
    if (!microphone || !playback) {
        fprintf(stderr, "echo_driver: cannot read %s or %s\n", argv[1], argv[2]);
        return 1;
    }
    const char *canceller = argv[4];
    double mic_rate_error = atof(argv[5]);
    struct decoding decoding = {.decoder = deskaudio_decoder_create(), .out = fopen(argv[3], "wb")};
    deskaudio_encoder *encoder = deskaudio_encoder_create();
    if (!encoder || !decoding.decoder || !decoding.out) return fail("setting up");
    if (strcmp(canceller, "off") != 0) {
        int32_t choice = strcmp(canceller, "speexdsp") == 0       ? DESKAUDIO_ECHO_CANCELLER_SPEEXDSP
                         : strcmp(canceller, "webrtc-aec3") == 0 ? DESKAUDIO_ECHO_CANCELLER_WEBRTC_AEC3
                                                                 : DESKAUDIO_ECHO_CANCELLER_BEST;
        if (deskaudio_encoder_set_echo_canceller(encoder, choice) != DESKAUDIO_OK) return fail(canceller);
        if (deskaudio_encoder_set_echo_cancel(encoder, true) != DESKAUDIO_OK) return fail("echo cancellation on");
    }
    size_t blocks = microphone_count / BLOCK, playback_blocks = playback_count / BLOCK;
    deskaudio_encoder_stats stats;
    double cpu_start = cpu_seconds();
    for (size_t block = 0; block < blocks + AHEAD_BLOCKS; block++) {
        if (block < playback_blocks) {
            uint64_t end_ns = START_NS + (uint64_t)(((block + 1) * BLOCK - 1) * 1e9 / RATE + 0.5);
            if (deskaudio_encoder_push_playback(encoder, playback + block * BLOCK, BLOCK * sizeof(float), DESKAUDIO_PCM_F32,
                                                1, RATE, end_ns) != BLOCK)
                return fail("push_playback");
        }
        if (block < AHEAD_BLOCKS) continue;
        size_t heard = block - AHEAD_BLOCKS;
        if (heard >= blocks) continue;
        uint64_t end_ns = START_NS + (uint64_t)(((heard + 1) * BLOCK - 1) * 1e9 / RATE * (1 + mic_rate_error) + 0.5);
        if (deskaudio_encoder_push_pcm(encoder, microphone + heard * BLOCK, BLOCK * sizeof(float), DESKAUDIO_PCM_F32, 1, RATE,
                                       end_ns, on_frame, &decoding) != BLOCK)
            return fail("push_pcm");
        if (decoding.failed) return fail("decoding");
        if (heard % 100 == 99) {
            if (deskaudio_encoder_get_stats(encoder, &stats, sizeof stats) != DESKAUDIO_OK) return fail("get_stats");
            printf("second %d %.2f\n", stats.echo_delay_ms, stats.echo_return_loss_enhancement_db);
        }
    }
    double cpu_us = (cpu_seconds() - cpu_start) * 1e6 / (blocks ? (double)blocks : 1);
    if (deskaudio_encoder_get_stats(encoder, &stats, sizeof stats) != DESKAUDIO_OK) return fail("get_stats");
    printf("stats %d %d %.2f %llu %llu %.1f\n", stats.echo_canceller, stats.echo_delay_ms, stats.echo_return_loss_enhancement_db,
           (unsigned long long)stats.echo_blocks, (unsigned long long)stats.echo_blocks_without_playback, cpu_us);
    deskaudio_encoder_destroy(encoder);
    deskaudio_decoder_destroy(decoding.decoder);
    fclose(decoding.out);
    free(microphone);
    free(playback);
    return 0;
}
