// What one 10 ms Opus frame costs libopus in CPU time, encoded back to back (as a
// benchmark loop does, caches warm) and paced at one frame every 10 ms (as a live capture
// does: the thread sleeps between frames). The encoder is set up as DeskAudio's pipeline's
// by the pipeline benchmark's own baseline (Benchmarks/Sources/RawOpus: restricted
// low-delay, VBR), at complexity 10 unless told, and the signal is the same kind as
// scripts/bench-compare (a 1 kHz tone at -12 dBFS plus white noise at about -30 dBFS).
//
//   encode-pacing [FRAMES] [BITRATE] [COMPLEXITY]        (defaults 1000, 128000 and 10)
//
// Prints one line per mode: CPU µs per frame (CLOCK_THREAD_CPUTIME_ID) and kbit/s.
#include <math.h>
#include "raw_opus.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { RATE = 48000, FRAME = 480, CHANNELS = 2, MAX_PACKET = 4000 }; /* raw_opus.h's format */

static double thread_cpu_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static void sleep_until(struct timespec *deadline, long add_ns) {
  deadline->tv_nsec += add_ns;
  while (deadline->tv_nsec >= 1000000000L) {
    deadline->tv_nsec -= 1000000000L;
    deadline->tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) != 0) {
  }
}

// Encodes `frames` frames of `signal`; with `paced`, one every 10 ms.
static void measure(const char *mode, const float *signal, int frames, int bitrate, int complexity, int paced) {
  OpusEncoder *encoder = raw_opus_encoder_create(bitrate, complexity);
  if (!encoder) {
    fprintf(stderr, "encode-pacing: libopus refused the encoder set-up\n");
    exit(1);
  }
  unsigned char packet[MAX_PACKET];
  long bytes = 0;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  double start = thread_cpu_seconds();
  for (int i = 0; i < frames; i++) {
    int length = opus_encode_float(encoder, signal + (size_t)i * FRAME * CHANNELS, FRAME, packet, MAX_PACKET);
    if (length < 0) {
      fprintf(stderr, "encode-pacing: opus_encode_float: %s\n", opus_strerror(length));
      exit(1);
    }
    bytes += length;
    if (paced) sleep_until(&deadline, 10000000L);
  }
  double seconds = thread_cpu_seconds() - start;
  printf("encode-pacing %-13s frames=%d complexity=%d cpu_us_per_frame=%.1f kbit_s=%.1f\n", mode, frames,
         complexity, seconds / frames * 1e6, (double)bytes * 8 / frames / 10);
  opus_encoder_destroy(encoder);
}

int main(int argc, char **argv) {
  int frames = argc > 1 ? atoi(argv[1]) : 1000;
  int bitrate = argc > 2 ? atoi(argv[2]) : 128000;
  int complexity = argc > 3 ? atoi(argv[3]) : 10;
  if (frames <= 0 || bitrate <= 0 || complexity < 0 || complexity > 10) {
    fprintf(stderr, "usage: encode-pacing [FRAMES] [BITRATE] [COMPLEXITY 0-10]\n");
    return 2;
  }
  float *signal = malloc((size_t)frames * FRAME * CHANNELS * sizeof(float));
  if (!signal) return 1;
  unsigned seed = 1;
  for (long i = 0; i < (long)frames * FRAME; i++) {
    float tone = 0.25f * sinf(2.0f * (float)M_PI * 1000.0f * (float)i / RATE);
    for (int c = 0; c < CHANNELS; c++) {
      seed = seed * 1103515245u + 12345u;
      float noise = 0.05f * ((float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
      signal[i * CHANNELS + c] = tone + noise;
    }
  }
  measure("back-to-back", signal, frames, bitrate, complexity, 0);
  measure("paced-10ms", signal, frames, bitrate, complexity, 1);
  free(signal);
  return 0;
}
