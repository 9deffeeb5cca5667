#!/usr/bin/env python3
"""Levels of pure tones in a WAV file, per channel: what scripts check decoded audio with.

    tone-levels.py FILE.wav FREQ [FREQ...]

Prints the file's length in seconds on the first line, then one line per channel: the
level of each FREQ (Hz) in dBFS (a full-scale sine: 0), the median over the 100 ms blocks of
the file less its first and last 0.25 s, each measured by a Hann-windowed Goertzel filter (so
one tone does not leak into another's measurement, and a short gap in a tone lowers a block
or two, not the whole measure). 16-bit PCM only (what opusdec and sox write). Standard
library only.
"""
import array
import math
import sys
import wave


def level_dbfs(samples, rate, frequency):
    count = len(samples)
    coefficient = 2 * math.cos(2 * math.pi * frequency / rate)
    previous, before = 0.0, 0.0
    window_sum = 0.0
    for index, sample in enumerate(samples):
        weight = 0.5 - 0.5 * math.cos(2 * math.pi * index / (count - 1))
        window_sum += weight
        previous, before = sample * weight + coefficient * previous - before, previous
    power = previous * previous + before * before - coefficient * previous * before
    amplitude = 2 * math.sqrt(max(power, 0.0)) / window_sum
    return 20 * math.log10(max(amplitude, 1e-9))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    with wave.open(sys.argv[1], "rb") as file:
        if file.getsampwidth() != 2:
            sys.exit("tone-levels: only 16-bit PCM is read")
        channels, rate, frames = file.getnchannels(), file.getframerate(), file.getnframes()
        data = array.array("h", file.readframes(frames))
    print(f"{frames / rate:.3f}")
    margin, block = rate // 4, rate // 10
    for channel in range(channels):
        samples = [value / 32768 for value in data[channel::channels][margin:frames - margin]]
        blocks = [samples[start:start + block] for start in range(0, len(samples) - block + 1, block)]
        if not blocks:
            sys.exit("tone-levels: the file is shorter than 0.6 s")
        levels = []
        for frequency in sys.argv[2:]:
            measured = sorted(level_dbfs(part, rate, float(frequency)) for part in blocks)
            levels.append(f"{measured[len(measured) // 2]:.1f}")
        print(" ".join(levels))


main()
