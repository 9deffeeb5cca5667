/* record: captures this machine's audio through libdeskaudio and writes an Ogg Opus file.
 *
 *   record [--app] [--mic] [--device NAME] [--seconds N] OUT.opus
 *   record --list
 *
 * It uses only include/deskaudio.h and libdeskaudio.so, plus libogg for the Ogg pages.
 * AudioFrame bytes are read with deskaudio_parse_frame() (docs/wire-format.md). Frames held
 * back by the zero gate are not in the file: its timeline skips gated silence. */
#include <deskaudio.h>

#include <ogg/ogg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PACKET_BYTES 1275  /* the largest Opus packet */

struct recording {
    FILE *file;
    ogg_stream_state stream;
    ogg_int64_t granule;       /* pre-skip + samples of every packet written */
    ogg_int64_t packet_number;
    unsigned char held[MAX_PACKET_BYTES];  /* the newest packet, written when the next comes or at the end */
    size_t held_len;
    unsigned long frames, bytes, gated_frames, after_gap_frames;
    unsigned long long next_clock;
    int have_clock, write_failed;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int signal_number) { (void)signal_number; interrupted = 1; }

static void write_pages(struct recording *r, int flush) {
    ogg_page page;
    while (flush ? ogg_stream_flush(&r->stream, &page) : ogg_stream_pageout(&r->stream, &page)) {
        if (fwrite(page.header, 1, (size_t)page.header_len, r->file) != (size_t)page.header_len ||
            fwrite(page.body, 1, (size_t)page.body_len, r->file) != (size_t)page.body_len)
            r->write_failed = 1;
    }
}

static void submit(struct recording *r, unsigned char *data, size_t len, long samples, int last) {
    ogg_packet packet = {0};
    packet.packet = data;
    packet.bytes = (long)len;
    packet.b_o_s = r->packet_number == 0;
    packet.e_o_s = last;
    r->granule += samples;
    packet.granulepos = r->granule;
    packet.packetno = r->packet_number++;
    ogg_stream_packetin(&r->stream, &packet);
    write_pages(r, packet.b_o_s || last);
}

static void write_headers(struct recording *r, int pre_skip) {
    unsigned char head[19] = {'O', 'p', 'u', 's', 'H', 'e', 'a', 'd', 1, 2};
    head[10] = (unsigned char)(pre_skip & 0xff);
    head[11] = (unsigned char)(pre_skip >> 8);
    head[12] = 0x80; head[13] = 0xbb; /* 48000, little-endian */
    submit(r, head, sizeof head, 0, 0);

    const char *vendor = deskaudio_version();
    unsigned char tags[64] = {'O', 'p', 'u', 's', 'T', 'a', 'g', 's'};
    size_t vendor_len = strlen("DeskAudio ") + strlen(vendor);
    size_t len = 8;
    tags[len++] = (unsigned char)vendor_len; tags[len++] = 0; tags[len++] = 0; tags[len++] = 0;
    len += (size_t)snprintf((char *)tags + len, sizeof tags - len, "DeskAudio %s", vendor);
    tags[len++] = 0; tags[len++] = 0; tags[len++] = 0; tags[len++] = 0; /* no user comments */
    submit(r, tags, len, 0, 0);
    write_pages(r, 1);
    r->granule = pre_skip;
}

/* Runs on the library's thread, one AudioFrame at a time. */
static void on_frame(const uint8_t *frame, size_t len, void *user_data) {
    struct recording *r = user_data;
    deskaudio_frame_info info;
    if (deskaudio_parse_frame(frame, len, &info, sizeof info) != DESKAUDIO_OK) return;
    if (r->have_clock && info.sample_clock > r->next_clock)
        r->gated_frames += (unsigned long)((info.sample_clock - r->next_clock) / info.frame_samples);
    if (info.flags & DESKAUDIO_FRAME_AFTER_GAP) r->after_gap_frames++;
    r->next_clock = info.sample_clock + info.frame_samples;
    r->have_clock = 1;
    if (r->held_len > 0) submit(r, r->held, r->held_len, 480, 0);
    r->held_len = info.payload_length;
    memcpy(r->held, info.payload, info.payload_length);
    r->frames++;
    r->bytes += (unsigned long)len;
}

static int usage(const char *program) {
    fprintf(stderr, "usage: %s [--app] [--mic] [--device NAME] [--seconds N] OUT.opus\n"
                    "       %s --list | --version\n"
                    "Records app audio (default) and/or the microphone to an Ogg Opus file.\n"
                    "--device NAME records that sink (as app audio) or source (as the microphone)\n"
                    "instead of the default; --list shows the names.\n", program, program);
    return 2;
}

/* deskaudio_list_devices callback for --list: one line per device. */
static void print_device(int32_t kind, const char *name, const char *description, bool is_default,
                         void *user_data) {
    (void)user_data;
    printf("%s %-6s %s (%s)\n", is_default ? "*" : " ", kind == DESKAUDIO_DEVICE_SINK ? "sink" : "source",
           name, description);
}

/* deskaudio_list_devices callback for --device: the kind of the device named *user_data. */
struct device_lookup { const char *name; int32_t kind; };

static void find_device(int32_t kind, const char *name, const char *description, bool is_default,
                        void *user_data) {
    struct device_lookup *lookup = user_data;
    (void)description; (void)is_default;
    if (strcmp(name, lookup->name) == 0) lookup->kind = kind;
}

static int fail(const char *what, int32_t status) {
    fprintf(stderr, "record: %s: %s: %s\n", what, deskaudio_strerror(status), deskaudio_last_error());
    return 1;
}

int main(int argc, char **argv) {
    /* A host checks that the library it loaded serves the header it was built against. */
    if (deskaudio_abi_version() != DESKAUDIO_ABI_VERSION) {
        fprintf(stderr, "record: built for libdeskaudio ABI %d, loaded %s (ABI %d)\n",
                DESKAUDIO_ABI_VERSION, deskaudio_version(), (int)deskaudio_abi_version());
        return 1;
    }
    int app = 0, mic = 0, list = 0;
    double seconds = 5;
    const char *path = NULL, *device = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--app") == 0) app = 1;
        else if (strcmp(argv[i], "--mic") == 0) mic = 1;
        else if (strcmp(argv[i], "--list") == 0) list = 1;
        else if (strcmp(argv[i], "--version") == 0) {
            printf("record: header %d.%d.%d, library %s (ABI %d)\n", DESKAUDIO_VERSION_MAJOR,
                   DESKAUDIO_VERSION_MINOR, DESKAUDIO_VERSION_PATCH, deskaudio_version(),
                   (int)deskaudio_abi_version());
            return 0;
        }
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
        else if (argv[i][0] == '-' || path) return usage(argv[0]);
        else path = argv[i];
    }
    if (list) {
        int32_t count = deskaudio_list_devices(print_device, NULL);
        if (count < 0) return fail("listing devices", count);
        printf("%d devices (* = default)\n", count);
        return 0;
    }
    if (!path || seconds <= 0) return usage(argv[0]);
    if (device) {
        struct device_lookup lookup = {device, 0};
        int32_t count = deskaudio_list_devices(find_device, &lookup);
        if (count < 0) return fail("listing devices", count);
        if (lookup.kind == 0) {
            fprintf(stderr, "record: no device named %s (record --list shows them)\n", device);
            return 1;
        }
        int is_sink = lookup.kind == DESKAUDIO_DEVICE_SINK;
        int32_t status = is_sink ? deskaudio_set_app_device(device) : deskaudio_set_mic_device(device);
        if (status != DESKAUDIO_OK) return fail(device, status);
        if (is_sink) app = 1; else mic = 1;
    }
    if (!app && !mic) app = 1;

    static struct recording r;
    r.file = fopen(path, "wb");
    if (!r.file) { perror(path); return 1; }
    srand((unsigned)time(NULL));
    ogg_stream_init(&r.stream, rand());
    int pre_skip = deskaudio_encoder_pre_skip();
    if (pre_skip < 0) {
        fprintf(stderr, "record: %s: %s\n", deskaudio_strerror(pre_skip), deskaudio_last_error());
        return 1;
    }
    write_headers(&r, pre_skip);

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    set_audio_callback(on_frame, &r);
    int status = enable_audio(mic, app);
    if (status != DESKAUDIO_OK) {
        fprintf(stderr, "record: %s: %s\n", deskaudio_strerror(status), deskaudio_last_error());
        set_audio_callback(NULL, NULL);
        fclose(r.file);
        remove(path);
        return 1;
    }
    char backend[16];
    snprintf(backend, sizeof backend, "%s", deskaudio_backend());
    struct timespec tick = {0, 50 * 1000 * 1000};
    for (double waited = 0; waited < seconds && !interrupted; waited += 0.05) nanosleep(&tick, NULL);
    /* Audio the server's graph moved past while the library's thread was not run (a starved
       machine): the library put as much silence in its place, which a listener hears. */
    deskaudio_stats stats = {0};
    unsigned long skipped = 0;
    if (deskaudio_get_stats(&stats, sizeof stats) == DESKAUDIO_OK)
        skipped = (unsigned long)stats.frames_skipped_by_server;
    enable_audio(false, false);
    set_audio_callback(NULL, NULL);  /* from here on, no callback runs: r is ours alone */

    if (r.held_len > 0) submit(&r, r.held, r.held_len, 480, 1);
    write_pages(&r, 1);
    ogg_stream_clear(&r.stream);
    if (fclose(r.file) != 0 || r.write_failed) { perror(path); return 1; }
    /* Gated frames are known when sending resumes: a gate still closed at the end is not counted. */
    printf("frames %lu, bytes %lu, gated frames %lu, frames after a gap %lu, skipped by the server %lu, backend %s\n",
           r.frames, r.bytes, r.gated_frames, r.after_gap_frames, skipped, backend);
    return 0;
}
