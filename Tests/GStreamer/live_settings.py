"""Settings changed while playing, seen at deskaudiosrc's pad: `deskaudiosrc ! fakesink`, after
1.5 s `frame-size` set to 5 ms and `bitrate` to 32 kbit/s, 1.5 s more. Runs under the system's
python3 (GStreamer's introspection bindings); prints each buffer as one JSON line:
[PTS, duration, offset, offset_end, bytes, DISCONT, after the change].

  live_settings.py
"""
import json

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def main():
    Gst.init(None)
    pipeline = Gst.parse_launch("deskaudiosrc name=src ! fakesink sync=false")
    source = pipeline.get_by_name("src")
    changed = [False]

    def seen(_pad, info):
        b = info.get_buffer()
        print(json.dumps([b.pts, b.duration, b.offset, b.offset_end, b.get_size(),
                          b.has_flags(Gst.BufferFlags.DISCONT), changed[0]]), flush=True)
        return Gst.PadProbeReturn.OK

    def change():
        changed[0] = True
        source.set_property("frame-size", 5)
        source.set_property("bitrate", 32000)
        return False

    source.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, seen)
    loop = GLib.MainLoop()
    pipeline.set_state(Gst.State.PLAYING)
    GLib.timeout_add(1500, change)
    GLib.timeout_add(3000, loop.quit)
    loop.run()
    pipeline.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
