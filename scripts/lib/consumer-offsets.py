#!/usr/bin/env python3
"""Where each recorder of a sink's monitor departed from what was played (scripts/monitor-consumers).

    consumer-offsets.py PLAYED.wav TAP.wav [TAP.wav ...]

PLAYED is the 16-bit stereo noise the player played; each TAP a 16-bit stereo recording of the
sink's monitor. With nothing else playing and the volume at 1.0 the server passes the samples
through bit for bit, so every stretch of a tap is found exactly in PLAYED, at an offset (tap
position minus played position) that stays put while the tap's audio is continuous. Where it
changes, the tap departed: a positive change is that many samples the tap got which were never
played (an inserted cycle: exact zeros), a negative one that many played samples the tap never
got (a lost cycle). Each departure is printed with where it happened in PLAYED, so the taps can
be set side by side: a departure at the same place in every tap happened in the sink (the
player was late), one in some taps only happened on the way to those consumers.
Standard library only (runs in the Debian 13 root too).
"""
import sys
import wave
from array import array

FRAME = 4  # bytes: 16-bit stereo
CHUNK = 64  # frames compared at a time
KEY = 8  # frames searched for when a tap departs


def frames(path):
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 2:
            sys.exit(f"{path}: want 16-bit stereo")
        return w.readframes(w.getnframes())


def find(played, key, around):
    """The frame where `key` sits in `played`, looking near `around` first; None if nowhere."""
    for start, end in ((max(0, around - 48000), around + 48000), (0, len(played) // FRAME)):
        at = played.find(key, start * FRAME, end * FRAME + len(key))
        while at >= 0 and at % FRAME:
            at = played.find(key, at + 1, end * FRAME + len(key))
        if at >= 0:
            return at // FRAME
    return None


def departures(played, tap):
    """(tap frame, played frame, offset change, zero frames since the tap last matched) for each
    departure; and how many frames matched what was played."""
    silence = bytes(CHUNK * FRAME)
    offset, out, count = None, [], len(tap) // FRAME
    i = resumed = matched = 0
    while i + CHUNK <= count:
        chunk = tap[i * FRAME:(i + CHUNK) * FRAME]
        if chunk == silence:
            i += CHUNK
            continue
        if offset is not None and played[(i - offset) * FRAME:(i - offset + CHUNK) * FRAME] == chunk:
            i += CHUNK
            resumed = i
            matched += CHUNK
            continue
        # Departed inside this chunk (or the tap's first sound): find the frame it resumes at.
        for k in range(0, CHUNK - KEY + 1):
            if tap[(i + k) * FRAME:(i + k + KEY) * FRAME] == bytes(KEY * FRAME):
                continue
            at = find(played, tap[(i + k) * FRAME:(i + k + KEY) * FRAME], i + k - (offset or 0))
            if at is not None:
                new = i + k - at
                if offset is not None and new != offset:
                    out.append((i + k, at, new - offset, array("I", tap[resumed * FRAME:(i + k) * FRAME]).count(0)))
                offset = new
                break
        i += CHUNK
    return out, matched


def main():
    played = frames(sys.argv[1])
    rate = 48000
    for path in sys.argv[2:]:
        found, matched = departures(played, frames(path))
        print(f"{path}: {matched / rate:.1f} s as played, {len(found)} departures")
        for tap_at, played_at, change, zeros in found:
            kind = f"+{change} inserted" if change > 0 else f"{change} lost"
            print(f"  at {played_at / rate:9.4f} s of what was played ({tap_at / rate:.4f} s into the tap): "
                  f"{kind}, {zeros} zero samples before it resumed")


if __name__ == "__main__":
    main()
