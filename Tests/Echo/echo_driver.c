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
 * ERLE_DB BLOCKS BLOCKS_WITHOUT_PLAYBACK CPU_US ALLOCATIONS WEBRTC_ALLOCATIONS COUNTED_BLOCKS",
 * CPU_US the process's CPU time per 10 ms of microphone audio (its pushes, the canceller,
 * encoding and decoding); ALLOCATIONS the heap allocations made inside those calls over the
 * microphone's blocks after its first WARM_UP_BLOCKS (COUNTED_BLOCKS of them), but for
 * WEBRTC_ALLOCATIONS, those made by webrtc-audio-processing's own code; exits 1 with a
 * message on any error. */
#define _GNU_SOURCE
#include <deskaudio.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

enum { RATE = 48000, BLOCK = 480, AHEAD_BLOCKS = 4, WARM_UP_BLOCKS = 200 };
static const uint64_t START_NS = 1000000000000ULL;

/* The heap allocator's entry points, defined in the program, so that every library in the
 * process allocates through them (the Swift runtime, libopus, speexdsp, the AEC3 plugin's
 * C++): each call is counted and passed to glibc's own. While `attributing` (the driver's
 * thread, inside the calls counted), an allocation whose stack passes through
 * webrtc-audio-processing is counted apart. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
static unsigned long allocations, webrtc_allocations;
static _Thread_local int attributing, unwinding;
static int from_webrtc(void) {
    void *frames[8];
    unwinding = 1;
    int count = backtrace(frames, 8);
    unwinding = 0;
    for (int index = 0; index < count; index++) {
        Dl_info info;
        if (dladdr(frames[index], &info) && info.dli_fname && strstr(info.dli_fname, "libwebrtc-audio-processing"))
            return 1;
    }
    return 0;
}
static void counted(void) {
    if (attributing && !unwinding && from_webrtc()) __atomic_fetch_add(&webrtc_allocations, 1, __ATOMIC_RELAXED);
    else __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
}
static unsigned long allocations_now(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }
void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { counted(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { counted(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *out = pointer;
    return 0;
}

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
    unsigned long allocations_in_calls = 0, counted_blocks = 0;
    /* backtrace's first call loads the unwinder (allocating): made before anything is counted. */
    void *warm_up[1];
    backtrace(warm_up, 1);
    for (size_t block = 0; block < blocks + AHEAD_BLOCKS; block++) {
        int counting = block >= AHEAD_BLOCKS + WARM_UP_BLOCKS && block - AHEAD_BLOCKS < blocks;
        unsigned long allocations_before = allocations_now();
        attributing = counting;
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
        attributing = 0;
        if (counting) allocations_in_calls += allocations_now() - allocations_before, counted_blocks++;
        if (heard % 100 == 99) {
            if (deskaudio_encoder_get_stats(encoder, &stats, sizeof stats) != DESKAUDIO_OK) return fail("get_stats");
            printf("second %d %.2f\n", stats.echo_delay_ms, stats.echo_return_loss_enhancement_db);
        }
    }
    double cpu_us = (cpu_seconds() - cpu_start) * 1e6 / (blocks ? (double)blocks : 1);
    if (deskaudio_encoder_get_stats(encoder, &stats, sizeof stats) != DESKAUDIO_OK) return fail("get_stats");
    printf("stats %d %d %.2f %llu %llu %.1f %lu %lu %lu\n", stats.echo_canceller, stats.echo_delay_ms,
           stats.echo_return_loss_enhancement_db, (unsigned long long)stats.echo_blocks,
           (unsigned long long)stats.echo_blocks_without_playback, cpu_us, allocations_in_calls,
           __atomic_load_n(&webrtc_allocations, __ATOMIC_RELAXED), counted_blocks);
    deskaudio_encoder_destroy(encoder);
    deskaudio_decoder_destroy(decoding.decoder);
    fclose(decoding.out);
    free(microphone);
    free(playback);
    return 0;
}
