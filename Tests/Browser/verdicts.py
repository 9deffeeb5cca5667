"""The verdicts of the Python drivers (browser_test.py, webrtc_test.py): a check fails the run;
a figure a loaded machine bends is measured into the report (report.py) under the driver's
name and fails only past its gross budget."""
import os
import sys

import numpy as np

from report import record
from signals import RATE, block_levels, frequency

failures = []


def check(condition, text):
    print(("ok    " if condition else "FAIL  ") + text, flush=True)
    if not condition:
        failures.append(text)


def measure(figure, value, unit, at_most, text="", digits=".1f", judged=True):
    """A figure a loaded machine bends: into the measurement report (report.py), failed only past
    its gross budget `at_most`, stated at the call; shown with `digits`. Not `judged`: another
    program's figure beside ours (a comparison), recorded only."""
    check(record(os.path.basename(sys.argv[0]), figure, value, unit, at_most, judged),
          f"{figure}: {value:{digits}} {unit} (gross budget {at_most}{'' if judged else ', not judged'}) {text}")


HALF_SCALE_RMS_DB = 20 * np.log10(0.5 / np.sqrt(2))  # -9.03 dBFS: a sine at half scale


def weak_blocks(levels):
    """The 10 ms blocks more than 3 dB under a half-scale tone, of a recording's `levels`
    (block_levels)."""
    return np.flatnonzero(levels < HALF_SCALE_RMS_DB - 3)


def judge_tone(name, pcm, tones, skip, weak_blocks_budget=None, upstream=None):
    """A stereo recording of a steady tone in each channel (`tones`: its Hz per channel), from
    sample `skip` on: each channel's frequency within 2 Hz, its level within 1 dB of half scale,
    and every 10 ms block there (no block 3 dB down: asserted; or, where a player of its own
    decides them, measured against `weak_blocks_budget`). `upstream[channel]`: blocks the
    caller judged as down before this path (printed, not counted here)."""
    body = pcm[skip:]
    for channel, hz in enumerate(tones):
        samples = body[:, channel]
        if len(samples) < 2 * RATE:
            check(False, f"{name}: channel {channel}: only {len(samples)} samples")
            continue
        found = frequency(samples)
        check(abs(found - hz) < 2, f"{name}: channel {channel} at {found:.1f} Hz (played {hz})")
        level = 10 * np.log10(np.mean(samples.astype(np.float64) ** 2))
        check(abs(level - HALF_SCALE_RMS_DB) <= 1, f"{name}: channel {channel} at {level:.2f} dBFS "
                                                   f"(played {HALF_SCALE_RMS_DB:.2f}, within 1 dB)")
        levels = block_levels(samples)
        weak = weak_blocks(levels)
        if upstream is not None:
            before = [int(block) for block in weak if block in upstream[channel]]
            weak = np.array([block for block in weak if block not in upstream[channel]], dtype=int)
            if before:
                print(f"      {name}: channel {channel}: {len(before)} blocks down upstream of it {before[:8]}", flush=True)
        if weak_blocks_budget is None:
            check(len(weak) == 0, f"{name}: channel {channel}: {len(levels)} blocks of 10 ms, "
                                  f"{len(weak)} more than 3 dB down {weak[:8].tolist()}")
        else:
            measure(f"{name}: 10 ms blocks more than 3 dB down, channel {channel}", len(weak), "blocks",
                    weak_blocks_budget, f"of {len(levels)} {weak[:5].tolist()}", digits="d")
