/* deskaudiosrc: the machine's sound (app audio, the microphone, or both mixed) as Opus
 * buffers, one per DeskAudio frame, time-stamped when their decoded audio sounded.
 * Threads: the library's delivery thread queues frames (take_frame), the streaming thread
 * stamps and pushes them (create); `lock` owns the queue and `flushing`, `capture_lock` the
 * capture, the object lock the settings; the streaming thread alone owns `timeline`. */
#include "gstdeskaudiosrc.h"

#include <deskaudio.h>
#include <gst/audio/audio.h>
#include <gst/pbutils/pbutils.h>
#include <gst/tag/tag.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

GST_DEBUG_CATEGORY_STATIC(deskaudio_src_debug);
#define GST_CAT_DEFAULT deskaudio_src_debug

#define RATE 48000
/* Audio waiting for the streaming thread before the oldest frame is dropped: 0.5 s (R-GST-QUEUE). */
#define QUEUE_SAMPLES (RATE / 2)
/* How often a create() with nothing to push looks at the zero gate's count, µs. */
#define GATE_POLL_US 20000
/* Frames over which the latency is measured; it is raised when 5 of them arrive later. */
#define LATENCY_WINDOW 100
#define LATENCY_LATE_FRAMES 5

#define DEFAULT_ALIGNMENT_THRESHOLD (40 * GST_MSECOND)

typedef struct Layout {
  gint channels, family, streams, coupled;
  guint8 mapping[8];
} Layout;

static Layout layout_of(const guint8 *frame, const deskaudio_frame_info *info) {
  Layout layout = {.channels = info->channels, .family = 0, .streams = 1, .coupled = info->channels - 1};
  if (info->codec == 2) {
    layout.family = 1, layout.streams = frame[36], layout.coupled = frame[37];
    memcpy(layout.mapping, frame + 38, info->channels);
  }
  return layout;
}

/* A frame waiting for the streaming thread: its bytes and what the parser read of them
 * (its payload is the bytes from `header` on; info.payload is not kept). */
typedef struct QueuedFrame {
  GstBuffer *bytes;
  deskaudio_frame_info info;
  gsize header;
  Layout layout;
} QueuedFrame;

static void queued_frame_free(QueuedFrame *frame) {
  gst_buffer_unref(frame->bytes);
  g_free(frame);
}

/* The streaming thread's view of the stream: where the sample clock sits on running time. */
typedef struct Timeline {
  gboolean anchored;
  guint64 anchor_sample;      /* a frame's sample_clock ... */
  guint64 anchor_run_sample;  /* ... and its running time, in whole samples */
  guint64 next_sample;        /* sample_clock just after the last frame pushed */
  guint32 next_sequence;
  guint frame_samples;        /* the last frame's: the gate holds back frames of this length */
  guint64 gated_seen;         /* the gate's count already stamped as gaps or passed over */
  gboolean discont;
  gboolean clip;              /* the next buffer starts an encoder: pre-skip to clip */
  gboolean have_layout;
  Layout layout;
  gint pre_skip;              /* the layout's encoder look-ahead, samples */
  GstClockTime latency;
  gboolean latency_measured;
  GstClockTimeDiff delays[LATENCY_WINDOW];
  guint delay_count;
} Timeline;

typedef struct Settings {
  gboolean app, mic, mute_host, gate;
  gchar *device, *mic_device, *apps, *exclude_apps, *backend;
  gint bitrate, frame_size, channels;
  GstClockTime alignment_threshold;
} Settings;

static void settings_clear(Settings *s) {
  g_free(s->device), g_free(s->mic_device), g_free(s->apps), g_free(s->exclude_apps), g_free(s->backend);
}

typedef struct Counts {
  guint64 taken, buffers, gaps, gap_events, disconts, resyncs, dropped_queue, dropped_early, invalid;
} Counts;

struct _GstDeskAudioSrc {
  GstPushSrc parent;
  Settings settings;                     /* object lock */
  const GstDeskAudioSrcSource *source;
  GMutex capture_lock;                   /* owns `capture`: opening, closing, live settings */
  deskaudio_capture *capture;            /* between open and close */
  GMutex lock;
  GCond arrived;
  GQueue frames;                         /* lock: QueuedFrame */
  guint queued_samples;                  /* lock: what `frames` holds */
  gboolean flushing, lost;               /* lock */
  Counts counts;                         /* lock */
  Timeline timeline;                     /* streaming thread */
};

enum {
  PROP_0, PROP_APP, PROP_MIC, PROP_DEVICE, PROP_MIC_DEVICE, PROP_APPS, PROP_EXCLUDE_APPS,
  PROP_MUTE_HOST, PROP_BITRATE, PROP_FRAME_SIZE, PROP_CHANNELS, PROP_GATE, PROP_BACKEND,
  PROP_ALIGNMENT_THRESHOLD, PROP_STATS,
};

#define GST_TYPE_DESKAUDIO_SRC_FRAME_SIZE (frame_size_get_type())
static GType frame_size_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {2, "2.5 ms", "2.5"}, {5, "5 ms", "5"}, {10, "10 ms", "10"}, {20, "20 ms", "20"}, {0, NULL, NULL}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstDeskAudioSrcFrameSize", values));
  return type;
}
static gint frame_size_us(gint frame_size) { return frame_size == 2 ? 2500 : frame_size * 1000; }

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("audio/x-opus, rate = (int) 48000, channels = (int) [ 1, 8 ], "
                    "channel-mapping-family = (int) { 0, 1 }"));

G_DEFINE_TYPE(GstDeskAudioSrc, gst_deskaudio_src, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE(deskaudiosrc, "deskaudiosrc", GST_RANK_NONE, GST_TYPE_DESKAUDIO_SRC);

/* ---- the library as the source of frames ---- */

static void on_frame(const uint8_t *frame, size_t len, void *user_data) {
  gst_deskaudio_src_take_frame(user_data, frame, len);
}

static const char *event_name(int32_t event) {
  switch (event) {
    case DESKAUDIO_EVENT_CONNECTED: return "connected";
    case DESKAUDIO_EVENT_DISCONNECTED: return "disconnected";
    case DESKAUDIO_EVENT_DEVICE_CHANGED: return "device-changed";
    case DESKAUDIO_EVENT_ERROR: return "error";
    case DESKAUDIO_EVENT_APP_STARTED: return "app-started";
    case DESKAUDIO_EVENT_APP_STOPPED: return "app-stopped";
    case DESKAUDIO_EVENT_STALLED: return "stalled";
    default: return "unknown";
  }
}

/* Each library event becomes an element message "deskaudio-event" (event, detail). */
static void on_event(int32_t event, const char *detail, void *user_data) {
  GstElement *element = user_data;
  if (event == DESKAUDIO_EVENT_DISCONNECTED || event == DESKAUDIO_EVENT_ERROR || event == DESKAUDIO_EVENT_STALLED)
    GST_WARNING_OBJECT(element, "%s: %s", event_name(event), detail);
  else
    GST_INFO_OBJECT(element, "%s: %s", event_name(event), detail);
  GstStructure *s = gst_structure_new("deskaudio-event", "event", G_TYPE_STRING, event_name(event), "detail",
                                      G_TYPE_STRING, detail, NULL);
  gst_element_post_message(element, gst_message_new_element(GST_OBJECT(element), s));
}

static void on_log(int32_t level, const char *message, void *user_data) {
  GstDebugLevel gst_level = level == DESKAUDIO_LOG_ERROR     ? GST_LEVEL_ERROR
                            : level == DESKAUDIO_LOG_WARNING ? GST_LEVEL_WARNING
                            : level == DESKAUDIO_LOG_INFO    ? GST_LEVEL_INFO
                                                             : GST_LEVEL_DEBUG;
  GST_CAT_LEVEL_LOG(deskaudio_src_debug, gst_level, user_data, "%s", message);
}

/* Splits "a, b,c" into names for deskaudio_capture_set_apps(). */
static gchar **app_names(const gchar *list) {
  gchar **names = g_strsplit(list ? list : "", ",", -1);
  guint kept = 0;
  for (guint i = 0; names[i]; i++) {
    g_strstrip(names[i]);
    if (names[i][0]) names[kept++] = names[i]; else g_free(names[i]);
  }
  names[kept] = NULL;
  return names;
}

static int32_t apply_apps(deskaudio_capture *capture, const gchar *only, const gchar *except) {
  gchar **names = app_names(only && only[0] ? only : except);
  guint count = g_strv_length(names);
  int32_t mode = count == 0 ? DESKAUDIO_APPS_ALL : (only && only[0]) ? DESKAUDIO_APPS_ONLY : DESKAUDIO_APPS_ALL_EXCEPT;
  int32_t status = deskaudio_capture_set_apps(capture, mode, (const char *const *)names, count, false);
  g_strfreev(names);
  return status;
}

/* The settings as they are now, strings copied (settings_clear() frees them). */
static Settings settings_snapshot(GstDeskAudioSrc *src) {
  GST_OBJECT_LOCK(src);
  Settings s = src->settings;
  s.device = g_strdup(s.device), s.mic_device = g_strdup(s.mic_device), s.apps = g_strdup(s.apps);
  s.exclude_apps = g_strdup(s.exclude_apps), s.backend = g_strdup(s.backend);
  GST_OBJECT_UNLOCK(src);
  return s;
}

static gboolean failed(int32_t status, const char *what, GError **error) {
  if (status == DESKAUDIO_OK) return FALSE;
  gint code = status == DESKAUDIO_ERROR_NO_DEVICE          ? GST_RESOURCE_ERROR_NOT_FOUND
              : status == DESKAUDIO_ERROR_INVALID_ARGUMENT ? GST_RESOURCE_ERROR_SETTINGS
                                                           : GST_RESOURCE_ERROR_OPEN_READ;
  g_set_error(error, GST_RESOURCE_ERROR, code, "%s: %s (%s)", what, deskaudio_last_error(), deskaudio_strerror(status));
  return TRUE;
}

static gboolean library_open_locked(GstDeskAudioSrc *src, GError **error) {
  deskaudio_capture *capture = deskaudio_capture_create();
  if (!capture) {
    g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ, "no capture: %s", deskaudio_last_error());
    return FALSE;
  }
  Settings s = settings_snapshot(src);

  deskaudio_capture_set_log_callback(capture, on_log, DESKAUDIO_LOG_DEBUG, src);
  deskaudio_capture_set_event_callback(capture, on_event, src);
  deskaudio_capture_set_frame_callback(capture, on_frame, src);
  gboolean bad = (s.backend && failed(deskaudio_capture_set_backend(capture, s.backend), "backend", error)) ||
                 failed(deskaudio_capture_set_channels(capture, s.channels), "channels", error) ||
                 failed(deskaudio_capture_set_frame_duration(capture, frame_size_us(s.frame_size)), "frame-size", error) ||
                 (s.bitrate > 0 && failed(deskaudio_capture_set_bitrate(capture, s.bitrate), "bitrate", error)) ||
                 failed(deskaudio_capture_set_gate(capture, s.gate), "gate", error) ||
                 (s.device && s.device[0] && failed(deskaudio_capture_set_app_device(capture, s.device), "device", error)) ||
                 (s.mic_device && s.mic_device[0] &&
                  failed(deskaudio_capture_set_mic_device(capture, s.mic_device), "mic-device", error)) ||
                 failed(apply_apps(capture, s.apps, s.exclude_apps), "apps", error) ||
                 (s.mute_host && failed(deskaudio_capture_set_mute_host(capture, TRUE), "mute-host", error)) ||
                 (!s.app && !s.mic && failed(DESKAUDIO_ERROR_INVALID_ARGUMENT, "app and mic both false", error)) ||
                 failed(deskaudio_capture_enable(capture, s.mic, s.app), "capture", error);
  settings_clear(&s);
  if (bad) {
    deskaudio_capture_destroy(capture);
    return FALSE;
  }
  src->capture = capture;
  return TRUE;
}

/* The settings a live change makes while the capture opens wait, and then apply to it. */
static gboolean library_open(GstDeskAudioSrc *src, GError **error) {
  g_mutex_lock(&src->capture_lock);
  gboolean opened = library_open_locked(src, error);
  g_mutex_unlock(&src->capture_lock);
  return opened;
}

static void library_close(GstDeskAudioSrc *src) {
  g_mutex_lock(&src->capture_lock);
  deskaudio_capture_destroy(src->capture);  /* no callback runs once it returns */
  src->capture = NULL;
  g_mutex_unlock(&src->capture_lock);
}

static void library_counts(GstDeskAudioSrc *src, guint64 *delivered, guint64 *gated) {
  deskaudio_stats stats = {0};
  (void)(deskaudio_capture_get_stats(src->capture, &stats, sizeof stats) == DESKAUDIO_OK);
  *delivered = stats.frames_sent - stats.frames_dropped_slow_callback;
  *gated = stats.frames_gated;
}

static gint library_pre_skip(GstDeskAudioSrc *src) {
  gint pre_skip = deskaudio_capture_pre_skip(src->capture);
  return pre_skip > 0 ? pre_skip : 0;
}

static guint64 library_now_ns(GstDeskAudioSrc *src) {
  (void)src;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (guint64)now.tv_sec * GST_SECOND + (guint64)now.tv_nsec;
}

static const GstDeskAudioSrcSource library_source = {
    library_open, library_close, library_counts, library_pre_skip, library_now_ns,
};

void gst_deskaudio_src_set_source(GstDeskAudioSrc *src, const GstDeskAudioSrcSource *source) {
  src->source = source ? source : &library_source;
}

/* ---- frames in ---- */

void gst_deskaudio_src_take_frame(GstDeskAudioSrc *src, const guint8 *frame, gsize len) {
  deskaudio_frame_info info;
  QueuedFrame *queued = NULL;
  if (deskaudio_parse_frame(frame, len, &info, sizeof info) == DESKAUDIO_OK) {
    queued = g_new(QueuedFrame, 1);
    *queued = (QueuedFrame){gst_buffer_new_memdup(frame, len), info, len - info.payload_length, layout_of(frame, &info)};
    queued->info.payload = NULL;
  }
  g_mutex_lock(&src->lock);
  src->counts.taken++;
  if (!queued) {
    src->counts.invalid++;
  } else {
    while (src->queued_samples + info.frame_samples > QUEUE_SAMPLES && !g_queue_is_empty(&src->frames)) {
      QueuedFrame *oldest = g_queue_pop_head(&src->frames);
      src->queued_samples -= oldest->info.frame_samples;
      queued_frame_free(oldest);
      src->counts.dropped_queue++;
      src->lost = TRUE;
    }
    src->queued_samples += info.frame_samples;
    g_queue_push_tail(&src->frames, queued);
    g_cond_signal(&src->arrived);
  }
  g_mutex_unlock(&src->lock);
}

void gst_deskaudio_src_wake(GstDeskAudioSrc *src) {
  g_mutex_lock(&src->lock);
  g_cond_signal(&src->arrived);
  g_mutex_unlock(&src->lock);
}

/* ---- the timeline: sample clock to running time ---- */

/* Running time of a sample: ceil, so that a payloader's floor(pts × rate) gives it back exactly. */
static GstClockTime pts_of(const Timeline *t, guint64 sample) {
  return gst_util_uint64_scale_int_ceil(t->anchor_run_sample + (sample - t->anchor_sample), GST_SECOND, RATE);
}

static void push_gap(GstDeskAudioSrc *src, guint64 from_sample, guint64 to_sample) {
  Timeline *t = &src->timeline;
  GstClockTime start = pts_of(t, from_sample);
  GstEvent *gap = gst_event_new_gap(start, pts_of(t, to_sample) - start);
  GST_LOG_OBJECT(src, "gap %" GST_TIME_FORMAT " + %" G_GUINT64_FORMAT " samples", GST_TIME_ARGS(start), to_sample - from_sample);
  gst_pad_push_event(GST_BASE_SRC_PAD(src), gap);
  t->next_sample = to_sample;
  t->discont = TRUE;
  g_mutex_lock(&src->lock);
  src->counts.gap_events++;
  g_mutex_unlock(&src->lock);
}

/* Frames the zero gate held back since the last look are a gap: said downstream now, once
 * every frame sent before them is here (R-GST-GATE-AHEAD; the count read twice around an
 * unchanged `delivered` is one snapshot of the library's stats). */
static void cover_gated_silence(GstDeskAudioSrc *src) {
  Timeline *t = &src->timeline;
  if (!t->anchored) return;
  guint64 delivered, gated, delivered_after, gated_after;
  src->source->counts(src, &delivered, &gated);
  src->source->counts(src, &delivered_after, &gated_after);
  g_mutex_lock(&src->lock);
  gboolean all_here = src->counts.taken >= delivered_after && g_queue_is_empty(&src->frames);
  g_mutex_unlock(&src->lock);
  if (delivered != delivered_after || !all_here || gated <= t->gated_seen) return;
  guint64 frames = gated - t->gated_seen;
  t->gated_seen = gated;
  push_gap(src, t->next_sample, t->next_sample + frames * t->frame_samples);
}

static GstCaps *caps_of(const Layout *l, gint pre_skip) {
  const guint8 *mapping = l->family ? l->mapping : NULL;
  GstCaps *caps = gst_codec_utils_opus_create_caps(RATE, l->channels, l->family, l->streams, l->coupled, mapping);
  GstBuffer *head = gst_codec_utils_opus_create_header(RATE, l->channels, l->family, l->streams, l->coupled,
                                                       mapping, pre_skip, 0);
  GstTagList *tags = gst_tag_list_new_empty();
  GstBuffer *comments = gst_tag_list_to_vorbiscomment_buffer(tags, (const guint8 *)"OpusTags", 8, "DeskAudio");
  gst_tag_list_unref(tags);
  if (!caps || !head || !comments) {
    gst_clear_caps(&caps);
  } else {
    GValue array = G_VALUE_INIT, value = G_VALUE_INIT;
    g_value_init(&array, GST_TYPE_ARRAY);
    GstBuffer *headers[2] = {head, comments};
    for (int i = 0; i < 2; i++) {
      GST_BUFFER_FLAG_SET(headers[i], GST_BUFFER_FLAG_HEADER);
      g_value_init(&value, GST_TYPE_BUFFER);
      gst_value_set_buffer(&value, headers[i]);
      gst_value_array_append_value(&array, &value);
      g_value_unset(&value);
    }
    gst_caps_set_value(caps, "streamheader", &array);
    g_value_unset(&array);
  }
  if (head) gst_buffer_unref(head);
  if (comments) gst_buffer_unref(comments);
  return caps;
}

static int longest_first(const void *a, const void *b) {
  GstClockTimeDiff x = *(const GstClockTimeDiff *)a, y = *(const GstClockTimeDiff *)b;
  return (x < y) - (x > y);
}

/* Raises the latency when LATENCY_LATE_FRAMES of a window came later than it says; the first
 * window sets it either way. */
static void measure_latency(GstDeskAudioSrc *src, GstClockTimeDiff delay) {
  Timeline *t = &src->timeline;
  t->delays[t->delay_count++] = delay;
  if (t->delay_count < LATENCY_WINDOW) return;
  t->delay_count = 0;
  GstClockTimeDiff sorted[LATENCY_WINDOW];
  memcpy(sorted, t->delays, sizeof sorted);
  qsort(sorted, LATENCY_WINDOW, sizeof sorted[0], longest_first);
  guint late = 0;
  while (late < LATENCY_WINDOW && sorted[late] > (GstClockTimeDiff)t->latency) late++;
  GstClockTimeDiff bound = MAX(sorted[LATENCY_LATE_FRAMES - 1], 0);
  GstClockTime measured = gst_util_uint64_scale_ceil(bound, 1, GST_MSECOND) * GST_MSECOND + GST_MSECOND;
  if (!t->latency_measured || (late >= LATENCY_LATE_FRAMES && measured > t->latency)) {
    t->latency_measured = TRUE;
    if (measured == t->latency) return;
    GST_INFO_OBJECT(src, "latency %" GST_TIME_FORMAT " (was %" GST_TIME_FORMAT ")", GST_TIME_ARGS(measured),
                    GST_TIME_ARGS(t->latency));
    GST_OBJECT_LOCK(src);
    t->latency = measured;
    GST_OBJECT_UNLOCK(src);
    gst_element_post_message(GST_ELEMENT(src), gst_message_new_latency(GST_OBJECT(src)));
  }
}

/* Turns one queued AudioFrame into the Opus buffer to push; NULL when it is dropped. */
static GstBuffer *stamp(GstDeskAudioSrc *src, const QueuedFrame *frame, gboolean lost) {
  Timeline *t = &src->timeline;
  const deskaudio_frame_info info = frame->info;
  const Layout layout = frame->layout;

  GstClock *clock = gst_element_get_clock(GST_ELEMENT(src));
  if (!clock) return NULL;
  GstClockTime clock_now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  GstClockTime base = gst_element_get_base_time(GST_ELEMENT(src));
  GstClockTimeDiff running_now = GST_CLOCK_DIFF(base, clock_now);
  if (!t->have_layout || memcmp(&layout, &t->layout, sizeof layout) != 0) {
    t->pre_skip = src->source->pre_skip(src);
    GstCaps *caps = caps_of(&layout, t->pre_skip);
    if (!caps || !gst_base_src_set_caps(GST_BASE_SRC(src), caps)) {
      GST_ELEMENT_ERROR(src, CORE, NEGOTIATION, ("Downstream does not take %d-channel Opus", layout.channels), (NULL));
      gst_clear_caps(&caps);
      return NULL;
    }
    gst_caps_unref(caps);
    t->clip = t->discont = TRUE;
    t->have_layout = TRUE, t->layout = layout;
  }

  /* A packet's PTS is its decoded output's: the encoder's look-ahead (pre-skip) earlier than
   * the frame's first sample, which the decoder gives out pre-skip samples later (R-GST-PRESKIP). */
  GstClockTimeDiff captured = running_now - GST_CLOCK_DIFF(info.capture_time_ns, src->source->now_ns(src)) -
                              (GstClockTimeDiff)gst_util_uint64_scale_int(t->pre_skip, GST_SECOND, RATE);
  if (captured < 0) {  /* sounded before the pipeline's running time began */
    g_mutex_lock(&src->lock);
    src->counts.dropped_early++;
    g_mutex_unlock(&src->lock);
    return NULL;
  }

  guint flags = info.flags;
  if (t->anchored && info.sample_clock > t->next_sample && (flags & DESKAUDIO_FRAME_AFTER_GAP))
    push_gap(src, t->next_sample, info.sample_clock);
  gboolean discont = lost || t->discont || (flags & (DESKAUDIO_FRAME_AFTER_GAP | DESKAUDIO_FRAME_AFTER_LOSS)) ||
                     (t->anchored && info.sequence != t->next_sequence);
  GstClockTimeDiff drift = t->anchored ? captured - (GstClockTimeDiff)pts_of(t, info.sample_clock) : 0;
  GstClockTime threshold;
  GST_OBJECT_LOCK(src);
  threshold = src->settings.alignment_threshold;
  GST_OBJECT_UNLOCK(src);
  if (!t->anchored || (flags & DESKAUDIO_FRAME_TIME_STEP) || info.sample_clock < t->next_sample ||
      (GstClockTime)ABS(drift) > threshold) {
    guint64 run_sample = gst_util_uint64_scale_round(captured, RATE, GST_SECOND);
    if (t->anchored) {  /* never before the end of what was pushed */
      guint64 next_run_sample = t->anchor_run_sample + (t->next_sample - t->anchor_sample);
      run_sample = MAX(run_sample, next_run_sample);
      g_mutex_lock(&src->lock);
      src->counts.resyncs++;
      g_mutex_unlock(&src->lock);
      GST_DEBUG_OBJECT(src, "re-anchored at sample %" G_GUINT64_FORMAT " (drift %" G_GINT64_FORMAT " ns, flags %u)",
                       info.sample_clock, drift, flags);
    }
    t->anchor_sample = info.sample_clock, t->anchor_run_sample = run_sample;
    t->anchored = discont = TRUE;
  }

  GstBuffer *out = gst_buffer_copy_region(frame->bytes, GST_BUFFER_COPY_MEMORY, frame->header, info.payload_length);
  GstClockTime pts = pts_of(t, info.sample_clock);
  GST_BUFFER_PTS(out) = pts;
  GST_BUFFER_DURATION(out) = pts_of(t, info.sample_clock + info.frame_samples) - pts;
  GST_BUFFER_OFFSET(out) = info.sample_clock;
  GST_BUFFER_OFFSET_END(out) = info.sample_clock + info.frame_samples;
  if (discont) GST_BUFFER_FLAG_SET(out, GST_BUFFER_FLAG_DISCONT);
  if (t->clip) gst_buffer_add_audio_clipping_meta(out, GST_FORMAT_DEFAULT, t->pre_skip, 0);
  t->clip = t->discont = FALSE;
  t->next_sample = info.sample_clock + info.frame_samples;
  t->next_sequence = info.sequence + 1;
  t->frame_samples = info.frame_samples;
  guint64 delivered;
  src->source->counts(src, &delivered, &t->gated_seen);
  measure_latency(src, running_now - (GstClockTimeDiff)pts);
  g_mutex_lock(&src->lock);
  src->counts.buffers++;
  src->counts.gaps += (flags & DESKAUDIO_FRAME_AFTER_GAP) != 0;
  src->counts.disconts += discont;
  g_mutex_unlock(&src->lock);
  return out;
}

static GstFlowReturn gst_deskaudio_src_create(GstPushSrc *push_src, GstBuffer **out) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(push_src);
  for (;;) {
    g_mutex_lock(&src->lock);
    QueuedFrame *frame = src->flushing ? NULL : g_queue_pop_head(&src->frames);
    if (frame) src->queued_samples -= frame->info.frame_samples;
    if (!frame && !src->flushing) g_cond_wait_until(&src->arrived, &src->lock, g_get_monotonic_time() + GATE_POLL_US);
    gboolean flushing = src->flushing, lost = frame && src->lost;
    if (lost) src->lost = FALSE;
    g_mutex_unlock(&src->lock);
    if (flushing) {
      if (frame) queued_frame_free(frame);
      return GST_FLOW_FLUSHING;
    }
    if (!frame) {
      cover_gated_silence(src);
      continue;
    }
    *out = stamp(src, frame, lost);
    queued_frame_free(frame);
    if (*out) return GST_FLOW_OK;
  }
}

/* ---- GstBaseSrc ---- */

static gboolean gst_deskaudio_src_start(GstBaseSrc *base) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(base);
  memset(&src->timeline, 0, sizeof src->timeline);
  GST_OBJECT_LOCK(src);
  src->timeline.latency = (GstClockTime)frame_size_us(src->settings.frame_size) * GST_USECOND + 10 * GST_MSECOND;
  GST_OBJECT_UNLOCK(src);
  g_mutex_lock(&src->lock);
  src->flushing = src->lost = FALSE;
  memset(&src->counts, 0, sizeof src->counts);
  g_mutex_unlock(&src->lock);
  GError *error = NULL;
  if (!src->source->open(src, &error)) {
    GST_ELEMENT_ERROR(src, RESOURCE, OPEN_READ, ("Could not capture the machine's sound: %s", error->message), (NULL));
    g_error_free(error);
    return FALSE;
  }
  guint64 delivered;
  src->source->counts(src, &delivered, &src->timeline.gated_seen);
  return TRUE;
}

static gboolean gst_deskaudio_src_stop(GstBaseSrc *base) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(base);
  src->source->close(src);
  g_mutex_lock(&src->lock);
  g_queue_clear_full(&src->frames, (GDestroyNotify)queued_frame_free);
  src->queued_samples = 0;
  g_mutex_unlock(&src->lock);
  return TRUE;
}

static gboolean gst_deskaudio_src_unlock(GstBaseSrc *base) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(base);
  g_mutex_lock(&src->lock);
  src->flushing = TRUE;
  g_cond_broadcast(&src->arrived);
  g_mutex_unlock(&src->lock);
  return TRUE;
}

static gboolean gst_deskaudio_src_unlock_stop(GstBaseSrc *base) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(base);
  g_mutex_lock(&src->lock);
  src->flushing = FALSE;
  g_mutex_unlock(&src->lock);
  return TRUE;
}

/* Caps come with the first frame (its channels and layout), set in create(). */
static gboolean gst_deskaudio_src_negotiate(GstBaseSrc *base) {
  (void)base;
  return TRUE;
}

static gboolean gst_deskaudio_src_query(GstBaseSrc *base, GstQuery *query) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(base);
  if (GST_QUERY_TYPE(query) != GST_QUERY_LATENCY)
    return GST_BASE_SRC_CLASS(gst_deskaudio_src_parent_class)->query(base, query);
  GST_OBJECT_LOCK(src);
  GstClockTime latency = src->timeline.latency;
  GST_OBJECT_UNLOCK(src);
  gst_query_set_latency(query, TRUE, latency, latency + GST_SECOND / 2);
  return TRUE;
}

/* ---- properties ---- */

static GstStructure *stats_of(GstDeskAudioSrc *src) {
  g_mutex_lock(&src->lock);
  Counts c = src->counts;
  g_mutex_unlock(&src->lock);
  GST_OBJECT_LOCK(src);
  GstClockTime latency = src->timeline.latency;
  GST_OBJECT_UNLOCK(src);
  return gst_structure_new("deskaudiosrc-stats", "buffers", G_TYPE_UINT64, c.buffers, "gaps", G_TYPE_UINT64, c.gaps,
                           "gap-events", G_TYPE_UINT64, c.gap_events, "disconts", G_TYPE_UINT64, c.disconts,
                           "resyncs", G_TYPE_UINT64, c.resyncs, "dropped-queue", G_TYPE_UINT64, c.dropped_queue,
                           "dropped-early", G_TYPE_UINT64, c.dropped_early, "invalid", G_TYPE_UINT64, c.invalid,
                           "latency", G_TYPE_UINT64, latency, NULL);
}

/* Passes a setting the library applies while capturing on to it; a refusal is a warning. */
static void apply_live(GstDeskAudioSrc *src, guint prop_id) {
  g_mutex_lock(&src->capture_lock);
  deskaudio_capture *capture = src->capture;
  if (!capture || src->source != &library_source) {
    g_mutex_unlock(&src->capture_lock);
    return;
  }
  Settings s = settings_snapshot(src);
  int32_t status = DESKAUDIO_OK;
  switch (prop_id) {
    case PROP_APP: case PROP_MIC: status = (s.app || s.mic) ? deskaudio_capture_enable(capture, s.mic, s.app) : DESKAUDIO_ERROR_INVALID_ARGUMENT; break;
    case PROP_DEVICE: status = deskaudio_capture_set_app_device(capture, s.device && s.device[0] ? s.device : NULL); break;
    case PROP_MIC_DEVICE: status = deskaudio_capture_set_mic_device(capture, s.mic_device && s.mic_device[0] ? s.mic_device : NULL); break;
    case PROP_APPS: case PROP_EXCLUDE_APPS: status = apply_apps(capture, s.apps, s.exclude_apps); break;
    case PROP_MUTE_HOST: status = deskaudio_capture_set_mute_host(capture, s.mute_host); break;
    case PROP_BITRATE: if (s.bitrate > 0) status = deskaudio_capture_set_bitrate(capture, s.bitrate); break;
    case PROP_FRAME_SIZE: status = deskaudio_capture_set_frame_duration(capture, frame_size_us(s.frame_size)); break;
    case PROP_GATE: status = deskaudio_capture_set_gate(capture, s.gate); break;
    default: break;  /* channels and backend: from the next start */
  }
  settings_clear(&s);
  g_mutex_unlock(&src->capture_lock);
  if (status != DESKAUDIO_OK)
    GST_ELEMENT_WARNING(src, RESOURCE, SETTINGS, ("Setting not applied: %s", deskaudio_last_error()),
                        ("%s", deskaudio_strerror(status)));
}

static void replace_string(gchar **field, const GValue *value) {
  g_free(*field);
  *field = g_value_dup_string(value);
}

static void gst_deskaudio_src_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(object);
  Settings *s = &src->settings;
  GST_OBJECT_LOCK(src);
  switch (prop_id) {
    case PROP_APP: s->app = g_value_get_boolean(value); break;
    case PROP_MIC: s->mic = g_value_get_boolean(value); break;
    case PROP_DEVICE: replace_string(&s->device, value); break;
    case PROP_MIC_DEVICE: replace_string(&s->mic_device, value); break;
    case PROP_APPS: replace_string(&s->apps, value); break;
    case PROP_EXCLUDE_APPS: replace_string(&s->exclude_apps, value); break;
    case PROP_MUTE_HOST: s->mute_host = g_value_get_boolean(value); break;
    case PROP_BITRATE: s->bitrate = g_value_get_int(value); break;
    case PROP_FRAME_SIZE: s->frame_size = g_value_get_enum(value); break;
    case PROP_CHANNELS: s->channels = g_value_get_int(value); break;
    case PROP_GATE: s->gate = g_value_get_boolean(value); break;
    case PROP_BACKEND: replace_string(&s->backend, value); break;
    case PROP_ALIGNMENT_THRESHOLD: s->alignment_threshold = g_value_get_uint64(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); break;
  }
  GST_OBJECT_UNLOCK(src);
  apply_live(src, prop_id);
}

static void gst_deskaudio_src_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(object);
  if (prop_id == PROP_STATS) {
    g_value_take_boxed(value, stats_of(src));
    return;
  }
  Settings *s = &src->settings;
  GST_OBJECT_LOCK(src);
  switch (prop_id) {
    case PROP_APP: g_value_set_boolean(value, s->app); break;
    case PROP_MIC: g_value_set_boolean(value, s->mic); break;
    case PROP_DEVICE: g_value_set_string(value, s->device); break;
    case PROP_MIC_DEVICE: g_value_set_string(value, s->mic_device); break;
    case PROP_APPS: g_value_set_string(value, s->apps); break;
    case PROP_EXCLUDE_APPS: g_value_set_string(value, s->exclude_apps); break;
    case PROP_MUTE_HOST: g_value_set_boolean(value, s->mute_host); break;
    case PROP_BITRATE: g_value_set_int(value, s->bitrate); break;
    case PROP_FRAME_SIZE: g_value_set_enum(value, s->frame_size); break;
    case PROP_CHANNELS: g_value_set_int(value, s->channels); break;
    case PROP_GATE: g_value_set_boolean(value, s->gate); break;
    case PROP_BACKEND: g_value_set_string(value, s->backend); break;
    case PROP_ALIGNMENT_THRESHOLD: g_value_set_uint64(value, s->alignment_threshold); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); break;
  }
  GST_OBJECT_UNLOCK(src);
}

static void gst_deskaudio_src_finalize(GObject *object) {
  GstDeskAudioSrc *src = GST_DESKAUDIO_SRC(object);
  settings_clear(&src->settings);
  g_queue_clear_full(&src->frames, (GDestroyNotify)queued_frame_free);
  g_mutex_clear(&src->lock);
  g_mutex_clear(&src->capture_lock);
  g_cond_clear(&src->arrived);
  G_OBJECT_CLASS(gst_deskaudio_src_parent_class)->finalize(object);
}

static void gst_deskaudio_src_init(GstDeskAudioSrc *src) {
  src->settings = (Settings){.app = TRUE, .gate = TRUE, .frame_size = 10, .channels = 2,
                             .alignment_threshold = DEFAULT_ALIGNMENT_THRESHOLD};
  src->source = &library_source;
  g_mutex_init(&src->lock);
  g_mutex_init(&src->capture_lock);
  g_cond_init(&src->arrived);
  g_queue_init(&src->frames);
  gst_base_src_set_live(GST_BASE_SRC(src), TRUE);
  gst_base_src_set_format(GST_BASE_SRC(src), GST_FORMAT_TIME);
}

#define LIVE " Changeable while playing."
#define NEXT_START " Applies from the next start."

static void gst_deskaudio_src_class_init(GstDeskAudioSrcClass *klass) {
  GObjectClass *object = G_OBJECT_CLASS(klass);
  GstElementClass *element = GST_ELEMENT_CLASS(klass);
  GstBaseSrcClass *base = GST_BASE_SRC_CLASS(klass);
  object->set_property = gst_deskaudio_src_set_property;
  object->get_property = gst_deskaudio_src_get_property;
  object->finalize = gst_deskaudio_src_finalize;
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property(object, PROP_APP, g_param_spec_boolean("app", "App audio",
      "Capture what the machine plays (the default sink's monitor, or the device or apps set)." LIVE, TRUE, rw));
  g_object_class_install_property(object, PROP_MIC, g_param_spec_boolean("mic", "Microphone",
      "Capture the microphone (the default source, or mic-device), mixed with app audio when both are on." LIVE,
      FALSE, rw));
  g_object_class_install_property(object, PROP_DEVICE, g_param_spec_string("device", "Device",
      "The sink whose monitor app audio records (a name `deskaudio devices` lists); unset: the default sink, "
      "followed when it changes." LIVE, NULL, rw));
  g_object_class_install_property(object, PROP_MIC_DEVICE, g_param_spec_string("mic-device", "Microphone device",
      "The source the microphone records; unset: the default source, followed when it changes." LIVE, NULL, rw));
  g_object_class_install_property(object, PROP_APPS, g_param_spec_string("apps", "Applications",
      "Comma-separated applications (name, binary or pid) whose audio alone is captured, wherever they play; "
      "unset: everything. Takes precedence over exclude-apps." LIVE, NULL, rw));
  g_object_class_install_property(object, PROP_EXCLUDE_APPS, g_param_spec_string("exclude-apps", "Excluded applications",
      "Comma-separated applications left out of app audio; this process's own playback is always left out." LIVE,
      NULL, rw));
  g_object_class_install_property(object, PROP_MUTE_HOST, g_param_spec_boolean("mute-host", "Mute host",
      "What app audio records reaches the pipeline but not the machine's speakers." LIVE, FALSE, rw));
  g_object_class_install_property(object, PROP_BITRATE, g_param_spec_int("bitrate", "Bitrate",
      "Opus target bitrate in bit/s (6000-510000); 0: the layout's default (128000 for stereo)." LIVE, 0, 510000, 0,
      rw));
  g_object_class_install_property(object, PROP_FRAME_SIZE, g_param_spec_enum("frame-size", "Frame size",
      "Length of each Opus frame and buffer, ms." LIVE, GST_TYPE_DESKAUDIO_SRC_FRAME_SIZE, 10, rw));
  g_object_class_install_property(object, PROP_CHANNELS, g_param_spec_int("channels", "Channels",
      "1, 2, 6 (5.1) or 8 (7.1); 0: the sink's own layout. Surround is Opus multistream, channel mapping "
      "family 1." NEXT_START, 0, 8, 2, rw_ready));
  g_object_class_install_property(object, PROP_GATE, g_param_spec_boolean("gate", "Zero gate",
      "true: after 800 all-zero frames nothing is encoded, and the silence goes downstream as GAP events "
      "until sound returns (with DISCONT); false: every frame is encoded, silence too (for consumers that "
      "count durations)." LIVE, TRUE, rw));
  g_object_class_install_property(object, PROP_BACKEND, g_param_spec_string("backend", "Backend",
      "\"pipewire\", \"pulse\" or \"auto\" (unset: PipeWire when its daemon answers, else PulseAudio)." NEXT_START,
      NULL, rw_ready));
  g_object_class_install_property(object, PROP_ALIGNMENT_THRESHOLD, g_param_spec_uint64("alignment-threshold",
      "Alignment threshold", "How far (ns) buffer timestamps, which advance by whole samples, may drift from the "
      "capture times before they are set to them again with DISCONT." LIVE, GST_MSECOND, GST_SECOND,
      DEFAULT_ALIGNMENT_THRESHOLD, rw));
  g_object_class_install_property(object, PROP_STATS, g_param_spec_boxed("stats", "Statistics",
      "Counts since start: buffers, gaps (AFTER_GAP frames), gap-events, disconts, resyncs (timestamps set to "
      "the capture times again), dropped-queue (downstream 0.5 s behind), dropped-early (sounded before "
      "running time began), invalid; and the latency reported, ns.",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_set_static_metadata(element, "DeskAudio source", "Source/Audio",
      "The machine's sound (what it plays, chosen apps, the microphone) through PipeWire or PulseAudio, "
      "as Opus with capture times",
      "DeskAudio");
  gst_element_class_add_static_pad_template(element, &src_template);
  gst_type_mark_as_plugin_api(GST_TYPE_DESKAUDIO_SRC_FRAME_SIZE, 0);

  base->start = gst_deskaudio_src_start;
  base->stop = gst_deskaudio_src_stop;
  base->unlock = gst_deskaudio_src_unlock;
  base->unlock_stop = gst_deskaudio_src_unlock_stop;
  base->negotiate = gst_deskaudio_src_negotiate;
  base->query = gst_deskaudio_src_query;
  GST_PUSH_SRC_CLASS(klass)->create = gst_deskaudio_src_create;
  GST_DEBUG_CATEGORY_INIT(deskaudio_src_debug, "deskaudiosrc", 0, "DeskAudio source");
}
