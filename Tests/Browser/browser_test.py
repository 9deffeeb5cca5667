#!/usr/bin/env python3
"""The web player heard in a real browser (scripts/test-browser starts the rigs and runs this).

`deskaudio serve --web` captures the host rig's default sink; headless Chromium, its audio on a
second private audio server (the browser rig), opens the page; recorders on both rigs' sink
monitors hear what was played and what came out of the browser. Judged on those samples:
frequency, level, no 10 ms block missing that the host's own monitor had, the gate's silence
and return; then three browsers with one stalled, and bad clients against the server.
"""
import argparse
import base64
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np

RATE = 48000
BLOCK = 480  # 10 ms
TONE_DBFS = 20 * np.log10(0.5 / np.sqrt(2))  # a 0.5-amplitude sine: -9.03 dBFS RMS
failures = []


def check(condition, text):
    print(("ok    " if condition else "FAIL  ") + text, flush=True)
    if not condition:
        failures.append(text)


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
    """`deskaudio serve --web 0` on the host rig; keeps each client's latest status."""

    CLIENT = re.compile(r"client (\d+) (\S+): sent (\d+) dropped (\d+)(?:  player (\{[^}]*\}))?")

    def __init__(self, deskaudio, environment, seconds):
        self.process = subprocess.Popen(
            [deskaudio, "serve", "--web", "0", "--seconds", str(seconds)],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        match = re.search(r"http://(\S+)/ ", first)
        if not match:
            raise SystemExit(f"serve did not start: {first}{self.process.stderr.read()}")
        self.address = match.group(1)
        self.url = f"http://{self.address}/"
        self.clients = {}
        self.lock = threading.Lock()
        self.log = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stderr:
            self.log.append(line)
            with self.lock:
                for id, address, sent, dropped, player in self.CLIENT.findall(line):
                    entry = {"address": address, "sent": int(sent), "dropped": int(dropped)}
                    if player:
                        entry["player"] = json.loads(player)
                    self.clients[int(id)] = entry

    def status(self):
        with self.lock:
            return json.loads(json.dumps(self.clients))

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
    """Headless Chromium playing the page into the browser rig's default sink."""

    def __init__(self, url, environment, profile):
        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--autoplay-policy=no-user-gesture-required",
             f"--user-data-dir={profile}", "--no-first-run", "--disable-background-timer-throttling",
             "--disable-renderer-backgrounding", url],
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


class Recorder:
    """pacat on a sink's monitor: 48 kHz stereo float, the left channel kept."""

    def __init__(self, environment, path, monitor="deskaudio_sink.monitor"):
        self.path = path
        self.process = subprocess.Popen(
            ["pacat", "--record", "--raw", f"--device={monitor}", "--format=float32le", "--rate=48000",
             "--channels=2", "--latency-msec=20", path], env=environment)
        time.sleep(0.3)

    def finish(self):
        self.process.send_signal(signal.SIGINT)
        self.process.wait(10)
        return np.fromfile(self.path, dtype=np.float32)[0::2]


def play(environment, path, *segments):
    """Plays a WAV of `segments` ((seconds, amplitude) each: a 1 kHz sine, or silence at 0) to
    the default sink; returns the player."""
    parts = []
    for seconds, amplitude in segments:
        t = np.arange(int(seconds * RATE)) / RATE
        parts.append(amplitude * np.sin(2 * np.pi * 1000 * t))
    pcm = (np.concatenate(parts) * 32767).astype("<i2")
    with open(path, "wb") as file:
        stereo = np.repeat(pcm, 2).tobytes()
        file.write(b"RIFF" + (36 + len(stereo)).to_bytes(4, "little") + b"WAVEfmt ")
        file.write((16).to_bytes(4, "little") + (1).to_bytes(2, "little") + (2).to_bytes(2, "little"))
        file.write(RATE.to_bytes(4, "little") + (RATE * 4).to_bytes(4, "little") + (4).to_bytes(2, "little"))
        file.write((16).to_bytes(2, "little") + b"data" + len(stereo).to_bytes(4, "little") + stereo)
    return subprocess.Popen(["paplay", "--latency-msec=20", path], env=environment)


def block_levels(samples):
    """RMS of each 10 ms block, in dBFS."""
    blocks = samples[: len(samples) // BLOCK * BLOCK].reshape(-1, BLOCK)
    return 10 * np.log10(np.mean(blocks.astype(np.float64) ** 2, axis=1) + 1e-20)


def spans(levels, threshold=-30.0):
    """(first, last) block indexes of each run of blocks above `threshold`, merging holes of
    up to 10 blocks (a dropout inside a tone is not the tone's end)."""
    loud = np.flatnonzero(levels > threshold)
    if len(loud) == 0:
        return []
    result = [[loud[0], loud[0]]]
    for index in loud[1:]:
        if index - result[-1][1] <= 10:
            result[-1][1] = index
        else:
            result.append([index, index])
    return [(int(first), int(last)) for first, last in result]


def frequency(samples):
    """The tone's frequency: median over 1 s windows of the interpolated FFT peak."""
    estimates = []
    window = np.hanning(RATE)
    for start in range(0, len(samples) - RATE, RATE):
        spectrum = np.abs(np.fft.rfft(samples[start:start + RATE] * window))
        peak = int(np.argmax(spectrum[1:-1])) + 1
        a, b, c = np.log(spectrum[peak - 1:peak + 2] + 1e-20)
        estimates.append(peak + 0.5 * (a - c) / (a - 2 * b + c))
    return float(np.median(estimates))


def onset(samples, threshold=0.05):
    """Index of the first sample above `threshold`, to the sample."""
    loud = np.flatnonzero(np.abs(samples) > threshold)
    return int(loud[0]) if len(loud) else None


def tone_and_gate(deskaudio, host, browser_env, work):
    """One browser: a 32 s tone, then the gate (12 s of silence at the host), then the tone."""
    serve = Serve(deskaudio, host, 120)
    browser = Browser(serve.url, browser_env, os.path.join(work, "profile-1"))
    try:
        serve.wait_for_players(1)
        tap = Recorder(host, os.path.join(work, "host.f32"))
        heard = Recorder(browser_env, os.path.join(work, "browser.f32"))
        player = play(host, os.path.join(work, "tone.wav"), (0.5, 0), (32, 0.5), (12, 0), (4, 0.5), (0.5, 0))
        player.wait()
        time.sleep(1.0)
        host_samples, browser_samples = tap.finish(), heard.finish()
        stats = serve.status()
    finally:
        browser.stop()
        serve.stop()
    client = stats[min(stats)]
    player_stats = client.get("player", {})
    print(f"serve: {client['sent']} frames sent, {client['dropped']} dropped; player: {json.dumps(player_stats)}")

    host_levels, browser_levels = block_levels(host_samples), block_levels(browser_samples)
    host_spans, browser_spans = spans(host_levels), spans(browser_levels)
    check(len(host_spans) == 2 and len(browser_spans) == 2,
          f"two tones at the host and in the browser (host {host_spans}, browser {browser_spans})")
    if len(host_spans) != 2 or len(browser_spans) != 2:
        return
    (bs, be), (hs, he) = browser_spans[0], host_spans[0]
    inner = browser_samples[(bs + 10) * BLOCK:(be - 10) * BLOCK]
    check(be - bs >= 3000, f"the browser played the tone for {(be - bs + 1) / 100:.2f} s (32 s played)")
    hz = frequency(inner)
    check(abs(hz - 1000) <= 1.0, f"frequency in the browser {hz:.2f} Hz (1000 played)")
    level = float(np.median(browser_levels[bs + 10:be - 10]))
    check(abs(level - TONE_DBFS) <= 1.0, f"level in the browser {level:.2f} dBFS ({TONE_DBFS:.2f} played)")
    browser_missing = int(np.sum(browser_levels[bs + 3:be - 3] < level - 3))
    host_missing = int(np.sum(host_levels[hs + 3:he - 3] < float(np.median(host_levels[hs:he])) - 3))
    check(browser_missing <= host_missing,
          f"10 ms blocks missing the tone (3 dB low) over {(be - bs) / 100:.0f} s: browser {browser_missing}, "
          f"host monitor {host_missing}")

    # The gate: 12 s of silence (its 8 s of zeros, then the gate), then the tone again.
    (bs2, _), (hs2, _) = browser_spans[1], host_spans[1]
    check(np.all(browser_levels[be + 3:bs2 - 3] < -60), "silence in the browser through the gap")
    check(player_stats.get("gaps", 0) >= 1, f"the player saw the gate's gap ({player_stats.get('gaps')})")
    check(player_stats.get("framesLost", -1) == 0, f"frames lost on loopback: {player_stats.get('framesLost')}")
    # Latency of the tone's end (steady playing) and of its return, to the sample on each
    # recording: their difference is what the return added (the two recorders' offset cancels).
    end_browser = (be + 1) * BLOCK - onset(browser_samples[(be + 1) * BLOCK - 1::-1])
    end_host = (he + 1) * BLOCK - onset(host_samples[(he + 1) * BLOCK - 1::-1])
    back_browser = bs2 * BLOCK - BLOCK + onset(browser_samples[bs2 * BLOCK - BLOCK:])
    back_host = hs2 * BLOCK - BLOCK + onset(host_samples[hs2 * BLOCK - BLOCK:])
    extra_ms = ((back_browser - back_host) - (end_browser - end_host)) / 48
    # The bar is "within p99 + 10 ms": the delay the tone stopped with is at most p99.
    check(extra_ms <= 10,
          f"the tone came back with {extra_ms:+.1f} ms more delay than it stopped with (player delay p99 "
          f"{player_stats.get('delayP99Ms', 0):.1f} ms)")


def stalled_browser(deskaudio, host, browser_env, work):
    """Three browsers; one paused for 5 s: the other two lose nothing."""
    serve = Serve(deskaudio, host, 120)
    browsers = [Browser(serve.url, browser_env, os.path.join(work, f"profile-{n}")) for n in (2, 3, 4)]
    try:
        player = play(host, os.path.join(work, "tone3.wav"), (20, 0.5))
        ids = serve.wait_for_players(3)
        time.sleep(2)
        before = serve.status()
        browsers[2].pause()  # which client id it has does not matter: one of the three
        time.sleep(5)
        browsers[2].resume()
        time.sleep(3)
        after = serve.status()
        player.wait()
    finally:
        for browser in browsers:
            browser.stop()
        serve.stop()
    drops = {id: after[id]["dropped"] - before[id]["dropped"] for id in ids}
    lost = {id: after[id].get("player", {}).get("framesLost", 0) - before[id].get("player", {}).get("framesLost", 0)
            for id in ids}
    print(f"dropped by the server while one browser was paused: {drops}; lost by the players: {lost}")
    paused = [id for id in ids if drops[id] > 0]
    check(len(paused) == 1, f"exactly one client had frames dropped (the paused one): {drops}")
    others = [id for id in ids if id not in paused]
    check(all(drops[id] == 0 and lost[id] == 0 for id in others),
          f"the two others lost nothing: dropped {[drops[i] for i in others]}, lost {[lost[i] for i in others]}")


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


def bad_clients(deskaudio, host, browser_env, work):
    """Garbage, oversized messages and half-closed connections, beside a playing browser."""
    serve = Serve(deskaudio, host, 120)
    browser = Browser(serve.url, browser_env, os.path.join(work, "profile-5"))
    player = play(host, os.path.join(work, "tone5.wav"), (40, 0.5))
    try:
        [good] = serve.wait_for_players(1)
        answers = {}

        def http(request):
            host_, port = serve.address.rsplit(":", 1)
            with socket.create_connection((host_, int(port)), timeout=5) as connection:
                connection.sendall(request)
                return read_some(connection).split(b"\r\n", 1)[0].decode(errors="replace")

        answers["garbage"] = http(b"\x16\x03\x01 not http at all\r\n\r\n")
        answers["wrong path"] = http(f"GET /nothing HTTP/1.1\r\nHost: {serve.address}\r\n\r\n".encode())
        answers["POST"] = http(f"POST / HTTP/1.1\r\nHost: {serve.address}\r\nContent-Length: 3\r\n\r\nabc".encode())
        answers["frames without upgrade"] = http(f"GET /frames HTTP/1.1\r\nHost: {serve.address}\r\n\r\n".encode())
        answers["upgrade elsewhere"] = http(
            (f"GET /other HTTP/1.1\r\nHost: {serve.address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        answers["huge header"] = http(
            f"GET / HTTP/1.1\r\nHost: {serve.address}\r\nX-Big: {'a' * 200000}\r\n\r\n".encode())
        for what, status in answers.items():
            print(f"      {what}: {status}")
        check(answers["wrong path"].startswith("HTTP/1.1 404"), "a wrong path gets 404")
        check(answers["POST"].startswith("HTTP/1.1 405"), "POST gets 405")
        check(answers["frames without upgrade"].startswith("HTTP/1.1 426"), "/frames without an upgrade gets 426")
        check(answers["upgrade elsewhere"].startswith("HTTP/1.1 404"), "a WebSocket upgrade on another path gets 404")
        check(answers["garbage"].startswith("HTTP/1.1 400") or answers["garbage"] == "",
              f"garbage gets 400 or a close ({answers['garbage']!r})")
        check(answers["huge header"].startswith("HTTP/1.1 4") or answers["huge header"] == "",
              f"a 200 kB header gets a 4xx or a close ({answers['huge header']!r})")

        # WebSocket abuse: an oversized message (closed, 1009), a binary message (closed, 1003),
        # garbage after the handshake, and connections left half-closed; hundreds of them.
        def abuse(kind):
            connection = websocket_handshake(serve.address)
            reply = read_some(connection, 4096)
            if kind == "oversized":
                connection.sendall(masked(0x1, b"x" * 100000))
            elif kind == "binary":
                connection.sendall(masked(0x2, b"\x00" * 100))
            elif kind == "garbage":
                connection.sendall(os.urandom(3000))
            elif kind == "half-closed":
                connection.shutdown(socket.SHUT_WR)
            time.sleep(0.05)
            rest = read_some(connection)
            connection.close()
            return reply, rest

        reply, rest = abuse("oversized")
        check(reply.startswith(b"HTTP/1.1 101"), "the WebSocket upgrade on /frames is accepted")
        check(b"\x88" in rest and (b"\x03\xf1" in rest), "an oversized message gets a close with 1009")
        reply, rest = abuse("binary")
        check(b"\x88\x02\x03\xeb" in rest, "a binary message from a browser gets a close with 1003")
        rss_before = serve.rss_kib()
        sent_before = serve.status()[good]["sent"]
        started = time.monotonic()
        for round in range(300):
            abuse(("oversized", "binary", "garbage", "half-closed")[round % 4])
        elapsed = time.monotonic() - started
        time.sleep(1.5)
        rss_after = serve.rss_kib()
        after = serve.status()
        sent_during = after[good]["sent"] - sent_before
        player_stats = after[good].get("player", {})
        check(sent_during >= (elapsed + 1.0) * 100 * 0.9,
              f"the playing browser got {sent_during} frames during {elapsed:.1f} s of 300 bad connections")
        check(after[good]["dropped"] == 0 and player_stats.get("framesLost", 1) == 0,
              f"and lost none (dropped {after[good]['dropped']}, lost {player_stats.get('framesLost')})")
        check(rss_after - rss_before <= 2048,
              f"serve's RSS {rss_before} KiB before 300 bad connections, {rss_after} KiB after")
        check(len(after) <= 2, f"bad connections are gone from the client list ({len(after)} listed)")
    finally:
        player.kill()
        browser.stop()
        serve.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deskaudio", required=True)
    parser.add_argument("--host-rig", required=True)
    parser.add_argument("--browser-rig", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--only", choices=["tone", "stall", "bad"])
    arguments = parser.parse_args()
    host = rig_environment(arguments.host_rig)
    browser = rig_environment(arguments.browser_rig)
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    scenarios = {"tone": tone_and_gate, "stall": stalled_browser, "bad": bad_clients}
    for name, scenario in scenarios.items():
        if arguments.only in (None, name):
            print(f"-- {scenario.__doc__.splitlines()[0]}", flush=True)
            scenario(arguments.deskaudio, host, browser, arguments.work)
    if failures:
        print(f"browser tests: {len(failures)} failed")
        sys.exit(1)
    print("browser tests: all passed")


if __name__ == "__main__":
    main()
