"""The browser's microphone on the host (issue 64): `deskaudio serve --web --remote-mic`,
headless Chromium whose microphone (the browser rig's default source) hears a tone and then
bursts, and time-stamped recorders on what the microphone heard (the browser rig's feed
monitor) and on what an application records from the host's remote microphone. Judged on
those samples: the tone's frequency and level, no 10 ms block of it missing, the latency
from mouth to recording; and frames from scripted clients, refused and counted exactly."""
import os
import struct
import time

import numpy as np

from signals import BLOCK, block_levels, dropouts, frequency, sink_to_sink, spans
from stamped_recorder import StampedRecorder
from verdicts import check, measure
from web_rig import Browser, Serve, bursts, masked, play, read_some, silence, tone, websocket_handshake

NAME = "viewer_mic"
AMPLITUDE = 0.25
TONE_DBFS = 20 * np.log10(AMPLITUDE / np.sqrt(2))  # -15.05 dBFS RMS
TONE_SECONDS = 36  # the device is up a few seconds after it starts: 30 s of it recorded
# A TOC byte alone: one 10 ms CELT frame of nothing (mono), which libopus decodes as silence.
EMPTY_PACKET = b"\xf0"


def audio_frame(sequence, payload=EMPTY_PACKET, channels=1, flags=4):
    """AudioFrame bytes (docs/wire-format.md, version 1) of a 10 ms mono frame."""
    header = b"DAFR" + struct.pack("<BBBBIIQQHH", 1, flags, channels, 1, 48000, sequence, sequence * 480,
                                   sequence * 10_000_000, 480, len(payload))
    return header + payload


class ScriptedSender:
    """A WebSocket client of /frames that sends what it is told to as binary messages."""

    def __init__(self, address):
        self.connection = websocket_handshake(address)
        self.reply = b""
        deadline = time.monotonic() + 5
        while b"microphone" not in self.reply and time.monotonic() < deadline:
            more = read_some(self.connection, 4096)
            if not more:
                break
            self.reply += more
        self.port = self.connection.getsockname()[1]

    def send(self, payloads, opcode=0x2):
        self.connection.sendall(b"".join(masked(opcode, payload) for payload in payloads))

    def close(self):
        self.connection.close()


def client_of(serve, sender):
    """serve's status entry (and id) for the scripted sender, found by its port."""
    for id, entry in serve.status().items():
        if entry["address"].endswith(f":{sender.port}"):
            return int(id), entry
    return None, {}


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    check(False, f"waited {timeout} s for {what}")
    return False


def browser_microphone(deskaudio, host, browser_env, work):
    """The browser's microphone on the host: its tone recorded from the remote microphone, bad frames refused."""
    serve = Serve(deskaudio, host, 180, "--remote-mic", NAME)
    browser = player = None
    try:
        # A scripted sender alone: 150 frames at once. The first holds the microphone and
        # makes the device; a second of audio (the burst) is taken, the rest refused as too fast.
        first = ScriptedSender(serve.address)
        check(f'"microphone":"{NAME}"'.encode() in first.reply, f"serve tells the page it takes a microphone ({first.reply[-60:]!r})")
        first.send(audio_frame(sequence) for sequence in range(150))
        wait_for(lambda: client_of(serve, first)[1].get("mic", {}).get("tooFast", 0) > 0, 5, "the burst's verdicts")
        time.sleep(0.5)  # two status lines later
        first_id, entry = client_of(serve, first)
        counts = entry.get("mic", {})
        taken = counts.get("accepted", 0) + counts.get("early", 0)
        # 100 frames of credit, and 10 ms more each 10 ms the sending took (a few ms here).
        check(100 <= taken <= 102 and taken + counts.get("tooFast", 0) == 150 and counts.get("invalid") == 0,
              f"a scripted burst of 150 frames: {taken} taken (100 is the 1 s burst), {counts.get('tooFast')} refused as too fast")
        check(wait_for(lambda: (serve.microphone_status() or {}).get("holder") == first_id, 5, "the device"),
              f"the microphone is up, held by the scripted sender ({serve.microphone_status()})")
        first.send([b"microphone off"], opcode=0x1)
        check(wait_for(lambda: (serve.microphone_status() or {}).get("holder") is None, 5, "the device to go"),
              "'microphone off' from its holder takes the device away")
        first.close()

        # The browser: a tone into its microphone, then bursts for the latency.
        mouth = [tone(TONE_SECONDS, AMPLITUDE), silence(1)]
        player = play(browser_env, os.path.join(work, "mouth.wav"), *mouth, bursts(100), silence(1),
                      device="deskaudio_micfeed")
        played_at = time.monotonic()
        browser = Browser(f"{serve.url}?mic=on&micProcessing=off", browser_env, os.path.join(work, "profile-mic"),
                          flags=["--use-fake-ui-for-media-stream"])
        if not wait_for(lambda: (serve.microphone_status() or {}).get("holder") not in (None, first_id), 20,
                        "the browser's microphone"):
            print("".join(serve.log[-3:]))
            return
        started = time.monotonic()
        tap = StampedRecorder(browser_env["XDG_RUNTIME_DIR"], monitor="deskaudio_micfeed.monitor")
        heard = StampedRecorder(host["XDG_RUNTIME_DIR"], monitor=NAME)

        # While it talks: garbage, messages too long to be an AudioFrame, and good frames
        # from a second sender; and one message over the server's limit.
        time.sleep(3)
        second = ScriptedSender(serve.address)
        rng = np.random.default_rng(64)
        second.send(rng.bytes(100) for _ in range(20))
        second.send(rng.bytes(2000) for _ in range(20))
        second.send(audio_frame(sequence) for sequence in range(20))
        time.sleep(1.0)
        second_id, second_entry = client_of(serve, second)
        second.send([b"x" * 5000])
        closed = b""  # (serve's own frames come first: it plays to every client)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            more = read_some(second.connection)
            if not more:
                break
            closed += more
        second.close()
        check(second_entry.get("mic") == {"accepted": 0, "invalid": 40, "tooFast": 0, "anotherSender": 20, "early": 0},
              f"a second sender's 20 garbage, 20 overlong and 20 good frames: refused and counted ({second_entry.get('mic')})")
        check(b"\x88\x02\x03\xf1" in closed, "a message over 4 KiB closes its socket with 1009")

        # The page's count of holes in what its browser captured, through the tone (the bursts'
        # silences are exact zeros too, and would count).
        time.sleep(max(0.0, played_at + TONE_SECONDS + 0.5 - time.monotonic()))
        page = serve.status().get(str((serve.microphone_status() or {}).get("holder")), {}).get("player", {})
        input_holes = page.get("micInputHoles")
        player.wait(timeout=TONE_SECONDS + 40)
        time.sleep(1.0)
        recorded_for = time.monotonic() - started
        (mouth_samples, mouth_time), (host_samples, host_time) = tap.finish(), heard.finish()
        browser_id = serve.microphone_status().get("holder")
        status = serve.status().get(str(browser_id), {})
        microphone_line = next((line for line in reversed(serve.log) if "microphone " in line), "")
        # When the jitter buffer concealed or dropped frames, in s from the recording's start.
        changes, last = [], None
        for entry in serve.microphone_history:
            counts = (entry.get("concealed"), entry.get("inserted"), entry.get("dropped"))
            if entry.get("holder") is not None and counts != last:
                changes.append(f"{entry['at'] - started:+.1f} s: concealed {counts[0]} inserted {counts[1]} dropped {counts[2]}")
                last = counts
    finally:
        if player:
            player.kill()
        if browser:
            browser.stop()
        serve.stop()
    print("      the remote microphone's counts as they changed: " + "; ".join(changes[-12:]))
    print("      serve: " + microphone_line[microphone_line.find("microphone "):].split("  client")[0].strip())
    print(f"      serve: {status.get('mic')}; the page: "
          + ", ".join(f"{key} {value}" for key, value in status.get("player", {}).items() if key.startswith("mic")))

    # The tone as an application recorded it from the remote microphone.
    levels = block_levels(host_samples)
    tone_spans = spans(levels)
    check(len(tone_spans) >= 1, f"the tone was recorded from the remote microphone ({recorded_for:.0f} s recorded)")
    if not tone_spans:
        return
    start, end = tone_spans[0]
    first, last = start + 50, end - 3  # from 0.5 s in: the recording starts at the jitter buffer's delay
    check(last - first >= 2900, f"{(last - first) / 100:.1f} s of the tone recorded (at least 29 s expected)")
    inner = host_samples[first * BLOCK:last * BLOCK]
    hz = frequency(inner)
    check(abs(hz - 1000) <= 1.0, f"frequency {hz:.2f} Hz (1000 played)")
    level = float(np.median(levels[first:last]))
    check(abs(level - TONE_DBFS) <= 1.0, f"level {level:.2f} dBFS ({TONE_DBFS:.2f} played)")
    missing = dropouts(host_samples, levels, first, last, TONE_DBFS - 3)
    mouth_levels = block_levels(mouth_samples)
    mouth_spans = spans(mouth_levels)
    mouth_missing = (dropouts(mouth_samples, mouth_levels, mouth_spans[0][0] + 3, mouth_spans[0][1] - 3, TONE_DBFS - 3)
                     if mouth_spans else [])
    if missing:
        np.save(os.path.join(os.environ.get("DESKAUDIO_KEEP", work), "mic-host.npy"), host_samples)
        np.save(os.path.join(os.environ.get("DESKAUDIO_KEEP", work), "mic-mouth.npy"), mouth_samples)
    # A dip that the browser's microphone already heard (its rig's player starved: R-RIG-PLAYER)
    # reaches the recording within the mouth-to-recording latency (p99 under 70 ms measured;
    # 250 ms allowed): it is not the path's (the CI run of a786863: one such, at 2.1 s).
    heard_at = [mouth_time(block * BLOCK) for block, _, _ in mouth_missing]
    unexplained = [(block, count, digital) for block, count, digital in missing
                   if not any(0 <= host_time(block * BLOCK) - at <= 250e6 for at in heard_at)]
    check(not unexplained, f"no 10 ms block of the tone missing over {(last - first) / 100:.0f} s but where the browser's "
          f"microphone missed it too (blocks 3 dB low, at s: {[round(block / 100, 2) for block, _, _ in missing[:10]]}, "
          f"{len(unexplained)} of them not; what the browser's microphone heard had {len(mouth_missing)} such; the page "
          f"counted {input_holes} holes in what its browser captured, read {page.get('micReadFrom')})")

    # Mouth to recording: each burst from the browser rig's feed to the host's microphone.
    latencies, missed = sink_to_sink(mouth_samples, mouth_time, host_samples, host_time,
                                     (mouth_spans[0][1] + 20) * BLOCK if mouth_spans else 0, (end + 20) * BLOCK)
    if latencies:
        p50, p99 = np.percentile(latencies, [50, 99])
        print(f"      mouth to recording: n={len(latencies)} missed={len(missed)} p50={p50:.1f} ms p99={p99:.1f} ms")
        measure("browser microphone, mouth to recording p50", float(p50), "ms", 300)
        measure("browser microphone, mouth to recording p99", float(p99), "ms", 500)
    check(len(latencies) >= 90, f"{len(latencies)} of 100 bursts matched from mouth to recording ({len(missed)} missed)")
