#!/usr/bin/env python3
"""Scripted WebRTC viewers (aiortc) of one of Janus's DeskAudio mountpoints, run as a process of their
own: `webrtc_viewers.py JANUS_URL MOUNTPOINT COUNT SECONDS REPORT.json`.

Each viewer negotiates with Janus (watch, answer, start), plays nothing but decodes every
frame its track gives (as a viewer's player would), and from its first decoded audio on counts,
for `SECONDS`: RTP packets received and lost (aiortc's inbound-rtp stats: the sequence numbers'
extent less what came), and the tone's frequency and level in its last second.
The report is a JSON list, one entry per viewer. The parent process starts several of these,
so that the viewers' own CPU (Python, SRTP, Opus) is spread over processes."""
import asyncio
import json
import sys
import time
from collections import deque

import numpy as np
from aiortc import RTCPeerConnection, RTCSessionDescription

from janus_rig import JanusSession


async def inbound(pc):
    """The first inbound-rtp stats of `pc`."""
    for stats in (await pc.getStats()).values():
        if stats.type == "inbound-rtp":
            return stats
    return None


async def watch(url, mountpoint, seconds):
    """One viewer, counted for `seconds` from its first audio; its report."""
    loop = asyncio.get_running_loop()
    session = await loop.run_in_executor(None, JanusSession, url)
    pc = RTCPeerConnection()
    tracks = asyncio.Queue()
    pc.on("track", lambda track: tracks.put_nowait(track))
    offer = await loop.run_in_executor(None, session.watch, mountpoint)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type=offer["type"]))
    await pc.setLocalDescription(await pc.createAnswer())
    await loop.run_in_executor(None, session.start, pc.localDescription.sdp)
    track = await asyncio.wait_for(tracks.get(), 20)
    first = await asyncio.wait_for(track.recv(), 20)
    started, start_stats = time.monotonic(), await inbound(pc)
    last_second, channels, keepalive = deque(maxlen=50), first.layout.nb_channels, time.monotonic()
    while time.monotonic() - started < seconds:
        frame = await asyncio.wait_for(track.recv(), 5)
        pcm = frame.to_ndarray().reshape(-1, channels) if frame.format.is_packed else frame.to_ndarray().T
        last_second.append(pcm[:, 0].astype(np.float64) / (32768.0 if pcm.dtype == np.int16 else 1.0))
        if time.monotonic() - keepalive > 20:
            keepalive = time.monotonic()
            await loop.run_in_executor(None, session.keepalive)
    end_stats = await inbound(pc)
    await pc.close()
    await loop.run_in_executor(None, session.destroy)
    audio = np.concatenate(last_second)
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
    rate = frame.sample_rate
    return {
        "received": end_stats.packetsReceived - start_stats.packetsReceived,
        "lost": max(0, end_stats.packetsLost - start_stats.packetsLost),
        "seconds": time.monotonic() - started,
        "rate": rate, "channels": channels,
        "hz": float(np.argmax(spectrum) * rate / len(audio)),
        "dbfs": float(20 * np.log10(np.sqrt(np.mean(audio ** 2)) + 1e-12)),
    }


async def main(url, mountpoint, count, seconds, report_path):
    results = await asyncio.gather(*(watch(url, mountpoint, seconds) for _ in range(count)), return_exceptions=True)
    report = [r if isinstance(r, dict) else {"error": f"{type(r).__name__}: {r}"} for r in results]
    with open(report_path, "w") as file:
        json.dump(report, file)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]))
