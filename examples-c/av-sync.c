/* av-sync: puts captured audio on a video timeline, as a remote-desktop host does.
 *
 *   av-sync [SECONDS] [FPS]        (defaults 5 s, 60 frames per second)
 *
 * A host stamps each video frame with the CLOCK_MONOTONIC time it captured the screen. Each
 * AudioFrame's capture_time_ns is on the same clock: the time its first sample was played
 * into the sink (docs/capture.md, "Capture times"). So the host (or the viewer, which gets
 * both stamps) can tell which video frame each audio frame belongs with, and a viewer plays
 * audio frame A with video frame V when A's capture time minus V's is the same on both sides.
 * This program captures app audio, ticks a simulated video clock at FPS, and prints per
 * second how many audio frames fell in each video frame and how far the audio clock has
 * drifted from CLOCK_MONOTONIC (deskaudio_get_clock()). It uses only include/deskaudio.h. */
#include <deskaudio.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

/* The video side: frame n was captured at start + n * period. */
static unsigned long long video_start_ns, video_period_ns;

/* The library's delivery thread: place the audio frame on the video timeline. */
static void on_frame(const uint8_t *frame, size_t len, void *user_data) {
    long *frames_before_video = user_data;
    deskaudio_frame_info info;
    if (deskaudio_parse_frame(frame, len, &info, sizeof info) != DESKAUDIO_OK) return;
    if (info.capture_time_ns < video_start_ns) {
        (*frames_before_video)++;
        return;
    }
    unsigned long long since = info.capture_time_ns - video_start_ns;
    unsigned long long video_frame = since / video_period_ns;
    double into_ms = (double)(since % video_period_ns) / 1e6;
    /* A time step: this frame's capture time does not follow from the last one's and its
     * samples (the server's clock stepped); a host re-anchors its audio timeline here. */
    if (info.flags & DESKAUDIO_FRAME_TIME_STEP)
        printf("audio frame %u (sample %llu) steps the timeline: sounded %.3f ms into video frame %llu\n",
               info.sequence, (unsigned long long)info.sample_clock, into_ms, video_frame);
    if (info.sequence % 100 == 0)
        printf("audio frame %u (sample %llu) sounded %.3f ms into video frame %llu\n", info.sequence,
               (unsigned long long)info.sample_clock, into_ms, video_frame);
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 5;
    int fps = argc > 2 ? atoi(argv[2]) : 60;
    if (seconds <= 0 || fps <= 0 || fps > 1000) {
        fprintf(stderr, "usage: av-sync [SECONDS>0] [FPS 1-1000]\n");
        return 2;
    }
    long frames_before_video = 0;
    video_period_ns = 1000000000ULL / (unsigned long long)fps;
    video_start_ns = now_ns();
    set_audio_callback(on_frame, &frames_before_video);
    int32_t status = enable_audio(false, true);
    if (status != DESKAUDIO_OK) {
        fprintf(stderr, "av-sync: %s: %s\n", deskaudio_strerror(status), deskaudio_last_error());
        return 1;
    }
    for (int second = 1; second <= seconds; second++) {
        struct timespec pause = {1, 0};
        nanosleep(&pause, NULL);
        deskaudio_clock clock;
        if (deskaudio_get_clock(&clock, sizeof clock) != DESKAUDIO_OK) {
            printf("second %d: no audio yet (%s)\n", second, deskaudio_last_error());
            continue;
        }
        /* Where the audio clock says "now" is, against the system's now: the capture's
         * latency (how long ago the newest framed sample sounded). */
        double behind_ms = ((double)now_ns() - (double)clock.time_ns) / 1e6;
        printf("second %d: sample %llu sounded %.2f ms ago; audio clock %+.1f ppm against CLOCK_MONOTONIC, "
               "report jitter %.3f ms, %s\n",
               second, (unsigned long long)clock.sample_clock, behind_ms, clock.rate_error_ppm,
               clock.jitter_ns / 1e6,
               clock.source == DESKAUDIO_FRAME_APP   ? "app audio's server clock"
               : clock.source == DESKAUDIO_FRAME_MIC ? "the microphone's server clock"
                                                     : "estimated from arrival");
    }
    enable_audio(false, false);
    set_audio_callback(NULL, NULL);
    printf("%ld audio frames sounded before the first video frame\n", frames_before_video);
    return 0;
}
