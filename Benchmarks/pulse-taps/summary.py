#!/usr/bin/env python3
"""Sums up tap-trace outputs: for each application's stream, when its tone played at the
sink (the whole monitor's reads holding it), when its own stream handed it over, how much
came, and the longest wait between two reads of that stream.

    summary.py TRACE...
"""
import collections
import sys

TONES = {"ToneA": 0, "ToneB": 1, "ToneC": 2}  # 440, 1000, 1500 Hz


def summarize(path):
    reads, names = collections.defaultdict(list), {}
    for line in open(path):
        fields = line.split()
        if len(fields) == 6:
            reads[int(fields[1])].append((float(fields[0]), float(fields[2]), [float(x) for x in fields[3:]]))
        elif len(fields) == 4 and fields[1] == "new":
            names[int(fields[2])] = fields[3]
    worst = 0.0
    parts = []
    for index, name in sorted(names.items(), key=lambda item: item[1]):
        tone = TONES[name]
        played = [r[0] for r in reads[-1] if r[2][tone] > 0.1]
        handed = [r for r in reads[index] if r[2][tone] > 0.1]
        times = [r[0] for r in reads[index]]
        gap = max((b - a for a, b in zip(times, times[1:])), default=0.0)
        worst = max(worst, gap)
        span = lambda t: f"{t[0]:.0f}-{t[-1]:.0f}" if t else "none"
        parts.append(
            f"{name} sink {span(played)} stream {span([r[0] for r in handed])} "
            f"got {sum(r[1] for r in handed):.0f} ms, longest wait {gap:.0f} ms")
    print(f"{path}: " + " | ".join(parts))
    return worst


if __name__ == "__main__":
    waits = sorted(summarize(path) for path in sys.argv[1:])
    if waits:
        print(f"longest wait between two reads of one application's stream, per run: {' '.join(f'{w:.0f}' for w in waits)} ms")
