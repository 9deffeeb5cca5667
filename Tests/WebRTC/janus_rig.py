"""Janus (Debian's `janus`) as the SFU of the WebRTC tests: its streaming plugin takes the
RTP that `deskaudio send --rtp` sends to one port and fans it out to every WebRTC viewer.

It runs with a configuration of its own (written into a work folder: only the HTTP transport
and the streaming plugin, ICE on the test network's interface alone, RTP mountpoints of the
streams given), and `JanusSession` speaks its REST API (the same calls the Chromium page in
viewer.html makes in JavaScript)."""
import json
import os
import subprocess
import time
import urllib.request
import uuid

LIBRARIES = "/usr/lib/x86_64-linux-gnu/janus"
STEREO = ("opus", "minptime=10;stereo=1;sprop-stereo=1")  # as the stereo SDP of `send --rtp` has it


def _mountpoint(id, address, port, codec, fmtp):
    return f"""
deskaudio{id}: {{
  type = "rtp"
  id = {id}
  description = "DeskAudio {id}"
  media = (
    {{
      type = "audio"
      mid = "a"
      label = "host audio"
      port = {port}
      iface = "{address}"
      pt = 111
      codec = "{codec}"
      fmtp = "{fmtp}"
    }}
  )
}}
"""


def rtp_ports(mountpoints, rtp_port=5002):
    """The port each of `mountpoints` (ids, in order) takes its RTP on: `rtp_port`,
    `rtp_port` + 2, ... (a sender may need its port before Janus starts)."""
    return {id: rtp_port + 2 * index for index, id in enumerate(mountpoints)}


def _configuration(folder, address, interface, http_port, ports, mountpoints, plugins, transports):
    """The three files Janus reads: its own, the HTTP transport's, the streaming plugin's."""
    return {
        "janus.jcfg": f"""
general: {{
  configs_folder = "{folder}"
  plugins_folder = "{plugins}"
  transports_folder = "{transports}"
  events_folder = "{folder}/none"
  loggers_folder = "{folder}/none"
  debug_level = 4
  log_to_stdout = true
  session_timeout = 120
}}
media: {{
  rtp_port_range = "20000-29999"
}}
nat: {{
  ice_enforce_list = "{interface}"
  ignore_mdns = true
}}
events: {{
  broadcast = false
}}
""",
        "janus.transport.http.jcfg": f"""
general: {{
  json = "plain"
  base_path = "/janus"
  http = true
  port = {http_port}
  ip = "{address}"
  https = false
}}
admin: {{
  admin_http = false
}}
""",
        "janus.plugin.streaming.jcfg": "general: {\n}\n" + "".join(
            _mountpoint(id, address, ports[id], *format) for id, format in mountpoints.items()),
    }


class Janus:
    """`janus` listening on `address` (on `interface`) in a folder of its own under `work`:
    REST API on `http_port`; `mountpoints` maps each mountpoint's id to its codec and fmtp
    (`STEREO`, or `multiopus` and the surround SDP's fmtp), their RTP on `rtp_port`,
    `rtp_port` + 2, ... (`rtp_address(id)`). Its log is `janus.log` there."""

    def __init__(self, work, address, interface, mountpoints, http_port=8088, rtp_port=5002):
        self.folder = os.path.join(work, "janus")
        self.url = f"http://{address}:{http_port}/janus"
        self.address = address
        self.ports = rtp_ports(mountpoints, rtp_port)
        plugins, transports = (os.path.join(self.folder, name) for name in ("plugins", "transports"))
        for folder, library in ((plugins, "plugins/libjanus_streaming.so"),
                                (transports, "transports/libjanus_http.so")):
            os.makedirs(folder, exist_ok=True)
            os.symlink(os.path.join(LIBRARIES, library), os.path.join(folder, os.path.basename(library)))
        os.makedirs(os.path.join(self.folder, "none"), exist_ok=True)
        for name, text in _configuration(self.folder, address, interface, http_port, self.ports, mountpoints,
                                         plugins, transports).items():
            with open(os.path.join(self.folder, name), "w") as file:
                file.write(text)
        self.log_path = os.path.join(self.folder, "janus.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            ["janus", "--config", os.path.join(self.folder, "janus.jcfg"), "--configs-folder", self.folder],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                if request(self.url.replace("/janus", "/janus/info"), None)["janus"] == "server_info":
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"janus did not start; its log:\n{self.tail()}")
            time.sleep(0.2)

    def rtp_address(self, mountpoint):
        """HOST:PORT where `mountpoint` takes its RTP."""
        return f"{self.address}:{self.ports[mountpoint]}"

    def tail(self, lines=30):
        with open(self.log_path, errors="replace") as file:
            return "".join(file.readlines()[-lines:])

    def mountpoint(self, id):
        """What the streaming plugin says of mountpoint `id` (its `info` request): the RTP it
        has received, the viewers it has."""
        session = JanusSession(self.url)
        try:
            return session.message({"request": "info", "id": id})["plugindata"]["data"]["info"]
        finally:
            session.destroy()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


def request(url, body, timeout=10):
    """One JSON request to Janus's REST API (GET when `body` is None); its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=timeout) as answer:
        return json.loads(answer.read())


class JanusSession:
    """A Janus session with the streaming plugin attached, over the REST API (synchronous:
    each viewer's thread or coroutine calls it through an executor)."""

    def __init__(self, url):
        self.url = url
        self.session = self._send(url, {"janus": "create"})["data"]["id"]
        self.handle = self._send(f"{url}/{self.session}", {"janus": "attach",
                                                           "plugin": "janus.plugin.streaming"})["data"]["id"]

    @staticmethod
    def _send(url, body):
        body = dict(body, transaction=uuid.uuid4().hex)
        answer = request(url, body)
        if answer.get("janus") == "error":
            raise RuntimeError(f"janus: {answer['error']}")
        return answer

    def message(self, body, jsep=None):
        """A message to the plugin; its synchronous answer (`ack` for an asynchronous one)."""
        payload = {"janus": "message", "body": body}
        if jsep:
            payload["jsep"] = jsep
        return self._send(f"{self.url}/{self.session}/{self.handle}", payload)

    def event(self, timeout=10):
        """The next event the session has for us (long poll): an asynchronous answer, with
        the offer's `jsep` for a `watch`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = request(f"{self.url}/{self.session}?maxev=1", None, timeout=timeout + 5)
            if answer.get("janus") == "event":
                return answer
        raise TimeoutError("no event from janus")

    def watch(self, mountpoint):
        """Asks to watch `mountpoint`; Janus's SDP offer (a jsep)."""
        self.message({"request": "watch", "id": mountpoint})
        while True:
            event = self.event()
            if "jsep" in event:
                return event["jsep"]
            if "error" in event.get("plugindata", {}).get("data", {}):
                raise RuntimeError(f"janus: {event['plugindata']['data']['error']}")

    def start(self, answer_sdp):
        """Sends our SDP answer; the media starts."""
        self.message({"request": "start"}, {"type": "answer", "sdp": answer_sdp})

    def keepalive(self):
        self._send(f"{self.url}/{self.session}", {"janus": "keepalive"})

    def destroy(self):
        try:
            self._send(f"{self.url}/{self.session}", {"janus": "destroy"})
        except (OSError, RuntimeError):
            pass
