/* deskaudiosrc: a live GStreamer source of the machine's sound as Opus, one buffer per
 * DeskAudio frame (docs/gstreamer.md). MIT licence, as the rest of DeskAudio. */
#ifndef GST_DESKAUDIO_SRC_H
#define GST_DESKAUDIO_SRC_H

#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_DESKAUDIO_SRC (gst_deskaudio_src_get_type())
G_DECLARE_FINAL_TYPE(GstDeskAudioSrc, gst_deskaudio_src, GST, DESKAUDIO_SRC, GstPushSrc)

GST_ELEMENT_REGISTER_DECLARE(deskaudiosrc);

/* Where the element's frames come from: the library (the default), or a test's script.
 * `open` starts capture (frames then arrive through gst_deskaudio_src_take_frame() on any
 * thread) or returns FALSE with `*error` set; `counts` gives the capture's frames held back
 * by the zero gate and the frames it handed over for delivery (sent, less those a slow
 * callback lost), `gated` read after `delivered`; `now_ns` is CLOCK_MONOTONIC, the clock
 * capture times are on. */
typedef struct GstDeskAudioSrcSource {
  gboolean (*open)(GstDeskAudioSrc *src, GError **error);
  void (*close)(GstDeskAudioSrc *src);
  void (*counts)(GstDeskAudioSrc *src, guint64 *delivered, guint64 *gated);
  gint (*pre_skip)(GstDeskAudioSrc *src);
  guint64 (*now_ns)(GstDeskAudioSrc *src);
} GstDeskAudioSrcSource;

/* Test seam: replaces the library with `source` (call before the element starts). */
void gst_deskaudio_src_set_source(GstDeskAudioSrc *src, const GstDeskAudioSrcSource *source);

/* Queues one AudioFrame (copied); frames the parser refuses are counted and dropped. */
void gst_deskaudio_src_take_frame(GstDeskAudioSrc *src, const guint8 *frame, gsize len);

/* Makes a create() that waits look at the source's counts again now (tests). */
void gst_deskaudio_src_wake(GstDeskAudioSrc *src);

G_END_DECLS

#endif
