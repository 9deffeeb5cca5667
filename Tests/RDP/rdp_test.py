"""deskaudio-rdp-host (adapters/freerdp) heard in xfreerdp3, FreeRDP 3's X client, on a second
private audio server: the host's rig (PipeWire) plays, the client's rig (PulseAudio) is the
client machine.

Asserted, what a loaded machine cannot bend:
- a stereo tone (1 kHz left, 1.5 kHz right, half scale) played into the host's sink is heard at
  the client's sink at its frequency, each channel in its place, its level within 1 dB, over
  30 s, by two clients at once, one offering only Opus and one only PCM (and 10 s through the
  dynamic channel); each block confirmed twice;
- the client's microphone (the tone into the client rig's microphone) recorded on the host from
  the remote microphone the same way;
- faults: a client killed and reconnecting 35 times (over the last 20, file descriptors exactly
  flat), two clients at once, a client with no format of ours, a client that stops reading and
  confirming for 3 s; the host and its capture serving on through each;
- the host built with ASan, UBSan and LeakSanitizer, through three clients with their
  microphones: no report.
Measured into the report: the tones' 10 ms blocks 3 dB down (the client and the rigs play and
record in real time), sink-to-sink latency p50/p99 over 200 bursts in Opus and in PCM, the
frames dropped while a client stalled, the host's RSS over the reconnects.

  rdp_test.py BUILD_DIR HOST_RIG CLIENT_RIG [--only SCENARIO...] [--sanitized-build DIR]
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Browser"))
from signals import sink_to_sink  # noqa: E402
from verdicts import check, failures, measure  # noqa: E402
from verdicts import judge_tone as judge_stereo_tone  # noqa: E402
from verdicts import block_levels, weak_blocks  # noqa: E402

LEFT_HZ, RIGHT_HZ = 1000, 1500
PASSWORD = "deskaudio-test"
OPUS, PCM = "0x704F", "1"
SKIP = 4800  # samples: the recorder's first 100 ms, left out of every judgement of a tone


STARTED = []  # every process the driver started: ended when it ends, whatever happened


def started(process):
    STARTED.append(process)
    return process


def rig_environment(rig):
    """This process's environment pointed at the rig in `rig` (scripts/audio-rig's env file)."""
    environment = {key: value for key, value in os.environ.items() if key not in ("PULSE_SERVER", "PIPEWIRE_REMOTE")}
    with open(os.path.join(rig, "env")) as file:
        for key, value in re.findall(r"^export (\w+)='([^']*)'$", file.read(), re.M):
            environment[key] = value
    return environment


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Host:
    """deskaudio-rdp-host on the host's rig; its stderr kept in a file."""

    def __init__(self, build, rig, work, *arguments):
        self.port = free_port()
        self.log_path = os.path.join(work, f"host-{self.port}.log")
        environment = rig_environment(rig) | {"DESKAUDIO_RDP_PASSWORD": PASSWORD, "WLOG_LEVEL": "INFO"}
        log = open(self.log_path, "w")
        self.process = started(subprocess.Popen([os.path.join(build, "deskaudio-rdp-host"), "--port", str(self.port),
                                         "--certificate-dir", os.path.join(work, "certificate"), *arguments],
                                                env=environment, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 20
        while "listening on" not in self.log() and time.monotonic() < deadline and self.process.poll() is None:
            time.sleep(0.1)
        if "listening on" not in self.log():
            raise RuntimeError(f"the host does not listen on port {self.port}: {self.log()[-500:]}")

    def log(self):
        with open(self.log_path, errors="replace") as file:
            return file.read()

    def stats(self):
        """The counts of each client that left, in order: dicts of the 'client N left' lines."""
        lines = re.findall(r"client (\d+) left: (.*)", self.log())
        return [dict(re.findall(r"([a-z][a-z ]*?) (-?\d+|opus|pcm|none-offered|not-chosen|open|closed)(?:,|$| ms)", text)) |
                {"client": int(number)} for number, text in lines]

    def wait_for(self, text, count=1, timeout=15):
        deadline = time.monotonic() + timeout
        while self.log().count(text) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.log().count(text) >= count

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.process.returncode


class Client:
    """xfreerdp3 on the X server `display`, its sound to `sink` and its microphone from `source`
    on the client's rig."""

    def __init__(self, host, rig, display, work, formats=OPUS, sink="deskaudio_sink", microphone=None, name="client"):
        sound = f"/sound:sys:pulse,dev:{sink},latency:100" + (f",format:{formats}" if formats else "")
        arguments = ["xfreerdp3", f"/v:127.0.0.1:{host.port}", "/u:tester", f"/p:{PASSWORD}", "/cert:ignore",
                     "/sec:tls", "/log-level:WARN", "/size:320x240", sound]
        if microphone:
            arguments.append(f"/microphone:sys:pulse,dev:{microphone}")
        self.log_path = os.path.join(work, f"{name}-{time.monotonic_ns()}.log")
        self.process = started(subprocess.Popen(arguments, env=rig_environment(rig) | {"DISPLAY": display},
                                                stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT))

    def log(self):
        with open(self.log_path, errors="replace") as file:
            return file.read()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def start_xvfb():
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-screen", "0", "640x480x24"],
                              pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    number = os.read(read, 16).decode().strip()  # the pipe stays open: Xvfb exits when it closes (R-RDP-XVFB)
    return server, f":{number}"


def tone_file(path, seconds, left=LEFT_HZ, right=RIGHT_HZ):
    subprocess.run(["sox", "-q", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", str(seconds),
                    "sine", str(left), "sine", str(right), "vol", "0.5"], check=True)
    return path


def play(rig, path, device):
    return started(subprocess.Popen(["paplay", f"--device={device}", path], env=rig_environment(rig)))


def judge_tone(name, pcm, upstream=None):
    """The stereo tone (verdicts.judge_tone) after the recorder's first 100 ms: its frequency and
    level asserted; its 10 ms blocks 3 dB down measured, against a gross budget of 1 % of them.
    The client plays in real time into a sink recorded in real time: on a loaded machine its
    scheduling bends them (0 in every run alone; 2 and 2 in a run beside check-packages).
    `upstream`: as verdicts.judge_tone's."""
    judge_stereo_tone(name, pcm, (LEFT_HZ, RIGHT_HZ), SKIP, weak_blocks_budget=max(len(pcm) // 480 // 100, 1),
                      upstream=upstream)


def judge_two_at_once(name, recordings):
    """Two clients' recordings, made at once, of one capture: a block 3 dB down in both at once
    (within a block) was lost before their paths parted: the host's player, its graph or the
    capture, or the client machine's daemon (R-RDP-SHARED-DIP: 9 blocks down in each client in
    the clean-clone run of f07fd8d, alone, the five listed the same in both). Those are measured against
    R-RIG-PLAYER's gross 5 %; each client's tone is judged as judge_tone, without them.
    `recordings`: the two clients' (label, recording)."""
    (_, first), (_, second) = recordings
    shared = []
    for channel in (0, 1):
        weak = [weak_blocks(block_levels(pcm[SKIP:, channel])) for pcm in (first, second)]
        both = {int(block) for block in weak[0] if np.any(np.abs(weak[1] - block) <= 1)}
        both |= {int(block) for block in weak[1] if np.any(np.abs(weak[0] - block) <= 1)}
        shared.append(both)
        blocks = (min(len(first), len(second)) - SKIP) // 480
        measure(f"{name}: 10 ms blocks more than 3 dB down in both clients at once, channel {channel}", len(both),
                "blocks", max(blocks * 5 // 100, 1), f"of {blocks} {sorted(both)[:8]}", digits="d")
    for label, pcm in recordings:
        judge_tone(label, pcm, upstream=shared)


# The clients of the tone and latency scenarios, at once: each offers one format and plays
# into a sink of its own on the client's rig.
BOTH = ((OPUS, "deskaudio_sink", "opus"), (PCM, "deskaudio_other", "pcm"))


def connect(host, args, display, work, clients, **options):
    """The clients, one after another (the host numbers them in that order), each connected."""
    started = []
    for number, (formats, sink, name) in enumerate(clients, 1):
        client = Client(host, args.client_rig, display, work, formats=formats, sink=sink, name=name, **options)
        if not host.wait_for("connected", number):
            raise RuntimeError(f"{name}: the client did not connect: {client.log()[-600:]}")
        started.append(client)
    return started


def record_at_once(rig, devices, seconds, work):
    """`seconds` of each of `devices` on the rig, recorded at once."""
    environment = rig_environment(rig)
    paths = [os.path.join(work, f"{device}-{time.monotonic_ns()}.raw") for device in devices]
    recorders = [subprocess.Popen(["timeout", str(seconds), "parec", f"--device={device}", "--format=float32le",
                                   "--rate=48000", "--channels=2", "--raw", path], env=environment)
                 for device, path in zip(devices, paths)]
    for recorder in recorders:
        recorder.wait()
    return [np.fromfile(path, dtype="<f4").reshape(-1, 2) if os.path.exists(path) else np.zeros((0, 2), np.float32)
            for path in paths]


def heard(args, display, work, clients=BOTH, seconds=30, channel="static", *host_arguments):
    """The tone played into the host's sink, `seconds` heard at each client's sink, the clients
    at once, through the audio output's `channel` (static or dynamic)."""
    host = Host(args.build, args.host_rig, work, "--no-microphone", *host_arguments)
    player = play(args.host_rig, tone_file(os.path.join(work, "tone.wav"), seconds + 10), "deskaudio_sink")
    started = connect(host, args, display, work, clients)
    time.sleep(2.0)  # the clients' streams start
    recordings = record_at_once(args.client_rig, [f"{sink}.monitor" for _, sink, _ in clients], seconds + 1, work)
    labelled = [(f"{name}: at the client's sink", pcm) for (_, _, name), pcm in zip(clients, recordings)]
    if len(labelled) == 2:
        judge_two_at_once(" and ".join(name for _, _, name in clients) + ": at the clients' sinks", labelled)
    else:
        for label, pcm in labelled:
            judge_tone(label, pcm)
    for client in started:
        client.kill()
    player.kill()
    check(host.wait_for(" left:", len(clients)), "the host saw the clients leave")
    host.stop()
    check(host.log().count(f"audio output opened (the {channel} channel)") == len(clients),
          f"through the {channel} channel")
    stats = sorted(host.stats(), key=lambda line: line["client"])
    for (formats, _, name), line in zip(clients, stats):
        codec = "opus" if formats == OPUS else "pcm"
        check(line.get("codec") == codec, f"{name}: the host sent {codec} {line}")
        sent = int(line.get("frames sent", 0))
        check(sent >= seconds * 100, f"{name}: {sent} frames sent, at least {seconds} s of them")
        confirmations = int(line.get("confirmations", 0))
        check(2 * sent - 60 <= confirmations <= 2 * sent, f"{name}: the client confirmed each block twice, on "
                                                          f"arrival and played, but those in flight when it was "
                                                          f"killed ({confirmations} confirmations)")
        measure(f"{name}: frames dropped as late", int(line.get("dropped late", 0)), "frames", 50, digits="d")


def latency(args, display, work, clients=BOTH):
    """Sink to sink: 200 bursts of 10 ms played into the host's sink, the host's sink and each
    client's recorded with CLOCK_MONOTONIC times (Tests/Browser's stamped recorder)."""
    from stamped_recorder import StampedRecorder
    from web_rig import bursts, play as play_bursts, silence
    host = Host(args.build, args.host_rig, work, "--no-microphone")
    started = connect(host, args, display, work, clients)
    keep_alive = play(args.host_rig, tone_file(os.path.join(work, "quiet.wav"), 2), "deskaudio_sink")
    keep_alive.wait(timeout=10)
    at_host = StampedRecorder(rig_environment(args.host_rig)["XDG_RUNTIME_DIR"])
    at_clients = [StampedRecorder(rig_environment(args.client_rig)["XDG_RUNTIME_DIR"], f"{sink}.monitor")
                  for _, sink, _ in clients]
    player = play_bursts(rig_environment(args.host_rig), os.path.join(work, "bursts.wav"), silence(0.3), bursts(200))
    player.wait(timeout=60)
    time.sleep(1.0)
    host_samples, host_time = at_host.finish()
    for (_, _, name), recorder in zip(clients, at_clients):
        client_samples, client_time = recorder.finish()
        latencies, missed = sink_to_sink(host_samples, host_time, client_samples, client_time, 0, 0)
        measure(f"latency ({name}): bursts missed at the client's sink", len(missed), "of 200", 20,
                f"({len(latencies)} heard)", digits="d")
        if latencies:
            p50, p99 = np.percentile(latencies, 50), np.percentile(latencies, 99)
            print(f"      latency ({name}): sink to sink p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(latencies)} "
                  f"bursts (xfreerdp3 asked for latency:100)", flush=True)
            bound = "(GNOME Remote Desktop drops what waits 50 ms at the server)"
            measure(f"latency ({name}): sink to sink p50 {bound}", p50, "ms", 400)
            measure(f"latency ({name}): sink to sink p99 {bound}", p99, "ms", 600)
    for client in started:
        client.kill()
    host.stop()


def microphone(args, display, work):
    """A tone into the client machine's microphone, 30 s recorded on the host from the remote
    microphone the client's microphone feeds."""
    host = Host(args.build, args.host_rig, work, "--microphone", "deskaudio_rdp_mic")
    client = Client(host, args.client_rig, display, work, formats=OPUS, microphone="deskaudio_mic")
    check(host.wait_for("connected"), "microphone: the client connected")
    player = play(args.client_rig, tone_file(os.path.join(work, "voice.wav"), 45), "deskaudio_micfeed")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        sources = subprocess.run(["pactl", "list", "short", "sources"], env=rig_environment(args.host_rig),
                                 capture_output=True, text=True).stdout
        if "deskaudio_rdp_mic" in sources:
            break
        time.sleep(0.2)
    check("deskaudio_rdp_mic" in sources, "microphone: the remote microphone is a source on the host")
    record_at_once(args.host_rig, ["deskaudio_rdp_mic"], 1.5, work)  # its jitter buffer settles
    pcm, = record_at_once(args.host_rig, ["deskaudio_rdp_mic"], 31, work)
    judge_tone("microphone: recorded on the host", pcm)
    player.kill()
    client.kill()
    check(host.wait_for("left"), "microphone: the host saw the client leave")
    host.stop()
    stats = host.stats()
    check(bool(stats) and stats[0].get("microphone") == "open" and int(stats[0].get("microphone frames", 0)) >= 3000,
          f"microphone: the client's packets became frames for the remote microphone {stats[:1]}")
    check(bool(stats) and int(stats[0].get("microphone invalid", 1)) == 0, "microphone: no packet refused")


def process_counts(pid):
    with open(f"/proc/{pid}/status") as file:
        rss = int(re.search(r"VmRSS:\s+(\d+)", file.read()).group(1))
    return len(os.listdir(f"/proc/{pid}/fd")), rss


def faults(args, display, work):
    """The host serves on: 35 clients killed mid-stream one after another, two at once, one
    with no format of ours, one that stops for 3 s."""
    host = Host(args.build, args.host_rig, work, "--no-microphone")
    player = play(args.host_rig, tone_file(os.path.join(work, "long.wav"), 180), "deskaudio_sink")
    counts = []
    for round_number in range(35):
        client = Client(host, args.client_rig, display, work, name="reconnect")
        connected = host.wait_for("connected", round_number + 1)
        time.sleep(0.7)
        client.kill()
        left = host.wait_for(" left:", round_number + 1)
        if not (connected and left):
            check(False, f"faults: reconnect {round_number + 1}: connected {connected}, left {left}")
            break
        time.sleep(0.3)
        counts.append(process_counts(host.process.pid))
    if len(counts) == 35:
        # Over the last 20: glibc's arenas for the clients' threads warm up over the first dozen (R-RDP-ARENAS).
        fds = [fd for fd, _ in counts]
        check(fds[15] == fds[34], f"faults: the host's file descriptors after reconnects 16 and 35: {fds[15]}, {fds[34]}")
        measure("faults: the host's RSS growth from reconnect 16 to 35", counts[34][1] - counts[15][1], "kB", 1024,
                f"({counts[15][1]} to {counts[34][1]} kB)", digits="d")
        served = [s for s in host.stats() if s.get("codec") == "opus" and int(s.get("frames sent", 0)) > 0]
        check(len(served) == 35, f"faults: each of the 35 clients was sent Opus ({len(served)})")

    first = Client(host, args.client_rig, display, work, name="first")
    second = Client(host, args.client_rig, display, work, name="second", sink="deskaudio_other")
    check(host.wait_for("connected", 37), "faults: two clients at once connected")
    time.sleep(2.0)
    at_first, at_second = record_at_once(args.client_rig, ["deskaudio_sink.monitor", "deskaudio_other.monitor"], 6,
                                         work)
    judge_two_at_once("faults", [("faults: the first of two clients", at_first),
                                 ("faults: the second of two clients", at_second)])
    second.kill()
    first.kill()
    check(host.wait_for(" left:", 37), "faults: both left")

    # A format of no use to us (IMA ADPCM): the client's list, crossed with ours, is empty.
    nothing = Client(host, args.client_rig, display, work, formats="0x11", name="adpcm")
    check(host.wait_for("connected", 38), "faults: a client with no format of ours connected")
    time.sleep(2.0)
    nothing.kill()
    check(host.wait_for(" left:", 38), "faults: it left")
    stats = host.stats()
    check(stats[-1].get("codec") in ("none-offered", "not-chosen") and int(stats[-1].get("frames sent", 1)) == 0,
          f"faults: it was sent nothing {stats[-1]}")
    check("lists no format" in host.log() or "doesn't support any format" in host.log(),
          "faults: the host said why it sends nothing")

    # Stopped (SIGSTOP) for 3 s: it reads nothing and confirms nothing.
    stalled = Client(host, args.client_rig, display, work, name="stalled")
    check(host.wait_for("connected", 39), "faults: the client to stall connected")
    time.sleep(2.0)
    stalled.process.send_signal(signal.SIGSTOP)
    time.sleep(3.0)
    stalled.process.send_signal(signal.SIGCONT)
    time.sleep(2.0)
    after, = record_at_once(args.client_rig, ["deskaudio_sink.monitor"], 6, work)
    judge_tone("faults: after the client's stall", after)
    stalled.kill()
    check(host.wait_for(" left:", 39), "faults: the stalled client left")
    stats = host.stats()[-1]
    dropped = int(stats.get("dropped late", 0))
    check(dropped > 0 and "frames are dropped until it does" in host.log(),
          f"faults: frames were dropped while it did not confirm ({dropped}), and the host said so")
    measure("faults: frames dropped over a 3 s stall (about 280 at a 200 ms bound)", dropped, "frames", 400, digits="d")
    check(host.alive(), "faults: the host runs on")
    player.kill()
    check(host.stop() == 0, "faults: the host stopped cleanly on SIGTERM")


def sanitized(args, display, work):
    """The host built with ASan, UBSan and LeakSanitizer (its --sanitized-build): three clients,
    each with its microphone, one after another; no error and no leak when it stops."""
    if not args.sanitized_build:
        check(False, "sanitized: no --sanitized-build given")
        return
    host = Host(args.sanitized_build, args.host_rig, work, "--microphone", "deskaudio_rdp_mic")
    player = play(args.host_rig, tone_file(os.path.join(work, "sanitized.wav"), 30), "deskaudio_sink")
    voice = play(args.client_rig, tone_file(os.path.join(work, "sanitized-voice.wav"), 30), "deskaudio_micfeed")
    for number in range(1, 4):
        client = Client(host, args.client_rig, display, work, microphone="deskaudio_mic", name="sanitized")
        check(host.wait_for("connected", number), f"sanitized: client {number} connected")
        time.sleep(3.0)
        client.kill()
        check(host.wait_for(" left:", number), f"sanitized: client {number} left")
    player.kill()
    voice.kill()
    status = host.stop()
    log = host.log()
    stats = host.stats()
    check(len(stats) == 3 and all(int(s.get("frames sent", 0)) > 0 and int(s.get("microphone packets", 0)) > 0
                                  for s in stats), f"sanitized: each client was sent audio and sent its microphone {stats}")
    problems = [line for line in log.splitlines() if "Sanitizer" in line or "runtime error" in line]
    check(status == 0 and not problems, f"sanitized: stopped with {status}, no sanitizer report {problems[:3]}")


SCENARIOS = {  # name: what it runs, given (args, display, work)
    "tone": heard,
    "dynamic": lambda *run: heard(*run, ((OPUS, "deskaudio_sink", "opus (dynamic channel)"),), 10, "dynamic",
                                  "--dynamic-channel"),
    "microphone": microphone,
    "latency": latency,
    "faults": faults,
    "sanitized": sanitized,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("host_rig")
    parser.add_argument("client_rig")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--sanitized-build", help="the host built with ASan and UBSan, for the sanitized scenario")
    args = parser.parse_args()
    xvfb, display = start_xvfb()
    try:
        with tempfile.TemporaryDirectory(prefix="deskaudio-rdp-") as work:
            for scenario in args.only:
                print(f"-- {scenario}", flush=True)
                started = time.monotonic()
                try:
                    SCENARIOS[scenario](args, display, work)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    check(False, f"{scenario}: {error}")
                print(f"   ({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        for process in STARTED + [xvfb]:
            if process.poll() is None:
                process.kill()
    print(f"rdp_test: {len(failures)} failed" if failures else "rdp_test: all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
