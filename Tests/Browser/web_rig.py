"""The processes of the browser tests and benchmarks: `deskaudio serve --web`, headless
Chromium, the rigs' environments and what plays into the host's sink."""
import argparse
import base64
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import numpy as np

RATE = 48000


def rig_arguments(description):
    """The options every driver of the two rigs takes (scripts/test-browser, scripts/bench-serve
    pass them): the tool, both rigs' folders and a work folder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--deskaudio", required=True)
    parser.add_argument("--host-rig", required=True)
    parser.add_argument("--browser-rig", required=True)
    parser.add_argument("--work", required=True)
    return parser


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far, s (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rig_environment(rig):
    """The environment a client of the rig in folder `rig` needs (its env file)."""
    environment = dict(os.environ)
    for name in ("PIPEWIRE_REMOTE", "PULSE_SERVER"):
        environment.pop(name, None)
    with open(os.path.join(rig, "env")) as file:
        for line in file:
            match = re.match(r"export (\w+)='(.*)'", line.strip())
            if match:
                environment[match.group(1)] = match.group(2)
    return environment


class Serve:
    """`deskaudio serve --web 0` on the host rig; keeps each client's latest status. Options in
    $DESKAUDIO_SERVE_FLAGS are added (by hand, to compare settings: `--pipewire-quantum 64`)."""

    CLIENT = re.compile(r"client (\d+) (\S+): sent (\d+) dropped (\d+)"
                        r"(?:  mic accepted (\d+) invalid (\d+) too-fast (\d+) another-sender (\d+) early (\d+))?"
                        r"(?:  player (\{[^}]*\}))?")
    MICROPHONE = re.compile(r"microphone (\S+): (?:held by client (\w+), (recorded|not recorded), played (\d+) "
                            r"concealed (\d+) inserted (\d+) late (\d+) dropped (\d+)|(not up))")
    CONNECTED = re.compile(r"^clients (\d+)  ")
    SKIPPED = re.compile(r"skipped by the server (\d+)")
    ZERO_CYCLES = re.compile(r"zero cycles from the server (\d+)")

    def __init__(self, deskaudio, environment, seconds, *options):
        self.process = subprocess.Popen(
            [deskaudio, "serve", "--web", "0", "--seconds", str(seconds), *options,
             *os.environ.get("DESKAUDIO_SERVE_FLAGS", "").split()],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        match = re.search(r"http://(\S+)/ ", first)
        if not match:
            raise SystemExit(f"serve did not start: {first}{self.process.stderr.read()}")
        self.address = match.group(1)
        self.url = f"http://{self.address}/"
        self.clients = {}  # every client a status line named, with its latest line
        self.connected = None  # how many clients serve's latest status line counted
        self.skipped = 0  # frames' worth the server's graph moved past the capture (played as silence)
        self.zero_cycles = 0  # graph cycles of exact zeros the capture got alone inside the sound
        self.microphone = None  # --remote-mic's latest status: {"holder": ID or None, "recorded": bool, ...}
        self.microphone_history = []  # each of them, with its time ("at", time.monotonic())
        self.lock = threading.Lock()
        self.log = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stderr:
            self.log.append(line)
            with self.lock:
                connected = self.CONNECTED.match(line)
                if connected:
                    self.connected = int(connected.group(1))
                    skipped = self.SKIPPED.search(line)
                    self.skipped = int(skipped.group(1)) if skipped else self.skipped
                    zero_cycles = self.ZERO_CYCLES.search(line)
                    self.zero_cycles = int(zero_cycles.group(1)) if zero_cycles else self.zero_cycles
                microphone = self.MICROPHONE.search(line)
                if microphone:
                    holder = microphone.group(2)
                    self.microphone = {"holder": int(holder) if holder and holder.isdigit() else None,
                                       "recorded": microphone.group(3) == "recorded", "at": time.monotonic()}
                    if holder:
                        self.microphone.update(zip(("played", "concealed", "inserted", "late", "dropped"),
                                                   map(int, microphone.group(4, 5, 6, 7, 8))))
                    self.microphone_history.append(self.microphone)
                for id, address, sent, dropped, *mic, player in self.CLIENT.findall(line):
                    entry = {"address": address, "sent": int(sent), "dropped": int(dropped)}
                    if mic[0]:
                        entry["mic"] = dict(zip(("accepted", "invalid", "tooFast", "anotherSender", "early"), map(int, mic)))
                    if player:
                        entry["player"] = json.loads(player)
                    self.clients[int(id)] = entry

    def status(self):
        with self.lock:
            return json.loads(json.dumps(self.clients))

    def microphone_status(self):
        """--remote-mic's latest status line: {"holder": client id or None, "recorded": bool}, or None."""
        with self.lock:
            return dict(self.microphone) if self.microphone else None

    def skipped_by_server(self):
        """Frames' worth of audio the host's server moved past the capture so far (each time
        rounded up to a frame), which the stream carries as silence: serve's status line."""
        with self.lock:
            return self.skipped

    def zero_cycles_from_server(self):
        """Graph cycles of exact zeros the capture got alone between two of sound so far
        (PipeWire 0.3.65 hands one consumer of a monitor such a cycle now and then, with
        nothing lost: a dropout the host's tap does not have): serve's status line."""
        with self.lock:
            return self.zero_cycles

    def connected_count(self):
        """How many clients serve counted in its latest status line (None before the first)."""
        with self.lock:
            return self.connected

    def wait_for_players(self, count, timeout=30):
        """Waits until `count` clients report a running player; their ids."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            playing = [id for id, c in self.status().items() if c.get("player", {}).get("running")
                       and c["player"].get("framesPlayed", 0) > 0]
            if len(playing) >= count:
                return playing
            time.sleep(0.2)
        raise SystemExit(f"{count} playing browsers expected; serve says {self.status()}\n" + "".join(self.log[-5:]))

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as file:
            return int(re.search(r"VmRSS:\s+(\d+)", file.read()).group(1))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


class Browser:
    """Headless Chromium playing the page into the browser rig's default sink. (Run as root,
    it makes its audio and AudioWorklet threads real-time, SCHED_RR 8. Started without
    CAP_SYS_NICE, as a desktop user's browser runs, it played a tone with a dropout the host did
    not have, once in two quiet runs, and the suite's stalls beside it stayed: so it keeps them.)"""

    def __init__(self, url, environment, profile, flags=()):
        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--autoplay-policy=no-user-gesture-required",
             f"--user-data-dir={profile}", "--no-first-run", "--disable-background-timer-throttling",
             "--disable-renderer-backgrounding", *flags, *os.environ.get("DESKAUDIO_CHROMIUM_FLAGS", "").split(), url],
            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def pause(self):
        os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self):
        os.killpg(self.process.pid, signal.SIGCONT)

    def stop(self):
        try:
            os.killpg(self.process.pid, signal.SIGCONT)
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def tone(seconds, amplitude=0.5, hz=1000):
    t = np.arange(int(seconds * RATE)) / RATE
    return amplitude * np.sin(2 * np.pi * hz * t)


def silence(seconds):
    return np.zeros(int(seconds * RATE))


BURST_HZ = (1500, 2000, 2500, 3000)


def bursts(count, interval=0.15):
    """`count` bursts of 10 ms at half scale, one every `interval` seconds; burst i at
    BURST_HZ[i % 4], so a burst lost on the way is never taken for the next one."""
    return np.concatenate([np.concatenate([tone(0.01, 0.5, BURST_HZ[index % 4]), silence(interval - 0.01)])
                           for index in range(count)])


def play(environment, path, *parts, device=None):
    """Plays the concatenated `parts` (mono, ±1) to the default sink (or `device`); returns the player."""
    pcm = (np.concatenate(parts) * 32767).astype("<i2")
    with open(path, "wb") as file:
        stereo = np.repeat(pcm, 2).tobytes()
        file.write(b"RIFF" + (36 + len(stereo)).to_bytes(4, "little") + b"WAVEfmt ")
        file.write((16).to_bytes(4, "little") + (1).to_bytes(2, "little") + (2).to_bytes(2, "little"))
        file.write(RATE.to_bytes(4, "little") + (RATE * 4).to_bytes(4, "little") + (4).to_bytes(2, "little"))
        file.write((16).to_bytes(2, "little") + b"data" + len(stereo).to_bytes(4, "little") + stereo)
    return subprocess.Popen(["paplay", "--latency-msec=20", *([f"--device={device}"] if device else []), path],
                            env=environment)


def websocket_handshake(address, path="/frames"):
    host, port = address.rsplit(":", 1)
    connection = socket.create_connection((host, int(port)), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET {path} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    return connection


def read_some(connection, limit=65536):
    try:
        return connection.recv(limit)
    except (socket.timeout, ConnectionError):
        return b""


def masked(opcode, payload, fin=True):
    header = bytes([(0x80 if fin else 0) | opcode])
    length = len(payload)
    if length < 126:
        header += bytes([0x80 | length])
    elif length < 65536:
        header += bytes([0x80 | 126]) + length.to_bytes(2, "big")
    else:
        header += bytes([0x80 | 127]) + length.to_bytes(8, "big")
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
