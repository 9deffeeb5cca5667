"""A seeded relay between `deskaudio serve` and a browser that makes the WebSocket behave like
a lossy datagram network (a WebRTC data channel without retransmission): each AudioFrame the
server sends is dropped with probability `loss`, or delivered after a delay drawn uniformly
from `jitter_ms` (so frames may overtake one another). Everything else (the page, the
handshake, the browser's messages) passes through untouched. Runs on its own thread."""
import asyncio
import ctypes
import random
import threading

import numpy as np


class FrameRelay:
    def __init__(self, upstream, seed=33, loss=0.05, jitter_ms=(5, 35)):
        self.upstream_host, port = upstream.rsplit(":", 1)
        self.upstream_port = int(port)
        self.random = random.Random(seed)
        self.loss = loss
        self.jitter_ms = jitter_ms
        self.dropped = 0  # of the frames between the first and the last relayed
        # (AudioFrame bytes, dropped) of every frame the server sent before hold(), in order:
        # what the stream was, whichever frames got through (stream()).
        self.frames = []
        self.relayed = 0
        self.holding = False
        self._dropped_since_first = 0
        self.loss_run = 0
        self.longest_loss_run = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(5)
        self.address = f"127.0.0.1:{self.port}"

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    def hold(self):
        """From now on, no frame goes through (and none counts as dropped): the browser's
        counts can then be compared with what went through."""
        self.holding = True

    def stop(self):
        """Closes every connection (their tasks cancelled, so none is left pending) and ends
        the relay's thread."""

        def cancel_and_stop():
            tasks = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
            for task in tasks:
                task.cancel()
            # The loop stops once the cancelled tasks have run to their end.
            done = asyncio.gather(*tasks, return_exceptions=True)
            done.add_done_callback(lambda _: self.loop.stop())

        self.loop.call_soon_threadsafe(cancel_and_stop)

    async def _connection(self, browser_reader, browser_writer):
        try:
            await self._relay(browser_reader, browser_writer)
        except asyncio.CancelledError:  # the relay stops
            browser_writer.close()

    async def _relay(self, browser_reader, browser_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(self.upstream_host, self.upstream_port)
        except OSError:
            browser_writer.close()
            return
        try:
            head = await browser_reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):  # a connection opened and left unused
            browser_writer.close()
            server_writer.close()
            return
        server_writer.write(head)
        upgrade = head.startswith(b"GET /frames") and b"websocket" in head.lower()
        upstream = asyncio.ensure_future(self._pipe(browser_reader, server_writer))
        try:
            if upgrade:
                reply = await server_reader.readuntil(b"\r\n\r\n")
                browser_writer.write(reply)
                await self._frames(server_reader, browser_writer)
            else:
                await self._pipe(server_reader, browser_writer)
        finally:
            upstream.cancel()
            browser_writer.close()
            server_writer.close()

    async def _pipe(self, reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass

    async def _frames(self, reader, writer):
        """Server-to-browser WebSocket messages (unmasked): binary ones lost or delayed."""
        try:
            while True:
                header = await reader.readexactly(2)
                length = header[1] & 0x7F
                extra = b""
                if length == 126:
                    extra = await reader.readexactly(2)
                    length = int.from_bytes(extra, "big")
                elif length == 127:
                    extra = await reader.readexactly(8)
                    length = int.from_bytes(extra, "big")
                message = header + extra + await reader.readexactly(length)
                if header[0] & 0x0F != 0x2:
                    writer.write(message)
                    continue
                if self.holding:
                    continue
                frame = message[2 + len(extra):]
                dropped = self.random.random() < self.loss
                self.frames.append((frame, dropped))
                if dropped:
                    if self.relayed > 0:
                        self._dropped_since_first += 1
                    self.loss_run += 1
                    self.longest_loss_run = max(self.longest_loss_run, self.loss_run)
                    continue
                self.loss_run = 0
                self.relayed += 1
                self.dropped = self._dropped_since_first
                delay = self.random.uniform(*self.jitter_ms) / 1000
                self.loop.call_later(delay, writer.write, message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass


_opus = ctypes.CDLL("libopus.so.0")
_opus.opus_decoder_create.restype = ctypes.c_void_p
_opus.opus_decoder_create.argtypes = [ctypes.c_int32, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
_opus.opus_decode_float.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_void_p,
                                    ctypes.c_int, ctypes.c_int]
_opus.opus_decoder_destroy.argtypes = [ctypes.c_void_p]


def stream(frames):
    """What the server sent, decoded whole, and what a receiver without the dropped frames
    decodes, for `frames` as FrameRelay.frames holds them (10 ms stereo version 1
    AudioFrames): (sent, received, time_of). Both are the left channel at 48 kHz, placed by
    the frames' sample_clock; `received` has zeros where a frame was dropped, and its decoder
    never had that frame (WebCodecs cannot be told of a loss), so the frame after a loss comes
    out as Opus's inter-frame prediction leaves it (R-RELAY-BURST). time_of(i): when sample i
    reached the host's sink, ns: its frame's capture_time_ns on from where libopus's 2.5 ms
    look-ahead put it."""
    error = ctypes.c_int(0)
    decoders = [_opus.opus_decoder_create(48000, 2, ctypes.byref(error)) for _ in range(2)]
    assert all(decoders), f"opus_decoder_create: {error.value}"
    frames = [(frame, dropped) for frame, dropped in frames if len(frame) >= 36 and frame[4] == 1]
    first_clock = int.from_bytes(frames[0][0][16:24], "little") if frames else 0
    length = 0
    if frames:
        last = frames[-1][0]
        length = int.from_bytes(last[16:24], "little") - first_clock + int.from_bytes(last[32:34], "little")
    sent, received = np.zeros(length, np.float32), np.zeros(length, np.float32)
    clocks, times = [], []
    pcm = (ctypes.c_float * (5760 * 2))()
    for frame, dropped in frames:
        at = int.from_bytes(frame[16:24], "little") - first_clock
        payload = frame[36:36 + int.from_bytes(frame[34:36], "little")]
        for decoder, output in zip(decoders, (sent, received)):
            if dropped and output is received:
                continue
            decoded = _opus.opus_decode_float(decoder, payload, len(payload), pcm, 5760, 0)
            assert decoded > 0, f"opus_decode_float: {decoded}"
            output[at:at + decoded] = np.frombuffer(pcm, np.float32, decoded * 2)[0::2]
        clocks.append(at)
        times.append(int.from_bytes(frame[24:32], "little"))
    for decoder in decoders:
        _opus.opus_decoder_destroy(decoder)
    lookahead = 120

    def time_of(index):
        frame = max(0, int(np.searchsorted(clocks, index, side="right")) - 1)
        return times[frame] + (index - clocks[frame] - lookahead) * 1e9 / 48000 if clocks else 0.0
    return sent, received, time_of
