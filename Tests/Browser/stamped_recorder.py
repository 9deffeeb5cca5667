"""A recorder of a PulseAudio (or pipewire-pulse) sink monitor whose samples carry
CLOCK_MONOTONIC times, so that two recorders on two servers of this machine can be compared
to the millisecond: libpulse-simple through ctypes, 10 ms reads, each stamped with the time
it returned minus the latency the server reports for the recorded data, mapped to sample
indexes locally (a server that misses cycles moves the mapping)."""
import ctypes
import threading
import time

import numpy as np

RATE = 48000
_FLOAT32LE = 5
_RECORD = 2


class _SampleSpec(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rate", ctypes.c_uint32), ("channels", ctypes.c_uint8)]


class _BufferAttr(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint32) for name in ("maxlength", "tlength", "prebuf", "minreq", "fragsize")]


_simple = ctypes.CDLL("libpulse-simple.so.0")
_simple.pa_simple_new.restype = ctypes.c_void_p
_simple.pa_simple_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(_SampleSpec), ctypes.c_void_p, ctypes.POINTER(_BufferAttr),
                                  ctypes.POINTER(ctypes.c_int)]
_simple.pa_simple_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
_simple.pa_simple_get_latency.restype = ctypes.c_uint64
_simple.pa_simple_get_latency.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
_simple.pa_simple_free.argtypes = [ctypes.c_void_p]


class StampedRecorder:
    """Records `monitor` on the server of the rig whose runtime folder is `runtime_dir`
    (48 kHz, the left channel kept) until `finish()`."""

    def __init__(self, runtime_dir, monitor="deskaudio_sink.monitor"):
        spec = _SampleSpec(_FLOAT32LE, RATE, 2)
        chunk = 480 * 8
        attr = _BufferAttr(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, chunk)
        error = ctypes.c_int(0)
        self.stream = _simple.pa_simple_new(
            f"unix:{runtime_dir}/pulse/native".encode(), b"deskaudio-test", _RECORD, monitor.encode(),
            b"stamped recorder", ctypes.byref(spec), None, ctypes.byref(attr), ctypes.byref(error))
        if not self.stream:
            raise RuntimeError(f"cannot record {monitor} on {runtime_dir}: pulse error {error.value}")
        self.chunks = []
        self.stamps = []  # (samples recorded so far, CLOCK_MONOTONIC ns of the last one)
        self.running = True
        self.offset_step_ms = 0.0  # how far the stamps' offset moved over the recording (finish)
        self.thread = threading.Thread(target=self._record, args=(chunk,), daemon=True)
        self.thread.start()

    def _record(self, chunk):
        buffer = ctypes.create_string_buffer(chunk)
        error = ctypes.c_int(0)
        recorded = 0
        while self.running:
            if _simple.pa_simple_read(self.stream, buffer, chunk, ctypes.byref(error)) < 0:
                break
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            latency_us = _simple.pa_simple_get_latency(self.stream, ctypes.byref(error))
            samples = np.frombuffer(buffer.raw, dtype=np.float32)[0::2].copy()
            recorded += len(samples)
            self.chunks.append(samples)
            self.stamps.append((recorded, now - latency_us * 1000))

    def finish(self):
        """Stops; returns (samples, time_of) where time_of(index) is the CLOCK_MONOTONIC ns at
        which sample `index` reached the sink: the median offset of the stamps within half a
        second of it. Local, not one line through the whole recording: a server whose thread
        was not run in time moves its graph past the missed cycles, so the samples after it
        reached the sink that much later than their count says (in one run with a core kept
        busy 62 frames' worth were skipped, and the bursts' latency read p90 245 and p99 313 ms
        against a p50 of 96)."""
        self.running = False
        self.thread.join(5)
        _simple.pa_simple_free(self.stream)
        samples = np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)
        stamps = self.stamps[20:] or self.stamps
        if not stamps:
            return samples, lambda index: index * 1e9 / RATE
        counts = np.array([count for count, _ in stamps], dtype=np.float64)
        offsets = np.array([stamp - (count - 1) * 1e9 / RATE for count, stamp in stamps])
        half = min(50, (len(offsets) - 1) // 2)  # 10 ms reads: half a second either side
        padded = np.pad(offsets, half, mode="edge")
        local = np.median(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)
        self.offset_step_ms = float(local.max() - local.min()) / 1e6

        def time_of(index):
            at = min(int(np.searchsorted(counts, index + 1)), len(local) - 1)
            return float(local[at]) + index * 1e9 / RATE
        return samples, time_of
