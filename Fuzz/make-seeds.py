#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (Fuzz/corpus/): real AudioFrames (docs/wire-format.md)
around Opus packets from the system's libopus, and PCM pushes of each format.
Run once; the output is committed. python3 Fuzz/make-seeds.py"""
import ctypes, math, os, struct

here = os.path.dirname(os.path.abspath(__file__))
opus = ctypes.CDLL("libopus.so.0")
opus.opus_encoder_create.restype = ctypes.c_void_p
error = ctypes.c_int()
encoder = opus.opus_encoder_create(48000, 2, 2051, ctypes.byref(error))  # RESTRICTED_LOWDELAY
assert error.value == 0
opus.opus_encode_float.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]

def packet(index, frequency, amplitude):
    pcm = (ctypes.c_float * 960)()
    for i in range(480):
        value = amplitude * math.sin(2 * math.pi * frequency * (index * 480 + i) / 48000)
        pcm[2 * i] = pcm[2 * i + 1] = value
    out = (ctypes.c_ubyte * 1275)()
    length = opus.opus_encode_float(encoder, pcm, 480, out, 1275)
    assert length > 0
    return bytes(out[:length])

def frame(sequence, flags, payload):
    header = b"DAFR" + struct.pack("<BBBBIIQQHH", 1, flags, 2, 1, 48000, sequence, sequence * 480,
                                   1_000_000_000 + sequence * 10_000_000, 480, len(payload))
    return header + payload

def write(folder, name, data):
    os.makedirs(os.path.join(here, "corpus", folder), exist_ok=True)
    with open(os.path.join(here, "corpus", folder, name), "wb") as f:
        f.write(data)

frames = [frame(i, 2 | (1 if i == 0 else 0), packet(i, 1000, 0.5)) for i in range(12)]
silent = frame(12, 2, packet(12, 1000, 0.0))
for i, f in enumerate(frames[:4] + [silent]):
    write("frame-parser", f"frame-{i}", f)
write("frame-parser", "after-loss-mic-host", frame(40, 2 | 4 | 8 | 16, packet(40, 440, 0.3)))

def sequence(frames):
    return b"".join(struct.pack("<H", len(f)) + f for f in frames)

write("decoder", "in-order", sequence(frames[:8]))
write("decoder", "hole-then-late", sequence(frames[:3] + frames[6:8] + [frames[4]]))
write("decoder", "repeat-and-gap", sequence([frames[0], frames[1], frames[1], frame(30, 3, packet(30, 1000, 0.5))]))
write("decoder", "small-room", sequence(frames[:2]) + struct.pack("<H", 0x8000 | len(frames[5])) + frames[5])

def arrivals(records):
    """Jitter-buffer records: (frame, ms after the previous arrival, pulls after it)."""
    return b"".join(struct.pack("<HBB", len(f), ms, pulls) + f for f, ms, pulls in records)

write("jitter-buffer", "in-order", arrivals([(f, 10, 1) for f in frames[:8]]))
write("jitter-buffer", "reordered-and-lost", arrivals(
    [(frames[0], 10, 0), (frames[2], 5, 1), (frames[1], 20, 2), (frames[5], 3, 3), (frames[4], 30, 1), (frames[7], 1, 4)]))
write("jitter-buffer", "repeat-jump-silence", arrivals(
    [(frames[0], 10, 2), (frames[0], 0, 1), (frame(900, 3, packet(900, 1000, 0.5)), 40, 6), (silent, 200, 15)]))

def tone_bytes(fmt, channels, rate, count):
    out = b""
    for i in range(count):
        value = 0.5 * math.sin(2 * math.pi * 1000 * i / rate)
        sample = struct.pack("<h", int(value * 32767)) if fmt == 1 else struct.pack("<f", value)
        out += sample * channels
    return out

rates = [0, -1, 7999, 8000, 11025, 16000, 22050, 44100, 48000, 96000, 96001, 2**31 - 1]
for fmt, channels, rate, count in [(1, 2, 48000, 480), (2, 2, 48000, 480), (1, 1, 16000, 160),
                                   (2, 1, 44100, 441), (2, 2, 96000, 960), (1, 2, 8000, 81)]:
    write("push-pcm", f"f{fmt}-c{channels}-r{rate}", bytes([fmt, channels, rates.index(rate)]) + tone_bytes(fmt, channels, rate, count))
write("push-pcm", "odd-bytes-then-stop", bytes([1 | 8, 2, rates.index(48000)]) + b"\x01\x02\x03")

# RTP packetizer: a setup byte (bit 0 abs-capture-time, bits 1-2 a declared format), then frames as above.
write("rtp-packetizer", "stereo-in-order", b"\x00" + sequence(frames[:6]))
write("rtp-packetizer", "abs-time-gap-restart-small-room", b"\x01" + sequence(
    [frames[0], frames[1], frame(30, 3, packet(30, 1000, 0.5)), frames[0]]) + struct.pack("<H", 0x8000 | len(frames[2])) + frames[2])
write("rtp-packetizer", "declared-surround-gets-stereo", b"\x04" + sequence(frames[:2]))
