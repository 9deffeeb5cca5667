"""The viewer's room, offline and seeded, for the encoder's echo cancellation through the C API
as a native viewer calls it: every 10 ms it pushes what it is about to play 40 ms ahead
(deskaudio_encoder_push_playback) and what its microphone heard (deskaudio_encoder_push_pcm),
each with its CLOCK_MONOTONIC time (simulated here, so the run is exact and repeatable); the
frames out are decoded by deskaudio_decoder and judged.

The microphone hears the far end (espeak-ng speech, or synthetic music) through a room: a
synthetic impulse response (a direct path after the room's delay, then exponentially decaying
noise for its RT60, Polack's model), plus a near-end talker (another espeak-ng voice) and
noise at -60 dBFS. Figures, each over 10 ms blocks:
- echo return loss enhancement (ERLE) where only the far end plays, after 2 s: median;
- the near-end talker's level in double talk against the clean near end at the microphone;
- a no-echo control: the near end alone, cancellation on;
- with cancellation off, the echo stays (the test can fail);
- reconvergence after the room changes; the delay found; 0.01 % clock drift;
- no heap allocation inside the pushes, the canceller, the encoder and the decoder after each
  run's first 2 s (the driver counts every call to the allocator), webrtc-audio-processing's
  own counted apart and printed.

Usage: echo_rig.py ECHO_DRIVER [--canceller speexdsp|webrtc-aec3] [--in-root] [--quick]
(scripts/test-echo builds the driver, Tests/Echo/echo_driver.c; --in-root runs it in the
Debian 13 root, scripts/server-root, whose PipeWire has WebRTC's AEC3)."""
import argparse
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np
from scipy.signal import fftconvolve, resample_poly


RATE = 48000
# What each canceller reaches in every room, asserted (the run is exact, not timed): under its
# figures, so that a change that loses cancellation fails. The targets, printed against
# the figures: 25 dB for speech, 20 for music.
FLOOR_DB = {"speexdsp": {"speech": 18, "music": 14}, "webrtc-aec3": {"speech": 26, "music": 24}}
# How far the near end may move in double talk: the 3 dB for speexdsp (0.3-0.7 dB
# measured); AEC3's suppressor takes 2.5-3.6 dB of it, and 8.7 dB beside music in the 250 ms
# room (Debian 13's webrtc-audio-processing 1.3), so 10 dB for it, the issue's 3 printed.
NEAR_DB = {"speexdsp": 3, "webrtc-aec3": 10}
# deskaudio_encoder_stats.echo_canceller of each.
CANCELLER_CODE = {"speexdsp": 1, "webrtc-aec3": 2}
TARGET_DB = {"speech": 25, "music": 20}
BLOCK = 480
AHEAD_BLOCKS = 4  # playback pushed 40 ms before it plays
START_NS = 1_000_000_000_000
FAILURES = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        FAILURES.append(message)


class Runner:
    """Runs Tests/Echo/echo_driver.c's program (`driver`), the command `prefix` before it (the
    Debian 13 root's `scripts/server-root run`), on files in `work` (inside the repository,
    which the root mounts)."""

    class Stats:
        def __init__(self, fields):
            self.echo_canceller, self.echo_delay_ms = int(fields[0]), int(fields[1])
            self.echo_return_loss_enhancement_db = float(fields[2])
            self.echo_blocks, self.echo_blocks_without_playback = int(fields[3]), int(fields[4])
            self.cpu_us_per_block = float(fields[5])
            self.allocations, self.webrtc_allocations, self.counted_blocks = (int(field) for field in fields[6:9])

    def __init__(self, driver, prefix, work):
        self.driver, self.prefix, self.work = driver, prefix, work
        os.makedirs(work, exist_ok=True)
        # Per canceller ("off" too): heap allocations inside the pushes and decodes after
        # each run's first 2 s (ours, and webrtc-audio-processing's own), and the blocks they
        # were counted over.
        self.allocations = {}

    def run(self, microphone, playback, canceller, mic_rate_error=0.0):
        """The decoded result (mono, 48 kHz) of `microphone` pushed against `playback` (both
        48 kHz mono, sample i of each at i / 48000 s; the microphone's times stamped
        (1 + mic_rate_error) too fast) with `canceller` (off, best, speexdsp, webrtc-aec3),
        the stats at the end, and (block, delay ms, ERLE dB) each second."""
        paths = [os.path.join(self.work, name) for name in ("microphone.f32", "playback.f32", "out.f32")]
        np.asarray(microphone, dtype=np.float32).tofile(paths[0])
        np.asarray(playback, dtype=np.float32).tofile(paths[1])
        result = subprocess.run([*self.prefix, self.driver, *paths, canceller, repr(mic_rate_error)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"echo_driver {canceller}: {result.stderr.strip()}")
        lines = [line.split() for line in result.stdout.splitlines()]
        over_time = [((index + 1) * 100, int(fields[1]), float(fields[2]))
                     for index, fields in enumerate(line for line in lines if line[0] == "second")]
        stats = self.Stats(next(line for line in lines if line[0] == "stats")[1:])
        ours, webrtc, counted = self.allocations.get(canceller, (0, 0, 0))
        self.allocations[canceller] = (ours + stats.allocations, webrtc + stats.webrtc_allocations,
                                       counted + stats.counted_blocks)
        return np.fromfile(paths[2], dtype=np.float32), stats, over_time


def speech(texts, voice, seed):
    """espeak-ng reading `texts` with `voice`, at 48 kHz, a short pause between them."""
    rng = np.random.default_rng(seed)
    parts = []
    with tempfile.TemporaryDirectory() as directory:
        for index, text in enumerate(texts):
            path = os.path.join(directory, f"{index}.wav")
            subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", path, text], check=True)
            with wave.open(path) as file:
                samples = np.frombuffer(file.readframes(file.getnframes()), dtype=np.int16) / 32768.0
                rate = file.getframerate()
            parts.append(resample_poly(samples, RATE, rate))
            parts.append(np.zeros(int(RATE * rng.uniform(0.15, 0.4))))
    signal = np.concatenate(parts)
    return signal / np.max(np.abs(signal)) * 0.5


def music(seconds, seed):
    """Chords of decaying harmonic notes with a beat, seeded."""
    rng = np.random.default_rng(seed)
    signal = np.zeros(int(seconds * RATE))
    beat = int(0.25 * RATE)
    t = np.arange(beat * 4) / RATE
    for start in range(0, len(signal) - beat * 4, beat):
        for _ in range(rng.integers(1, 4)):
            f0 = 110 * 2 ** (rng.integers(0, 36) / 12)
            note = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 6)) * np.exp(-t * rng.uniform(1.5, 6))
            signal[start:start + len(note)] += note
    return signal / np.max(np.abs(signal)) * 0.5


def room(delay_ms, rt60, seed):
    """A synthetic room impulse response: a direct path after `delay_ms`, early reflections,
    then exponentially decaying noise reaching -60 dB at `rt60` s."""
    rng = np.random.default_rng(seed)
    length = int(RATE * rt60 * 1.2)
    delay = int(RATE * delay_ms / 1000)
    response = np.zeros(delay + length)
    t = np.arange(length) / RATE
    tail = rng.standard_normal(length) * np.exp(-6.9 * t / rt60)
    response[delay:] = tail * 0.25
    response[delay] = 1.0
    for _ in range(6):  # early reflections within 20 ms
        response[delay + rng.integers(20, int(0.02 * RATE))] += rng.uniform(-0.5, 0.5)
    # Speaker-to-microphone coupling: the echo about as loud as the far end played.
    return response / np.sqrt(np.sum(response ** 2)) * 0.7


def block_levels(signal):
    usable = len(signal) // BLOCK * BLOCK
    return np.mean(signal[:usable].reshape(-1, BLOCK) ** 2, axis=1)


def align(result, reference):
    """`result` shifted to line up with `reference` (the codec's delay), by cross-correlation."""
    span = min(len(result), len(reference), RATE * 4)
    best, best_lag = -1.0, 0
    for lag in range(0, 960):
        value = np.dot(result[lag:lag + span - 960], reference[:span - 960])
        if value > best:
            best, best_lag = value, lag
    shifted = result[best_lag:]
    return np.pad(shifted, (0, max(0, len(reference) - len(shifted))))[:len(reference)]


def db(value):
    return 10 * np.log10(max(value, 1e-20))


def erle_median(microphone, result, echo, near, blocks_from, blocks_to):
    """Median ERLE over the 10 ms blocks in [blocks_from, blocks_to) where the echo sounds
    (above -50 dBFS) and the near end is silent."""
    mic, out = block_levels(microphone), block_levels(result)
    echo_levels, near_levels = block_levels(echo), block_levels(near)
    index = np.arange(len(mic))
    mask = (index >= blocks_from) & (index < blocks_to) & (echo_levels > 1e-5) & (near_levels < 1e-8)
    return float(np.median([db(m / max(o, 1e-20)) for m, o in zip(mic[mask], out[mask])])), int(np.sum(mask))


def near_level(result, echo, near, blocks_from, blocks_to):
    """The result's level less the clean near end's over the blocks in [blocks_from,
    blocks_to) where the near end talks, dB."""
    out, near_levels = block_levels(result), block_levels(near)
    index = np.arange(len(out))
    mask = (index >= blocks_from) & (index < blocks_to) & (near_levels > 1e-4)
    return db(np.sum(out[mask])) - db(np.sum(near_levels[mask])), int(np.sum(mask))


def drifted(signal, ratio):
    """`signal` as a device clock `ratio` times as fast records it (linear interpolation)."""
    positions = np.arange(int(len(signal) / ratio)) * ratio
    return np.interp(positions, np.arange(len(signal)), signal)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("driver")
    parser.add_argument("--canceller", choices=sorted(CANCELLER_CODE), default="speexdsp")
    parser.add_argument("--in-root", action="store_true")
    parser.add_argument("--quick", action="store_true")
    arguments = parser.parse_args()
    canceller, quick = arguments.canceller, arguments.quick
    runner = Runner(arguments.driver, ["scripts/server-root", "run"] if arguments.in_root else [],
                     os.path.join(".build", f"echo-rig-{canceller}"))
    print(f"the canceller: {canceller}{' (in the Debian 13 root)' if arguments.in_root else ''}")
    rng = np.random.default_rng(7)
    far_speech = speech([
        "The quick brown fox jumps over the lazy dog while the meeting goes on.",
        "Remote desktop audio must never send the viewer's own speakers back to the host.",
        "Please share your screen so that everyone can see the quarterly figures.",
        "We measured the echo return loss enhancement in a simulated room.",
        "Each sentence is read by a synthetic voice with pauses in between.",
        "The canceller has to find the delay and learn the room by itself.",
    ] * 2, "en-us", 1)
    near = speech([
        "Hello, can you hear me now? I am talking from the other side.",
        "This is the near end talker speaking over the far end.",
        "Double talk must not be eaten by the suppressor.",
    ], "en-gb+f3", 2)
    seconds = 24
    total = seconds * RATE
    fit = lambda signal: np.pad(signal, (0, max(0, total - len(signal))))[:total]
    noise = rng.standard_normal(total) * 10 ** (-60 / 20)
    # The near end talks from 14 to 20 s, over the far end (double talk).
    near_track = np.zeros(total)
    near_track[14 * RATE:20 * RATE] = fit(near)[:6 * RATE]
    far_only = [(200, 1400), (2000, 2400)]  # blocks: after 2 s, and after the double talk
    figures = {}

    rooms = [(40, 0.2), (120, 0.5), (250, 0.8)] if not quick else [(120, 0.5)]
    for kind, far in (("speech", fit(far_speech)), ("music", fit(music(seconds, 3)))):
        for delay_ms, rt60 in rooms:
            response = room(delay_ms, rt60, seed=delay_ms)
            echo = fftconvolve(far, response)[:total]
            microphone = echo + near_track + noise
            for cancel in (True, False):
                result, stats, over_time = runner.run(microphone, far, canceller if cancel else "off")
                result = align(result, microphone)
                erles = [erle_median(microphone, result, echo, near_track, a, b) for a, b in far_only]
                erle = float(np.median(np.concatenate([[e] * n for e, n in erles if n])))
                near_db, near_blocks = near_level(result, echo, near_track, 1400, 2000)
                label = f"{kind}, room {delay_ms} ms RT60 {rt60} s, cancellation {'on' if cancel else 'off'}"
                print(f"measured: {canceller}: {label}: ERLE median {erle:.1f} dB (2-14 s {erles[0][0]:.1f} dB, 20-24 s after "
                      f"double talk {erles[1][0]:.1f} dB); near end in double talk {near_db:+.1f} dB against the clean "
                      f"near end ({near_blocks} blocks); delay found {stats.echo_delay_ms} ms; CPU "
                      f"{stats.cpu_us_per_block:.0f} us per 10 ms (pushes, canceller, encoder and decoder); "
                      f"delay and ERLE stat each second {[(d, round(e, 1)) for _, d, e in over_time]}")
                if cancel:
                    figures[(kind, delay_ms)] = erle
                    check(stats.echo_canceller == CANCELLER_CODE[canceller],
                          f"{label}: the canceller that ran is {stats.echo_canceller} ({CANCELLER_CODE[canceller]} asked)")
                    floor = FLOOR_DB[canceller][kind]
                    check(erle >= floor, f"{label}: ERLE median {erle:.1f} dB >= {floor} (this canceller's floor)")
                    check(abs(near_db) <= NEAR_DB[canceller],
                          f"{label}: near end in double talk {near_db:+.1f} dB, within {NEAR_DB[canceller]} dB "
                          f"(the issue's target: 3 dB)")
                    check(abs(stats.echo_delay_ms - delay_ms) <= 10,
                          f"{label}: delay found {stats.echo_delay_ms} ms, the room's {delay_ms} ms, within 10 ms")
                else:
                    check(erle < 6, f"{label}: the echo stays without cancellation (ERLE {erle:.1f} dB < 6)")

    # No echo (headphones): the far end pushed, the microphone hears the near end alone.
    far = fit(far_speech)
    alone = np.zeros(total)
    alone[2 * RATE:8 * RATE] = fit(near)[:6 * RATE]
    result, stats, _ = runner.run(alone + noise, far, canceller)
    result = align(result, alone + noise)
    control_db, control_blocks = near_level(result, np.zeros(total), alone, 300, 800)
    print(f"measured: {canceller}: no echo, cancellation on: the near end {control_db:+.2f} dB against itself ({control_blocks} blocks)")
    check(abs(control_db) <= 1, f"no echo: the near end {control_db:+.2f} dB, within 1 dB")

    # The room changes at 12 s (the viewer moves its laptop): ERLE each 500 ms after.
    first, second = room(120, 0.5, seed=120), room(60, 0.3, seed=61)
    echo = np.concatenate([fftconvolve(far, first)[:12 * RATE], fftconvolve(far, second)[12 * RATE:total]])
    result, stats, over_time = runner.run(echo + noise, far, canceller)
    result = align(result, echo + noise)
    windows = []
    for start in range(1200, 2400, 50):
        value, count = erle_median(echo + noise, result, echo, np.zeros(total), start, start + 50)
        windows.append(value if count else float("nan"))
    before, _ = erle_median(echo + noise, result, echo, np.zeros(total), 1000, 1200)
    back = next((index * 0.5 for index, value in enumerate(windows) if value >= before - 3), None)
    over_20 = next((index * 0.5 for index, value in enumerate(windows) if value >= 20), None)
    print(f"measured: {canceller}: room changed at 12 s (120 ms RT60 0.5 s to 60 ms RT60 0.3 s): ERLE {before:.1f} dB before; "
          f"each 500 ms after {[round(v, 1) for v in windows]}; over 20 dB after {over_20} s, back within 3 dB of "
          f"before after {back} s; "
          f"delay found {stats.echo_delay_ms} ms")

    # The microphone's clock 0.01 % fast against the speakers': stamped with CLOCK_MONOTONIC
    # as a viewer stamps (the library lines the two up by those times), and, for comparison,
    # stamped as if its clock kept time.
    response = room(120, 0.5, seed=120)
    for stamped, label in ((True, "stamped with the true times"), (False, "stamped at its nominal rate")):
        ratio = 1 / 1.0001
        echo = drifted(fftconvolve(far, response)[:total], ratio)[:total]
        echo = np.pad(echo, (0, total - len(echo)))
        result, stats, _ = runner.run(echo + noise, far, canceller, mic_rate_error=(ratio - 1) if stamped else 0)
        result = align(result, echo + noise)
        drift_erle, _ = erle_median(echo + noise, result, echo, np.zeros(total), 200, 2400)
        print(f"measured: {canceller}: microphone clock 0.01 % fast, {label}: ERLE median {drift_erle:.1f} dB; delay found {stats.echo_delay_ms} ms")
        if stamped:
            check(drift_erle >= 25, f"microphone clock 0.01 % fast, {label}: ERLE median {drift_erle:.1f} dB >= 25")

    for name, (ours, webrtc, counted) in sorted(runner.allocations.items()):
        check(ours == 0 and counted > 0,
              f"{name}: no heap allocation in the pushes, cancelling, encoding and decoding after each run's first 2 s: "
              f"{ours} in {counted} blocks")
        if webrtc:  # its residual echo detector's, on by default, not switchable through PipeWire's plugin (R-AEC3-ALLOC)
            print(f"measured: {name}: webrtc-audio-processing's own heap allocations: {webrtc} in {counted} blocks "
                  f"({webrtc / counted:.2f} a block)")
    print(f"measured: {canceller}: ERLE medians, cancellation on: {', '.join(f'{k} {d} ms {v:.1f} dB' for (k, d), v in figures.items())}")
    for kind, target in TARGET_DB.items():
        met = [d for (k, d), v in figures.items() if k == kind and v >= target]
        rooms_of_kind = [d for (k, d) in figures if k == kind]
        print(f"target (issue 64), {canceller}: {kind} ERLE median >= {target} dB: met in {len(met)} of {len(rooms_of_kind)} rooms "
              f"({', '.join(f'{d} ms' for d in met) or 'none'})")
    print(f"target (issue 64), {canceller}: reconverged within 1 s of the room's change: over 20 dB after {over_20} s, within 3 dB "
          f"of before after {back} s")
    if FAILURES:
        print(f"{len(FAILURES)} failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
