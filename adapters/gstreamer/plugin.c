/* The deskaudio GStreamer plugin: deskaudiosrc. */
#include "gstdeskaudiosrc.h"

/* GST_PLUGIN_DEFINE leaves GstPluginDesc's padding to zero-initialization. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static gboolean plugin_init(GstPlugin *plugin) { return GST_ELEMENT_REGISTER(deskaudiosrc, plugin); }

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, deskaudio,
                  "The machine's sound through DeskAudio (PipeWire or PulseAudio), as Opus with capture times",
                  plugin_init, DESKAUDIO_GST_VERSION, "MIT/X11", "DeskAudio", "https://deskaudio.invalid/")
