"""A seeded relay between `deskaudio serve` and a browser that makes the WebSocket behave like
a lossy datagram network (a WebRTC data channel without retransmission): each AudioFrame the
server sends is dropped with probability `loss`, or delivered after a delay drawn uniformly
from `jitter_ms` (so frames may overtake one another). Everything else (the page, the
handshake, the browser's messages) passes through untouched. Runs on its own thread."""
import asyncio
import random
import threading


class FrameRelay:
    def __init__(self, upstream, seed=33, loss=0.05, jitter_ms=(5, 35)):
        self.upstream_host, port = upstream.rsplit(":", 1)
        self.upstream_port = int(port)
        self.random = random.Random(seed)
        self.loss = loss
        self.jitter_ms = jitter_ms
        self.dropped = 0  # of the frames between the first and the last relayed
        # (first, last) CLOCK_MONOTONIC ns at the host's sink of each frame dropped: its
        # capture_time_ns and its length (docs/wire-format.md).
        self.dropped_spans = []
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
                if self.random.random() < self.loss:
                    frame = message[2 + len(extra):]
                    if len(frame) >= 36:
                        start = int.from_bytes(frame[24:32], "little")
                        self.dropped_spans.append((start, start + int.from_bytes(frame[32:34], "little") * 10**9 // 48000))
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
