"""The sending side of the webrtcbin scenario, as a GStreamer WebRTC host writes it:
`deskaudiosrc ! rtpopuspay ! webrtcbin`, its offer (once ICE gathering is complete) served over
HTTP beside the page that answers it (webrtc_page.html), the page's answer and its reports
taken back. Runs under the system's python3 (GStreamer's introspection bindings); prints each
report the page posts, one JSON line, and stops after SECONDS. With 6 or 8 CHANNELS it sends
the 5.1 / 7.1 capture of SINK as MULTIOPUS, its offer's channel_mapping put in WebRTC's order
(rtpopuspay copies GStreamer's, which is Vorbis order, as Ogg Opus has it; Chromium reads the
SDP's in WebRTC's: FL FR FC LFE RL RR (SL SR)), as a host's signalling must.

  webrtc_peer.py PORT SECONDS [CHANNELS SINK]
"""
import re
import http.server
import json
import os
import sys
import threading

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstSdp", "1.0")
gi.require_version("GstWebRTC", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"/multiopus.js": (os.path.join(HERE, "..", "WebRTC", "multiopus.js"), "text/javascript")}
PAGE = (os.path.join(HERE, "webrtc_page.html"), "text/html")
# For each channel in WebRTC's order, its place in Vorbis order.
WEBRTC_FROM_VORBIS = {6: (0, 2, 1, 5, 3, 4), 8: (0, 2, 1, 7, 5, 6, 3, 4)}


def webrtc_channel_order(sdp):
    """The offer with its multiopus channel_mapping listed in WebRTC's channel order."""
    def reorder(match):
        table = match.group(2).split(",")
        order = WEBRTC_FROM_VORBIS.get(len(table))
        return match.group(1) + ",".join(table[i] for i in order) if order else match.group(0)
    return re.sub(r"(channel_mapping=)([0-9,]+)", reorder, sdp)


class Peer:
    def __init__(self, channels, sink):
        source = f"deskaudiosrc device={sink} channels={channels}" if channels > 2 else "deskaudiosrc"
        codec = "MULTIOPUS" if channels > 2 else "OPUS"
        self.pipeline = Gst.parse_launch(
            f"{source} ! rtpopuspay pt=111 ! "
            f"application/x-rtp,media=audio,encoding-name={codec},payload=111,clock-rate=48000 ! "
            "webrtcbin name=send bundle-policy=max-bundle")
        self.webrtc = self.pipeline.get_by_name("send")
        self.offer = None
        self.offer_ready = threading.Event()
        self.webrtc.connect("on-negotiation-needed", self._negotiate)
        self.webrtc.connect("notify::ice-gathering-state", self._gathering)
        bus = self.pipeline.get_bus()
        bus.add_signal_watch()
        bus.connect("message::error", self._error)

    def _error(self, _bus, message):
        error, debug = message.parse_error()
        print(json.dumps({"peer-error": f"{error.message} ({debug})"}), flush=True)

    def _negotiate(self, element):
        element.emit("create-offer", None, Gst.Promise.new_with_change_func(self._offer_created, element, None))

    def _offer_created(self, promise, element, _):
        reply = promise.get_reply()
        offer = reply.get_value("offer") if reply and reply.has_field("offer") else None
        if offer is None:
            print(json.dumps({"peer-error": f"no offer: {reply.to_string() if reply else None}"}), flush=True)
            return
        element.emit("set-local-description", offer, Gst.Promise.new())

    def _gathering(self, element, _spec):
        if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            self.offer = webrtc_channel_order(element.get_property("local-description").sdp.as_text())
            self.offer_ready.set()

    def answer(self, sdp):
        _, message = GstSdp.SDPMessage.new_from_text(sdp)
        answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, message)
        self.webrtc.emit("set-remote-description", answer, Gst.Promise.new())


def serve(peer, port):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _reply(self, body, kind):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/offer":
                peer.offer_ready.wait(20)
                self._reply(json.dumps({"type": "offer", "sdp": peer.offer}).encode(), "application/json")
            else:
                path, kind = FILES.get(self.path, PAGE)
                with open(path, "rb") as file:
                    self._reply(file.read(), kind)

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            if self.path == "/answer":
                GLib.idle_add(peer.answer, json.loads(body)["sdp"])
            else:
                print(body, flush=True)
            self._reply(b"{}", "application/json")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    channels, sink = (int(sys.argv[3]), sys.argv[4]) if len(sys.argv) > 4 else (2, None)
    Gst.init(None)
    peer = Peer(channels, sink)
    serve(peer, port)
    peer.pipeline.set_state(Gst.State.PLAYING)
    loop = GLib.MainLoop()
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    peer.pipeline.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
