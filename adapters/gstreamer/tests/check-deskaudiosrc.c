/* deskaudiosrc's unit tests: the element on a scripted source of AudioFrames and a virtual
 * clock (GstHarness's test clock; CLOCK_MONOTONIC is it plus MONO_OFFSET), asserting exact
 * timestamps, flags, events and counts. */
#include <deskaudio.h>
#include <gst/audio/audio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <string.h>

#include "gstdeskaudiosrc.h"

#define MONO_OFFSET (1000 * GST_SECOND)
#define FRAME_NS (10 * GST_MSECOND)
#define PRE_SKIP 312

static struct {
  gint gated, delivered;  /* atomic: the streaming thread polls them */
  guint64 now_ns;
  gboolean refuse;
} script;

static gboolean scripted_open(GstDeskAudioSrc *src, GError **error) {
  (void)src;
  if (script.refuse) g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ, "no audio server answered");
  return !script.refuse;
}
static void scripted_close(GstDeskAudioSrc *src) { (void)src; }
static void scripted_counts(GstDeskAudioSrc *src, guint64 *delivered, guint64 *gated) {
  (void)src;
  *delivered = (guint64)g_atomic_int_get(&script.delivered);
  *gated = (guint64)g_atomic_int_get(&script.gated);
}
static gint scripted_pre_skip(GstDeskAudioSrc *src) { (void)src; return PRE_SKIP; }
static guint64 scripted_now_ns(GstDeskAudioSrc *src) { (void)src; return script.now_ns; }
static const GstDeskAudioSrcSource scripted = {scripted_open, scripted_close, scripted_counts, scripted_pre_skip,
                                               scripted_now_ns};

typedef struct Frame {
  guint32 sequence;
  guint64 sample_clock, capture_running_ns;
  guint8 flags, channels;
  guint16 samples;
} Frame;

static const guint8 packet[3] = {0xf4, 0xff, 0xfe};
static const guint8 surround_mapping[6] = {0, 4, 1, 2, 3, 5};

static void put_le(guint8 *at, guint64 value, int bytes) {
  for (int i = 0; i < bytes; i++) at[i] = (guint8)(value >> (8 * i));
}

/* AudioFrame bytes (docs/wire-format.md): version 1 for 1-2 channels, 2 (5.1) for 6. */
static gsize write_frame(const Frame *f, guint8 *out) {
  guint8 channels = f->channels ? f->channels : 2;
  gboolean surround = channels == 6;
  memcpy(out, "DAFR", 4);
  out[4] = surround ? 2 : 1, out[5] = f->flags | DESKAUDIO_FRAME_APP, out[6] = channels, out[7] = surround ? 2 : 1;
  put_le(out + 8, 48000, 4), put_le(out + 12, f->sequence, 4), put_le(out + 16, f->sample_clock, 8);
  put_le(out + 24, f->capture_running_ns + MONO_OFFSET, 8), put_le(out + 32, f->samples ? f->samples : 480, 2);
  put_le(out + 34, sizeof packet, 2);
  gsize header = 36;
  if (surround) {
    out[36] = 4, out[37] = 2;
    memcpy(out + 38, surround_mapping, 6);
    header = 44;
  }
  memcpy(out + header, packet, sizeof packet);
  return header + sizeof packet;
}

static GstHarness *h;
static GstDeskAudioSrc *src;

static void at_time(GstClockTime running) {
  gst_harness_set_time(h, running);
  script.now_ns = running + MONO_OFFSET;
}

static void take(const Frame *f) {
  guint8 bytes[64];
  gst_deskaudio_src_take_frame(src, bytes, write_frame(f, bytes));
}

/* Takes frame `f` when the clock says `arrival` and returns the buffer pushed for it. */
static GstBuffer *push(const Frame *f, GstClockTime arrival) {
  at_time(arrival);
  take(f);
  return gst_harness_pull(h);
}

/* The running time, in samples, of the first decoded sample of a frame captured at
 * `capture_running`: the encoder's look-ahead earlier. */
static guint64 run_sample(GstClockTime capture_running) {
  return gst_util_uint64_scale_round(capture_running, 48000, GST_SECOND) - PRE_SKIP;
}

/* Frames 0 .. count-1 of a steady stream from `t0`, each taken a frame after it began. */
static void push_steady(guint count, GstClockTime t0) {
  for (guint k = 0; k < count; k++) {
    Frame f = {.sequence = k, .sample_clock = 480 * k, .capture_running_ns = t0 + k * FRAME_NS};
    gst_buffer_unref(push(&f, t0 + (k + 1) * FRAME_NS));
  }
}

static GstClockTime sample_time(guint64 run_sample) {
  return gst_util_uint64_scale_int_ceil(run_sample, GST_SECOND, 48000);
}

static guint64 stat(const char *name) {
  GstStructure *stats;
  guint64 value = 0;
  g_object_get(src, "stats", &stats, NULL);
  fail_unless(gst_structure_get_uint64(stats, name, &value), "no stat %s", name);
  gst_structure_free(stats);
  return value;
}

/* The next GAP event (other events skipped) covers running time from sample `from` to `to`. */
static void expect_gap(guint64 from, guint64 to) {
  for (;;) {
    GstEvent *event = gst_harness_pull_event(h);
    fail_unless(event != NULL);
    if (GST_EVENT_TYPE(event) == GST_EVENT_GAP) {
      GstClockTime start, duration;
      gst_event_parse_gap(event, &start, &duration);
      gst_event_unref(event);
      fail_unless_equals_uint64(start, sample_time(from));
      fail_unless_equals_uint64(start + duration, sample_time(to));
      return;
    }
    gst_event_unref(event);
  }
}

static guint gaps_waiting(void) {
  guint gaps = 0;
  GstEvent *event;
  while ((event = gst_harness_try_pull_event(h))) {
    gaps += GST_EVENT_TYPE(event) == GST_EVENT_GAP;
    gst_event_unref(event);
  }
  return gaps;
}

/* A fresh script, and the element on it in a harness with a test clock at `running`. */
static void harness_at(GstClockTime running) {
  memset(&script, 0, sizeof script);
  src = g_object_new(GST_TYPE_DESKAUDIO_SRC, NULL);
  gst_deskaudio_src_set_source(src, &scripted);
  h = gst_harness_new_with_element(GST_ELEMENT(src), NULL, "src");
  gst_harness_use_testclock(h);
  at_time(running);
}

static void setup(void) {
  harness_at(5 * GST_SECOND);
  gst_harness_play(h);
}

static void teardown(void) {
  fail_unless_equals_int(gst_element_set_state(h->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_harness_teardown(h);
  h = NULL, src = NULL;
}

/* A run of frames: timestamps on the sample grid from the first frame's capture time, each
 * frame's own length, offsets in samples; the first starts the stream (DISCONT, pre-skip). */
GST_START_TEST(timestamps_follow_the_sample_clock_from_the_first_capture_time) {
  setup();
  const guint64 first_run_sample = run_sample(6 * GST_SECOND + 123457);
  for (guint k = 0; k < 20; k++) {
    /* capture times wander by up to 0.3 ms: the grid does not follow them */
    Frame f = {.sequence = 7 + k, .sample_clock = 96000 + 480 * k,
               .capture_running_ns = 6 * GST_SECOND + 123457 + k * FRAME_NS + (k % 3) * 100000};
    GstBuffer *b = push(&f, f.capture_running_ns + 12 * GST_MSECOND);
    fail_unless_equals_uint64(GST_BUFFER_PTS(b), sample_time(first_run_sample + 480 * k));
    fail_unless_equals_uint64(GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b), sample_time(first_run_sample + 480 * (k + 1)));
    /* what a payloader makes of it: exactly 480 samples a frame */
    fail_unless_equals_uint64(gst_util_uint64_scale(GST_BUFFER_PTS(b), 48000, GST_SECOND), first_run_sample + 480 * k);
    fail_unless_equals_uint64(GST_BUFFER_OFFSET(b), 96000 + 480 * k);
    fail_unless_equals_uint64(GST_BUFFER_OFFSET_END(b), 96480 + 480 * k);
    fail_unless_equals_int(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT), k == 0);
    fail_unless(gst_buffer_memcmp(b, 0, packet, sizeof packet) == 0 && gst_buffer_get_size(b) == sizeof packet);
    GstAudioClippingMeta *clip = gst_buffer_get_audio_clipping_meta(b);
    if (k == 0) {
      fail_unless(clip != NULL);
      fail_unless_equals_int(clip->format, GST_FORMAT_DEFAULT);
      fail_unless_equals_uint64(clip->start, PRE_SKIP);
      fail_unless_equals_uint64(clip->end, 0);
    } else {
      fail_unless(clip == NULL);
    }
    gst_buffer_unref(b);
  }
  fail_unless_equals_uint64(stat("buffers"), 20);
  fail_unless_equals_uint64(stat("disconts"), 1);
  fail_unless_equals_uint64(stat("resyncs"), 0);
  teardown();
}
GST_END_TEST;

GST_START_TEST(caps_carry_opus_head_and_tags_as_streamheader) {
  setup();
  Frame f = {.sample_clock = 0, .capture_running_ns = 6 * GST_SECOND};
  gst_buffer_unref(push(&f, 6 * GST_SECOND + FRAME_NS));
  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  GstStructure *s = gst_caps_get_structure(caps, 0);
  gint rate, channels, family;
  fail_unless(gst_structure_has_name(s, "audio/x-opus"));
  fail_unless(gst_structure_get_int(s, "rate", &rate) && rate == 48000);
  fail_unless(gst_structure_get_int(s, "channels", &channels) && channels == 2);
  fail_unless(gst_structure_get_int(s, "channel-mapping-family", &family) && family == 0);
  const GValue *headers = gst_structure_get_value(s, "streamheader");
  fail_unless(headers && gst_value_array_get_size(headers) == 2);
  GstBuffer *head = gst_value_get_buffer(gst_value_array_get_value(headers, 0));
  GstBuffer *tags = gst_value_get_buffer(gst_value_array_get_value(headers, 1));
  guint8 bytes[19];
  fail_unless_equals_int(gst_buffer_extract(head, 0, bytes, sizeof bytes), 19);
  fail_unless(memcmp(bytes, "OpusHead", 8) == 0);
  fail_unless_equals_int(bytes[9], 2);                         /* channels */
  fail_unless_equals_int(bytes[10] | bytes[11] << 8, PRE_SKIP);  /* pre-skip */
  fail_unless_equals_int(bytes[18], 0);                        /* mapping family */
  fail_unless(gst_buffer_memcmp(tags, 0, "OpusTags", 8) == 0);
  fail_unless(GST_BUFFER_FLAG_IS_SET(head, GST_BUFFER_FLAG_HEADER));
  gst_caps_unref(caps);
  teardown();
}
GST_END_TEST;

GST_START_TEST(surround_caps_take_the_frames_streams_and_vorbis_order_mapping) {
  setup();
  Frame f = {.sample_clock = 0, .capture_running_ns = 6 * GST_SECOND, .channels = 6};
  gst_buffer_unref(push(&f, 6 * GST_SECOND + FRAME_NS));
  GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
  GstStructure *s = gst_caps_get_structure(caps, 0);
  gint channels, family, streams, coupled;
  fail_unless(gst_structure_get_int(s, "channels", &channels) && channels == 6);
  fail_unless(gst_structure_get_int(s, "channel-mapping-family", &family) && family == 1);
  fail_unless(gst_structure_get_int(s, "stream-count", &streams) && streams == 4);
  fail_unless(gst_structure_get_int(s, "coupled-count", &coupled) && coupled == 2);
  const GValue *mapping = gst_structure_get_value(s, "channel-mapping");
  fail_unless(mapping && gst_value_array_get_size(mapping) == 6);
  for (guint i = 0; i < 6; i++)
    fail_unless_equals_int(g_value_get_int(gst_value_array_get_value(mapping, i)), surround_mapping[i]);
  GstBuffer *head = gst_value_get_buffer(gst_value_array_get_value(gst_structure_get_value(s, "streamheader"), 0));
  guint8 bytes[27];
  fail_unless_equals_int(gst_buffer_extract(head, 0, bytes, sizeof bytes), 27);
  fail_unless_equals_int(bytes[18], 1);
  fail_unless_equals_int(bytes[19], 4);
  fail_unless_equals_int(bytes[20], 2);
  fail_unless(memcmp(bytes + 21, surround_mapping, 6) == 0);
  gst_caps_unref(caps);
  teardown();
}
GST_END_TEST;

/* The gate's silence: GAP events while it lasts (as the gate's count grows), the rest
 * before the AFTER_GAP frame, which keeps the grid and carries DISCONT. */
GST_START_TEST(the_gates_silence_goes_downstream_as_gaps_on_the_grid) {
  setup();
  const GstClockTime t0 = 6 * GST_SECOND;
  const guint64 run0 = run_sample(t0);
  push_steady(3, t0);
  gaps_waiting();
  g_atomic_int_set(&script.gated, 5);
  gst_deskaudio_src_wake(src);
  expect_gap(run0 + 3 * 480, run0 + 8 * 480);
  /* sound returns 4 frames later than the count said so far: those are a gap too */
  Frame back = {.sequence = 3, .sample_clock = 12 * 480, .capture_running_ns = t0 + 12 * FRAME_NS,
                .flags = DESKAUDIO_FRAME_AFTER_GAP};
  g_atomic_int_set(&script.gated, 9);
  GstBuffer *b = push(&back, t0 + 13 * FRAME_NS);
  expect_gap(run0 + 8 * 480, run0 + 12 * 480);
  fail_unless_equals_uint64(GST_BUFFER_PTS(b), sample_time(run0 + 12 * 480));
  fail_unless(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT));
  fail_unless(gst_buffer_get_audio_clipping_meta(b) == NULL);
  gst_buffer_unref(b);
  fail_unless_equals_int(gaps_waiting(), 0);
  fail_unless_equals_uint64(stat("gaps"), 1);
  fail_unless_equals_uint64(stat("gap-events"), 2);
  fail_unless_equals_uint64(stat("resyncs"), 0);
  teardown();
}
GST_END_TEST;

/* The gate's count runs ahead of delivery: frames it held back after a frame still on its
 * way are a gap only once that frame is here, and the gap starts after it. */
GST_START_TEST(gated_frames_wait_for_the_frames_sent_before_them) {
  setup();
  const GstClockTime t0 = 6 * GST_SECOND;
  const guint64 run0 = run_sample(t0);
  push_steady(3, t0);
  gaps_waiting();
  g_atomic_int_set(&script.delivered, 4);
  g_atomic_int_set(&script.gated, 5);
  gst_deskaudio_src_wake(src);
  g_usleep(60000);  /* three of the element's looks at the count */
  fail_unless_equals_int(gaps_waiting(), 0);
  Frame last = {.sequence = 3, .sample_clock = 3 * 480, .capture_running_ns = t0 + 3 * FRAME_NS};
  GstBuffer *b = push(&last, t0 + 4 * FRAME_NS);
  fail_unless_equals_uint64(GST_BUFFER_PTS(b), sample_time(run0 + 3 * 480));
  fail_unless(!GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(b);
  /* the count read with that frame is taken as seen: only what the gate holds back later is a gap */
  g_atomic_int_set(&script.gated, 7);
  gst_deskaudio_src_wake(src);
  expect_gap(run0 + 4 * 480, run0 + 6 * 480);
  teardown();
}
GST_END_TEST;

/* TIME_STEP: timestamps start again from the frame's capture time, with DISCONT. */
GST_START_TEST(a_time_step_sets_the_timestamps_to_the_capture_time_again) {
  setup();
  const GstClockTime t0 = 6 * GST_SECOND;
  push_steady(3, t0);
  Frame stepped = {.sequence = 3, .sample_clock = 3 * 480, .capture_running_ns = t0 + 3 * FRAME_NS + 7 * GST_MSECOND,
                   .flags = DESKAUDIO_FRAME_TIME_STEP};
  GstBuffer *b = push(&stepped, t0 + 5 * FRAME_NS);
  fail_unless_equals_uint64(GST_BUFFER_PTS(b),
                            sample_time(run_sample(t0 + 37 * GST_MSECOND)));
  fail_unless(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(b);
  Frame next = {.sequence = 4, .sample_clock = 4 * 480, .capture_running_ns = t0 + 47 * GST_MSECOND};
  b = push(&next, t0 + 6 * FRAME_NS);
  fail_unless_equals_uint64(GST_BUFFER_PTS(b),
                            sample_time(run_sample(t0 + 37 * GST_MSECOND) + 480));
  fail_unless(!GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(b);
  fail_unless_equals_uint64(stat("resyncs"), 1);
  teardown();
}
GST_END_TEST;

/* Capture times that drift from the grid (another clock than the pipeline's) are followed
 * once the drift passes alignment-threshold, never before. */
GST_START_TEST(drift_past_the_alignment_threshold_realigns_once) {
  setup();
  g_object_set(src, "alignment-threshold", (guint64)(2 * GST_MSECOND), NULL);
  const GstClockTime t0 = 6 * GST_SECOND;
  const guint64 run0 = run_sample(t0);
  guint realigned_at = 0;
  for (guint k = 0; k < 30; k++) {
    /* 0.1 ms more per frame: past 2 ms at the 21st */
    Frame f = {.sequence = k, .sample_clock = 480 * k, .capture_running_ns = t0 + k * (FRAME_NS + 100 * GST_USECOND)};
    GstBuffer *b = push(&f, f.capture_running_ns + FRAME_NS);
    if (GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT) && k > 0) {
      fail_unless_equals_int(realigned_at, 0);
      realigned_at = k;
      fail_unless_equals_uint64(GST_BUFFER_PTS(b),
                                sample_time(run_sample(f.capture_running_ns)));
    } else if (!realigned_at) {
      fail_unless_equals_uint64(GST_BUFFER_PTS(b), sample_time(run0 + 480 * k));
    }
    gst_buffer_unref(b);
  }
  fail_unless_equals_int(realigned_at, 21);
  fail_unless_equals_uint64(stat("resyncs"), 1);
  teardown();
}
GST_END_TEST;

/* 10 ms frames, then 20 ms: one timeline, each buffer its own length, no DISCONT. */
GST_START_TEST(a_frame_length_change_keeps_the_timeline) {
  setup();
  const GstClockTime t0 = 6 * GST_SECOND;
  const guint64 run0 = run_sample(t0);
  guint64 sample = 0;
  for (guint k = 0; k < 6; k++) {
    guint16 samples = k < 3 ? 480 : 960;
    Frame f = {.sequence = k, .sample_clock = sample, .capture_running_ns = t0 + sample * GST_SECOND / 48000,
               .samples = samples};
    GstBuffer *b = push(&f, f.capture_running_ns + 2 * samples * GST_SECOND / 48000);
    fail_unless_equals_uint64(GST_BUFFER_PTS(b), sample_time(run0 + sample));
    fail_unless_equals_uint64(GST_BUFFER_DURATION(b), sample_time(run0 + sample + samples) - sample_time(run0 + sample));
    fail_unless_equals_int(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT), k == 0);
    gst_buffer_unref(b);
    sample += samples;
  }
  teardown();
}
GST_END_TEST;

/* Loss (a sequence hole, or the sender's AFTER_LOSS) is DISCONT on the grid, not a gap. */
GST_START_TEST(loss_is_a_discont_without_a_gap) {
  setup();
  const GstClockTime t0 = 6 * GST_SECOND;
  const guint64 run0 = run_sample(t0);
  const guint32 sequences[4] = {0, 1, 4, 5};
  const guint64 positions[4] = {0, 1, 4, 6};
  const guint8 flags[4] = {0, 0, 0, DESKAUDIO_FRAME_AFTER_LOSS};
  for (guint k = 0; k < 4; k++) {
    Frame f = {.sequence = sequences[k], .sample_clock = 480 * positions[k],
               .capture_running_ns = t0 + positions[k] * FRAME_NS, .flags = flags[k]};
    GstBuffer *b = push(&f, f.capture_running_ns + FRAME_NS);
    fail_unless_equals_uint64(GST_BUFFER_PTS(b), sample_time(run0 + 480 * positions[k]));
    fail_unless_equals_int(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT), k != 1);
    gst_buffer_unref(b);
  }
  fail_unless_equals_int(gaps_waiting(), 0);
  fail_unless_equals_uint64(stat("resyncs"), 0);
  teardown();
}
GST_END_TEST;

/* Bytes that are not an AudioFrame are counted and never pushed; the stream goes on. */
GST_START_TEST(bad_frames_are_counted_and_dropped) {
  setup();
  const guint8 junk[40] = "not a frame at all";
  gst_deskaudio_src_take_frame(src, junk, sizeof junk);
  gst_deskaudio_src_take_frame(src, junk, 3);
  Frame f = {.sample_clock = 0, .capture_running_ns = 6 * GST_SECOND};
  GstBuffer *b = push(&f, 6 * GST_SECOND + FRAME_NS);
  fail_unless_equals_uint64(GST_BUFFER_OFFSET(b), 0);
  gst_buffer_unref(b);
  fail_unless_equals_uint64(stat("invalid"), 2);
  fail_unless_equals_uint64(stat("buffers"), 1);
  teardown();
}
GST_END_TEST;

/* The latency: a frame plus 10 ms until measured; then what 5 frames in 100 exceed after
 * their PTS, rounded up to the millisecond plus one, announced with a LATENCY message. */
GST_START_TEST(latency_is_measured_and_announced) {
  setup();
  GstQuery *query = gst_query_new_latency();
  gboolean live;
  GstClockTime min, max;
  fail_unless(gst_pad_peer_query(h->sinkpad, query));
  gst_query_parse_latency(query, &live, &min, &max);
  fail_unless(live);
  fail_unless_equals_uint64(min, 20 * GST_MSECOND);
  GstBus *bus = gst_bus_new();
  gst_element_set_bus(GST_ELEMENT(src), bus);
  const GstClockTime t0 = 6 * GST_SECOND;
  for (guint k = 0; k < 100; k++) {
    /* delivered 14.2 ms after the first sample, 5 of them 23.5 ms */
    GstClockTime delay = k % 20 == 7 ? 23500 * GST_USECOND : 14200 * GST_USECOND;
    Frame f = {.sequence = k, .sample_clock = 480 * k, .capture_running_ns = t0 + k * FRAME_NS};
    gst_buffer_unref(push(&f, t0 + k * FRAME_NS + delay));
  }
  GstMessage *message = gst_bus_pop_filtered(bus, GST_MESSAGE_LATENCY);
  fail_unless(message != NULL);
  gst_message_unref(message);
  fail_unless(gst_pad_peer_query(h->sinkpad, query));
  gst_query_parse_latency(query, &live, &min, &max);
  /* 23.5 ms after the frame's first sample, 30 ms after its PTS (the pre-skip, 6.5 ms, earlier) */
  fail_unless_equals_uint64(min, 31 * GST_MSECOND);
  fail_unless_equals_uint64(stat("latency"), 31 * GST_MSECOND);
  gst_query_unref(query);
  gst_element_set_bus(GST_ELEMENT(src), NULL);
  gst_object_unref(bus);
  teardown();
}
GST_END_TEST;

/* Frames that sounded before running time began are dropped; the first after them starts. */
GST_START_TEST(frames_from_before_running_time_are_dropped) {
  setup();
  Frame early = {.sample_clock = 0, .capture_running_ns = 0};
  at_time(6 * GST_SECOND);
  /* capture time 0 of running time minus the 6 s the clock ran: before the start */
  guint8 bytes[64];
  gsize len = write_frame(&early, bytes);
  put_le(bytes + 24, MONO_OFFSET - GST_SECOND, 8);
  gst_deskaudio_src_take_frame(src, bytes, len);
  Frame f = {.sequence = 1, .sample_clock = 480, .capture_running_ns = 6 * GST_SECOND};
  GstBuffer *b = push(&f, 6 * GST_SECOND + FRAME_NS);
  fail_unless_equals_uint64(GST_BUFFER_OFFSET(b), 480);
  fail_unless(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(b);
  fail_unless_equals_uint64(stat("dropped-early"), 1);
  teardown();
}
GST_END_TEST;

/* Downstream 0.5 s behind (here: frames taken while paused): the oldest frames go and are
 * counted, 0.5 s of audio kept whatever the frames' length; the stream goes on from the
 * oldest kept. */
static void queue_keeps_half_a_second(guint16 samples, guint taken, guint kept) {
  harness_at(6 * GST_SECOND);
  fail_unless(gst_element_set_state(h->element, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  for (guint k = 0; k < taken; k++) {
    Frame f = {.sequence = k, .sample_clock = (guint64)samples * k, .samples = samples,
               .capture_running_ns = 6 * GST_SECOND + gst_util_uint64_scale(k * samples, GST_SECOND, 48000)};
    take(&f);
  }
  at_time(7 * GST_SECOND);
  gst_harness_play(h);
  for (guint k = taken - kept; k < taken; k++) {
    GstBuffer *b = gst_harness_pull(h);
    fail_unless_equals_uint64(GST_BUFFER_OFFSET(b), (guint64)samples * k);
    gst_buffer_unref(b);
  }
  fail_unless_equals_uint64(stat("dropped-queue"), taken - kept);
  fail_unless_equals_uint64(stat("buffers"), kept);
  teardown();
}

GST_START_TEST(a_queue_past_half_a_second_drops_its_oldest_frames) {
  queue_keeps_half_a_second(480, 60, 50);
}
GST_END_TEST;

GST_START_TEST(a_queue_of_short_frames_also_holds_half_a_second) {
  queue_keeps_half_a_second(120, 260, 200);
}
GST_END_TEST;

GST_START_TEST(properties_have_the_documented_defaults) {
  gboolean app, mic, gate, mute;
  gint bitrate, channels, frame_size;
  guint64 threshold;
  gchar *device, *backend;
  GstDeskAudioSrc *fresh = g_object_new(GST_TYPE_DESKAUDIO_SRC, NULL);
  g_object_get(fresh, "app", &app, "mic", &mic, "gate", &gate, "mute-host", &mute, "bitrate", &bitrate, "channels",
               &channels, "frame-size", &frame_size, "alignment-threshold", &threshold, "device", &device, "backend",
               &backend, NULL);
  fail_unless(app && !mic && gate && !mute);
  fail_unless_equals_int(bitrate, 0);
  fail_unless_equals_int(channels, 2);
  fail_unless_equals_int(frame_size, 10);
  fail_unless_equals_uint64(threshold, 40 * GST_MSECOND);
  fail_unless(device == NULL && backend == NULL);
  g_object_set(fresh, "apps", "firefox, mpv", "frame-size", 5, "bitrate", 96000, NULL);
  gchar *apps;
  g_object_get(fresh, "apps", &apps, "frame-size", &frame_size, "bitrate", &bitrate, NULL);
  fail_unless_equals_string(apps, "firefox, mpv");
  fail_unless_equals_int(frame_size, 5);
  fail_unless_equals_int(bitrate, 96000);
  g_free(apps);
  gst_object_unref(fresh);
}
GST_END_TEST;

/* A source that cannot open: the state change fails with the library's explanation. */
GST_START_TEST(a_source_that_cannot_open_is_an_error_on_the_bus) {
  script.refuse = TRUE;
  GstElement *element = g_object_new(GST_TYPE_DESKAUDIO_SRC, NULL);
  gst_deskaudio_src_set_source(GST_DESKAUDIO_SRC(element), &scripted);
  GstElement *sink = gst_element_factory_make("fakesink", NULL);
  GstElement *pipeline = gst_pipeline_new(NULL);
  gst_bin_add_many(GST_BIN(pipeline), element, sink, NULL);
  fail_unless(gst_element_link(element, sink));
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(message != NULL);
  GError *error;
  gst_message_parse_error(message, &error, NULL);
  fail_unless(error->domain == GST_RESOURCE_ERROR && error->code == GST_RESOURCE_ERROR_OPEN_READ);
  fail_unless(strstr(error->message, "no audio server answered") != NULL, "%s", error->message);
  g_error_free(error);
  gst_message_unref(message);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}
GST_END_TEST;

static Suite *deskaudiosrc_suite(void) {
  Suite *s = suite_create("deskaudiosrc");
  TCase *t = tcase_create("element");
  GST_ELEMENT_REGISTER(deskaudiosrc, NULL);
  tcase_add_test(t, timestamps_follow_the_sample_clock_from_the_first_capture_time);
  tcase_add_test(t, caps_carry_opus_head_and_tags_as_streamheader);
  tcase_add_test(t, surround_caps_take_the_frames_streams_and_vorbis_order_mapping);
  tcase_add_test(t, the_gates_silence_goes_downstream_as_gaps_on_the_grid);
  tcase_add_test(t, gated_frames_wait_for_the_frames_sent_before_them);
  tcase_add_test(t, a_time_step_sets_the_timestamps_to_the_capture_time_again);
  tcase_add_test(t, drift_past_the_alignment_threshold_realigns_once);
  tcase_add_test(t, a_frame_length_change_keeps_the_timeline);
  tcase_add_test(t, loss_is_a_discont_without_a_gap);
  tcase_add_test(t, bad_frames_are_counted_and_dropped);
  tcase_add_test(t, latency_is_measured_and_announced);
  tcase_add_test(t, frames_from_before_running_time_are_dropped);
  tcase_add_test(t, a_queue_past_half_a_second_drops_its_oldest_frames);
  tcase_add_test(t, a_queue_of_short_frames_also_holds_half_a_second);
  suite_add_tcase(s, t);
  TCase *plain = tcase_create("plain");
  tcase_add_test(plain, properties_have_the_documented_defaults);
  tcase_add_test(plain, a_source_that_cannot_open_is_an_error_on_the_bus);
  suite_add_tcase(s, plain);
  return s;
}

GST_CHECK_MAIN(deskaudiosrc);
