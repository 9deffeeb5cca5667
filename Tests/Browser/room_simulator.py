"""A viewer's room on the browser rig: what the browser plays (its sink's monitor) comes back
into its microphone (the rig's feed sink, whose monitor is the default source) through a room
impulse response, in real time, with an optional near-end talker and noise mixed in. Both
streams are on the same server, so on one clock. libpulse-simple through ctypes, 10 ms
blocks, the response applied by overlap-save FFT convolution."""
import ctypes
import threading

import numpy as np

from stamped_recorder import _BufferAttr, _SampleSpec, _simple

RATE = 48000
BLOCK = 480
_FLOAT32LE = 5
_PLAYBACK = 1
_RECORD = 2

_simple.pa_simple_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]


def _stream(runtime_dir, direction, device, attr):
    spec = _SampleSpec(_FLOAT32LE, RATE, 1)
    error = ctypes.c_int(0)
    stream = _simple.pa_simple_new(
        f"unix:{runtime_dir}/pulse/native".encode(), b"deskaudio-room", direction, device.encode(),
        b"room", ctypes.byref(spec), None, ctypes.byref(attr), ctypes.byref(error))
    if not stream:
        raise RuntimeError(f"cannot open {device} on {runtime_dir}: pulse error {error.value}")
    return stream


class RoomSimulator:
    """Plays the browser rig's speakers (`deskaudio_sink.monitor`) into its microphone
    (`deskaudio_micfeed`) through `response` (a room impulse response at 48 kHz), adding what
    `speak()` is given (the near-end talker) and white noise at `noise_dbfs`. Runs until
    `stop()`."""

    def __init__(self, runtime_dir, response, noise_dbfs=-80.0, seed=1):
        size = 1
        while size < len(response) + BLOCK:
            size *= 2
        self.size = size
        self.response = np.fft.rfft(response, size)
        self.history = np.zeros(size, dtype=np.float64)
        self.talks = []  # (first block, samples) of the near-end talker
        self.lock = threading.Lock()
        self.noise = 10 ** (noise_dbfs / 20)
        self.rng = np.random.default_rng(seed)
        chunk = BLOCK * 4
        self.speakers = _stream(runtime_dir, _RECORD, "deskaudio_sink.monitor",
                                _BufferAttr(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, chunk))
        self.microphone = _stream(runtime_dir, _PLAYBACK, "deskaudio_micfeed",
                                  _BufferAttr(0xFFFFFFFF, BLOCK * 4 * 3, 0xFFFFFFFF, BLOCK * 4, 0xFFFFFFFF))
        self.running = True
        self.blocks = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        buffer = ctypes.create_string_buffer(BLOCK * 4)
        error = ctypes.c_int(0)
        while self.running:
            if _simple.pa_simple_read(self.speakers, buffer, BLOCK * 4, ctypes.byref(error)) < 0:
                break
            played = np.frombuffer(buffer.raw, dtype=np.float32).astype(np.float64)
            self.history[:-BLOCK] = self.history[BLOCK:]
            self.history[-BLOCK:] = played
            echo = np.fft.irfft(np.fft.rfft(self.history) * self.response, self.size)[-BLOCK:]
            with self.lock:
                talks = list(self.talks)
            for first, samples in talks:
                part = samples[(self.blocks - first) * BLOCK:(self.blocks - first + 1) * BLOCK]
                echo[:len(part)] += part
            echo += self.rng.standard_normal(BLOCK) * self.noise
            out = np.clip(echo, -1, 1).astype(np.float32).tobytes()
            if _simple.pa_simple_write(self.microphone, out, len(out), ctypes.byref(error)) < 0:
                break
            self.blocks += 1

    def speak(self, samples):
        """The near-end talker says `samples` (mono, 48 kHz) from the next block on."""
        with self.lock:
            self.talks = [(first, talk) for first, talk in self.talks if (self.blocks - first) * BLOCK < len(talk)]
            self.talks.append((self.blocks + 1, np.asarray(samples, dtype=np.float64)))

    def stop(self):
        self.running = False
        self.thread.join(5)
        _simple.pa_simple_free(self.speakers)
        _simple.pa_simple_free(self.microphone)
