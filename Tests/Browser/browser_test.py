#!/usr/bin/env python3
"""The web player heard in a real browser (scripts/test-browser starts the rigs and runs this).

`deskaudio serve --web` captures the host rig's default sink; headless Chromium, its audio on a
second private audio server (the browser rig, at the player's 48 kHz as a PipeWire desktop
runs; the formats run on a third at PulseAudio's own 44.1 kHz, where Chromium resamples),
opens the page; time-stamped recorders on both
rigs' sink monitors hear what was played and what came out of the browser. Judged on those
samples: frequency, level, no 10 ms block missing that the host's own monitor had, the gate's
silence and return, sink-to-sink latency; the same through a lossy, jittery relay; the drift
runs in the browser; three browsers with one stalled; and bad clients against the server.
docs/web-player.md lists what each scenario checks.
"""
import functools
import http.server
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np

import frame_relay
from frame_relay import FrameRelay
from signals import (BLOCK, block_levels, burst_class, burst_level, burst_onsets, block_levels_without, clear_of, dropouts, frequency, onset, pilot_breaks,
                     pilot_holes, pilot_levels, sink_to_sink, spans, tone_shift, zero_runs)
from stamped_recorder import StampedRecorder
from busy_scenario import busy_page
from echo_scenario import browser_echo
from microphone_scenario import browser_microphone
from verdicts import check, failures, measure
from web_rig import (RATE, Browser, Serve, bursts, masked, play, read_some, rig_arguments, rig_environment, silence,
                     tone, websocket_handshake)

BLOCK = 480  # 10 ms
PILOT_HZ = 6000  # demo.js's ?pilot= tone, a sine at 0.01 (-43 dBFS) the page renders beside the stream
TONE_DBFS = 20 * np.log10(0.5 / np.sqrt(2))  # a 0.5-amplitude sine: -9.03 dBFS RMS
def report_latency(path, latencies, missed, player_stats):
    p50, p99 = (np.percentile(latencies, [50, 99]) if latencies else (float("nan"),) * 2)
    if latencies:
        print("      latency percentiles 0/10/50/90/99/100: "
              + " / ".join(f"{value:.1f}" for value in np.percentile(latencies, [0, 10, 50, 90, 99, 100])))
        # Where the slowest bursts fell (their order among those heard, 0.15 s apart): one event
        # or spread out.
        worst = sorted(range(len(latencies)), key=lambda index: -latencies[index])[:5]
        print("      the slowest bursts (number: ms): "
              + ", ".join(f"{index}: {latencies[index]:.1f}" for index in sorted(worst)))
    print(f"      sink-to-sink latency, {path}: n={len(latencies)} missed={len(missed)} p50={p50:.1f} ms p99={p99:.1f} ms "
          f"(the browser's own output latency {player_stats.get('outputLatencyMs', 0):.1f} ms, player delay "
          f"{player_stats.get('delayMs', 0):.1f} ms)")
    return p99


def seconds(parts):
    """How long the concatenated `parts` (as `play` takes them) play, in seconds."""
    return sum(len(part) for part in parts) / RATE


def wait_measuring_jitter(player, serve, bursts_at):
    """Waits for `player` to finish, polling the browser's player from `bursts_at` seconds on
    (while the bursts play); returns the most arrival jitter it reported (the delay the bursts
    meet covers it), and what it reported of its delay (arrival to play, `delayMs`) and of the
    browser's output delay (`outputDelayMs`), ms, each poll."""
    started, jitter, delays, output_delays = time.monotonic(), 0.0, [], []
    while player.poll() is None:
        if time.monotonic() - started >= bursts_at:
            for client in serve.status().values():
                stats = client.get("player", {})
                jitter = max(jitter, stats.get("jitterMs", 0))
                if isinstance(stats.get("delayMs"), (int, float)):
                    delays.append(stats["delayMs"])
                if isinstance(stats.get("outputDelayMs"), (int, float)):
                    output_delays.append(stats["outputDelayMs"])
        time.sleep(0.25)
    return jitter, delays, output_delays


def report_recorders(tap, heard):
    """How far each sink's recorder found its samples' times moving against their count: a
    server that missed cycles (a starved machine) moved its graph on; the stamps follow it."""
    print(f"      the recorders' time of a sample against its count moved by {tap.offset_step_ms:.1f} ms "
          f"(host's sink) and {heard.offset_step_ms:.1f} ms (browser's sink) over the recording")


def chromium_output_ms(output_delays, player_stats):
    """Chromium's output delay while the bursts played: the median of what the player read
    from getOutputTimestamp() (it follows the device: 36-54 ms in one run, around a median of
    43-44, here), else the context's declared outputLatency (51.6 ms here, fixed)."""
    parts = [f"declared {player_stats.get('outputLatencyMs', 0):.1f}"]
    if output_delays:
        parts.append("read while the bursts played min/p50/max "
                     + " / ".join(f"{v:.1f}" for v in np.percentile(output_delays, [0, 50, 100])))
    print(f"      Chromium's output delay (ms): {'; '.join(parts)}")
    return float(np.median(output_delays)) if output_delays else player_stats.get("outputLatencyMs", 0)


def report_delays(delays):
    if delays:
        print("      the player's delay while the bursts played (ms) min/p50/p99/max: "
              + " / ".join(f"{v:.1f}" for v in np.percentile(delays, [0, 50, 99, 100])))


def check_latency(path, ours, bound, jitter, quiet_jitter, output_stall_ms=None):
    """Ours (p99 less Chromium's output delay) within the issue's `bound`, plus whatever
    arrival jitter the player measured beyond a quiet run's (`quiet_jitter`): where Chromium's
    own threads stall, the player's delay covers the jitter it saw, by design. Quiet here:
    28-34 ms of jitter on loopback (ours 33-43 ms), 57-59 ms through the relay; with one core
    of two kept busy the player measured up to 309 ms while the host's frames reached a Python
    WebSocket client within 9 ms of each other."""
    allowed = bound + max(0.0, jitter - quiet_jitter) + (output_stall_ms or 0.0)
    stall = ("" if output_stall_ms is None else
             f"; + the longest hole in the page's own pilot tone, where Chromium's output stalled and "
             f"everything after it was heard that much later, {output_stall_ms:.0f} ms")
    # The bound plus what the machine added is the target, printed; the gross budget
    # is three times the bound.
    measure(f"sink-to-sink latency p99 {path} less Chromium's output delay", ours, "ms", 3 * bound,
            f"(target {allowed:.0f}: {bound} + the arrival jitter the player measured while the bursts played, "
            f"{jitter:.1f} ms, beyond {quiet_jitter}{stall})")


def longest_ms(holes):
    """The longest of `holes` ((block, blocks) runs), ms."""
    return max((count for _, count in holes), default=0) * 10.0


def dump(scenario, **recordings):
    """With $DESKAUDIO_TEST_DUMP_DIR set (as for the Swift tests), writes each recording there
    as SCENARIO-NAME-TIME.npy (48 kHz mono float), to look at what a check judged."""
    folder = os.environ.get("DESKAUDIO_TEST_DUMP_DIR")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%H%M%S")
    for name, samples in recordings.items():
        path = os.path.join(folder, f"{scenario}-{name}-{stamp}.npy")
        np.save(path, np.asarray(samples, dtype=np.float32))
        print(f"      wrote {path}")


def page_output_holes(pilot, first, last, what):
    """The holes in the page's pilot tone (`pilot_levels`) between blocks `first` and `last`:
    where Chromium's own rendering or output stalled, which a stream cannot fill. Checks that
    the pilot was there at all (a page without it would excuse nothing, and nothing would show)
    and never missing for a second, and reports the holes."""
    holes = pilot_holes(pilot, first, last)
    median = float(np.median(pilot[first:last])) if last > first else 0.0
    longest = longest_ms(holes)
    check(median > 0.001 and longest < 1000,
          f"the page's pilot tone plays {what} (amplitude {median:.4f}, 0.01 played; {len(holes)} holes, the longest "
          f"{longest:.0f} ms: Chromium's output stalling)")
    return holes


def tone_and_gate(deskaudio, host, browser_env, work):
    """One browser: a 32 s tone, then the gate (12 s of silence at the host), then the tone."""
    serve = Serve(deskaudio, host, 120)
    browser = Browser(f"{serve.url}?pilot={PILOT_HZ}", browser_env, os.path.join(work, "profile-1"))
    try:
        serve.wait_for_players(1)
        tap = StampedRecorder(host["XDG_RUNTIME_DIR"])
        heard = StampedRecorder(browser_env["XDG_RUNTIME_DIR"])
        before_bursts = [silence(0.5), tone(32), silence(12), tone(4), silence(1)]
        player = play(host, os.path.join(work, "tone.wav"), *before_bursts, bursts(200), silence(0.5))
        bursts_jitter, delays, output_delays = wait_measuring_jitter(player, serve, seconds(before_bursts))
        time.sleep(1.0)
        (host_samples, host_time), (browser_samples, browser_time) = tap.finish(), heard.finish()
        report_recorders(tap, heard)
        stats, skipped, zero_cycles = serve.status(), serve.skipped_by_server(), serve.zero_cycles_from_server()
    finally:
        browser.stop()
        serve.stop()
    client = stats[min(stats)]
    player_stats = client.get("player", {})
    print(f"serve: {client['sent']} frames sent, {client['dropped']} dropped; player: {json.dumps(player_stats)}")
    dump("tone", host=host_samples, browser=browser_samples)

    # The browser's recording judged without the page's pilot (what the stream played), and
    # the pilot on its own (where Chromium's output stalled).
    host_levels, browser_levels = block_levels(host_samples), block_levels_without(browser_samples, PILOT_HZ)
    pilot = pilot_levels(browser_samples, PILOT_HZ)
    host_spans, browser_spans = spans(host_levels), spans(browser_levels)
    check(len(host_spans) >= 2 and len(browser_spans) >= 2,
          f"two tones at the host and in the browser (host {host_spans[:2]}, browser {browser_spans[:2]})")
    if len(host_spans) < 2 or len(browser_spans) < 2:
        return
    (bs, be), (hs, he) = browser_spans[0], host_spans[0]
    inner = browser_samples[(bs + 10) * BLOCK:(be - 10) * BLOCK]
    check(be - bs >= 3000, f"the browser played the tone for {(be - bs + 1) / 100:.2f} s (32 s played)")
    hz = frequency(inner)
    # The player plays up to 0.3 % fast to shed delay it no longer needs (after Chromium ran
    # late, frames arrive bunched): CI once heard 1001.45 Hz so. Pitch off by more is a bug.
    check(abs(hz - 1000) <= 3.5, f"frequency in the browser {hz:.2f} Hz (1000 played; 0.3 % of rate control allowed)")
    level = float(np.median(browser_levels[bs + 10:be - 10]))
    check(abs(level - TONE_DBFS) <= 1.0, f"level in the browser {level:.2f} dBFS ({TONE_DBFS:.2f} played)")
    # Dropouts, each counted once however the 10 ms blocks fall on it. Every one the host's
    # monitor had reaches the browser too (captured, encoded, played). Chromium's own output
    # adds others, which no stream can fill: short holes of exact zeros in its sink where its
    # output came too late (seen with a core kept busy: 10 ms of zeros, no frame concealed then),
    # and, in general, blocks where the page's pilot tone, rendered by the same audio context
    # beside the player, is missing too. And the host's server may move past the capture when
    # its thread is not run in time (a starved machine): the library queues silence for what it
    # skipped and counts it (serve's status line); or hand the capture alone a cycle of exact
    # zeros with nothing lost (PipeWire 0.3.65, docs/reliability.md: the tap on the same monitor
    # does not get it), which the library counts too (tone shift +16 at 1 kHz for 256 samples:
    # the clean-clone run of da4c84d, 2026-12-01). So the browser may have as many dropouts as
    # the host, the frames' worth skipped and those cycles, and, besides, only Chromium's; a
    # dropout with the pilot playing on and nothing skipped or counted is the player's.
    host_drops = dropouts(host_samples, host_levels, hs + 3, he - 3, float(np.median(host_levels[hs:he])) - 3)
    browser_drops = dropouts(browser_samples, browser_levels, bs + 3, be - 3, level - 3)
    holes = page_output_holes(pilot, bs, be, "through the tone")
    stalled = lambda block, count: any(start <= block + count and block <= start + length  # noqa: E731
                                       for start, length in holes)
    chromiums = [drop for drop in browser_drops if (drop[2] and drop[1] <= 3) or stalled(drop[0], drop[1])]
    ours = [drop for drop in browser_drops if drop not in chromiums]
    # Each dropout: seconds into the tone, and how far the tone after it lies behind the tone
    # before it, in samples (tone_shift: +16 for a 64-sample pause, 0 for audio replaced with
    # its time kept, negative for audio cut out).
    at = lambda drops, start, samples: [  # noqa: E731
        f"{(block - start) / 100:.2f}{' zeros' if digital else ''} ({tone_shift(samples, block, count):+.0f})"
        for block, count, digital in drops[:10]]
    measure("browser dropouts beyond the host's and its server's", max(0, len(ours) - (len(host_drops) + skipped + zero_cycles)),
            "dropouts", 10,
          f"dropouts (10 ms blocks 3 dB low) over {(be - bs) / 100:.0f} s: browser {len(ours)} and "
          f"{len(chromiums)} where Chromium's output stalled, host monitor {len(host_drops)}, frames' worth the "
          f"host's server skipped in the whole run {skipped}, cycles of zeros it handed the capture alone "
          f"{zero_cycles} (s into the tone, tone shift in samples: "
          f"browser {at(ours, bs, browser_samples)}, Chromium's {at(chromiums, bs, browser_samples)}, "
          f"host {at(host_drops, hs, host_samples)})")

    # The gate: 12 s of silence (its 8 s of zeros, then the gate), then the tone again. Where
    # Chromium's output stalls or skips, the pilot's edges leave sound beside its frequency (a
    # block of it cut short: over -60 dBFS in CI's run 45), so blocks in and beside a hole or a
    # jump in phase of the pilot, or a run of exact zeros (a hole under a block long), are not
    # judged; they are reported.
    # The gap is judged from 150 ms after the tone's last loud block: the tone's sudden end
    # leaves a low-frequency tail (its spectrum's peak in the lowest bin, falling 1.5 dB each
    # 10 ms), -64.1 dBFS 50 ms after the end in one run, -59.4 in another (R-WEB-TAIL). It is
    # the tone's end, not the gap's.
    (bs2, _), (hs2, _) = browser_spans[1], host_spans[1]
    first = be + 15
    levels = browser_levels[first:bs2 - 3]
    gap_holes = page_output_holes(pilot, first, bs2 - 3, "through the gap")
    gap_holes += [(start, length) for start, length in pilot_breaks(browser_samples, PILOT_HZ) + zero_runs(browser_samples)
                  if first <= start < bs2 - 3]
    judged = clear_of(gap_holes, first, len(levels))
    excused = int(np.sum(~judged))
    gap = np.where(judged, levels, -200.0)
    loudest = int(np.argmax(gap)) if len(gap) else 0
    check(len(gap) > 0 and np.all(gap < -60) and excused <= len(gap) // 20,
          f"silence in the browser through the gap (under -60 dBFS; the loudest 10 ms block "
          f"{gap[loudest] if len(gap) else float('nan'):.1f} dBFS, {(loudest + first - be) * 10} ms after the tone's end, "
          f"{(len(gap) - loudest + 3) * 10} ms before its return; blocks over -60: {int(np.sum(gap >= -60))}; "
          f"{len(gap_holes)} holes, zero runs or jumps of the pilot: "
          f"{excused} blocks not judged, 5 % of them allowed)")
    check(player_stats.get("gaps", 0) >= 1, f"the player saw the gate's gap ({player_stats.get('gaps')})")
    check(player_stats.get("framesLost", -1) == 0, f"frames lost on loopback: {player_stats.get('framesLost')}")
    # The tone's return, to the sample on each recording (both on CLOCK_MONOTONIC), against
    # the issue's bar: within the bursts' p99 (below) + 10 ms of its return at the host. What
    # the return added to the delay the tone stopped with is shown beside it.
    end_browser = (be + 1) * BLOCK - onset(browser_samples[(be + 1) * BLOCK - 1::-1])
    end_host = (he + 1) * BLOCK - onset(host_samples[(he + 1) * BLOCK - 1::-1])
    back_browser = bs2 * BLOCK - BLOCK + onset(browser_samples[bs2 * BLOCK - BLOCK:])
    back_host = hs2 * BLOCK - BLOCK + onset(host_samples[hs2 * BLOCK - BLOCK:])
    return_ms = (browser_time(back_browser) - host_time(back_host)) / 1e6
    stop_ms = (browser_time(end_browser) - host_time(end_host)) / 1e6

    # 200 bursts: sink-to-sink latency, both sinks timed on this machine's clock.
    latencies, missed = sink_to_sink(host_samples, host_time, browser_samples, browser_time,
                                     (host_spans[1][1] + 50) * BLOCK, (browser_spans[1][1] + 50) * BLOCK)
    p99 = report_latency("loopback", latencies, missed, player_stats)
    check(len(latencies) >= 195, f"the browser played {len(latencies)} of the 200 bursts")
    measure("the tone's return after the gate, past the bursts' p99", return_ms - p99, "ms", 100,
            f"(it came back {return_ms:.1f} ms after the host's, p99 {p99:.1f}, target + 10; it stopped {stop_ms:.1f} ms after)")
    # The target is 60 ms; Chromium's own output takes 35-55 ms of it (what the player
    # reads from getOutputTimestamp(); docs/web-player.md), and CI once saw sink-to-sink latency
    # step up by 29 ms after the first bursts while the player's own delay stayed at 25 ms. What
    # is ours (capture, frames, the player's delay) is bounded here, so it cannot grow unseen.
    report_delays(delays)
    after_tone = browser_spans[1][1] + 50
    holes = page_output_holes(pilot, after_tone, len(pilot), "while the bursts do")
    check_latency("on loopback", p99 - chromium_output_ms(output_delays, player_stats), 60, bursts_jitter, 35,
                  longest_ms(holes))


def relayed(deskaudio, host, browser_env, work):
    """One browser behind a seeded relay: 5-35 ms of jitter and 5 % loss on every frame."""
    serve = Serve(deskaudio, host, 120)
    relay = FrameRelay(serve.address)
    browser = Browser(f"http://{relay.address}/?pilot={PILOT_HZ}", browser_env, os.path.join(work, "profile-6"))
    try:
        serve.wait_for_players(1)
        tap = StampedRecorder(host["XDG_RUNTIME_DIR"])
        heard = StampedRecorder(browser_env["XDG_RUNTIME_DIR"])
        before_bursts = [silence(0.5), tone(20), silence(1)]
        player = play(host, os.path.join(work, "relayed.wav"), *before_bursts, bursts(200), silence(0.5))
        bursts_jitter, delays, output_delays = wait_measuring_jitter(player, serve, seconds(before_bursts))
        time.sleep(0.5)
        relay.hold()  # nothing more goes through: the player's counts settle, and are reported
        time.sleep(2.5)
        (host_samples, host_time), (browser_samples, browser_time) = tap.finish(), heard.finish()
        report_recorders(tap, heard)
        stats = serve.status()
    finally:
        browser.stop()
        relay.stop()
        serve.stop()
    player_stats = stats[min(stats)].get("player", {})
    print(f"relay: {relay.relayed} frames through, {relay.dropped} dropped (longest run {relay.longest_loss_run}); "
          f"player: {json.dumps(player_stats)}")
    check(player_stats.get("framesLost") == relay.dropped,
          f"the player counted {player_stats.get('framesLost')} frames lost, the relay dropped {relay.dropped}")
    host_levels, browser_levels = block_levels(host_samples), block_levels_without(browser_samples, PILOT_HZ)
    pilot = pilot_levels(browser_samples, PILOT_HZ)
    host_spans, browser_spans = spans(host_levels), spans(browser_levels)
    if not host_spans or not browser_spans:
        check(False, "the tone at the host and in the browser")
        return
    (bs, be) = browser_spans[0]
    level = float(np.median(browser_levels[bs:be]))
    # Blocks missing the tone, but not where the page's pilot is missing too (Chromium's own
    # output stalled there: see tone_and_gate).
    quiet = browser_levels[bs + 3:be - 3] < level - 12
    quiet &= clear_of(page_output_holes(pilot, bs + 3, be - 3, "through the tone"), bs + 3, len(quiet))
    longest = max((len(run) for run in "".join("q" if q else "." for q in quiet).split(".")), default=0)
    check(be - bs >= 1900, f"the browser played the tone for {(be - bs + 1) / 100:.2f} s (20 s played)")
    # Frames the player had no audio for in time, beyond the relay's losses: those that came
    # too late and those concealed while it waited. They come from stalls upstream of the
    # relay's jitter (CI's run 3 of 2026-11-28: 5 late and 8 waited for, the host sink's
    # recorder's clock moved 55 ms, a 5-block quiet run; none in the run beside it), so a
    # quiet run may be that much longer; they are few, or the player's delay is too short.
    late, lost = player_stats.get("framesLate", 0), player_stats.get("framesLost", 0)
    waited = max(0, player_stats.get("framesConcealed", 0) - lost)
    received = player_stats.get("framesReceived", 0)
    measure("frames the player had no audio for in time, beyond the relay's losses, in % of those received",
            100 * (late + waited) / max(received, 1), "%", 5,
            f"({late} late, {waited} concealed while it waited, of {received}; 0.5 % the target)")
    check(longest <= relay.longest_loss_run + 1 + late + waited,
          f"longest run of 10 ms blocks missing the tone (12 dB low) where the page's pilot played on: {longest} "
          f"(the relay's longest loss run {relay.longest_loss_run} + 1 + those {late + waited} allowed)")
    latencies, missed = sink_to_sink(host_samples, host_time, browser_samples, browser_time,
                                     (host_spans[0][1] + 50) * BLOCK, (be + 50) * BLOCK)
    p99 = report_latency("through the relay", latencies, missed, player_stats)
    # A burst (10 ms, so in one or two frames) is lost with the frames the relay dropped, or
    # with one the player did not play as it came: too late, dropped to shed delay, or
    # concealed while it waited (an underrun: concealed beyond the frames lost). Any other
    # burst the browser did not play is the player's (frames decoded out of order once put a
    # click 20-40 ms ahead of a burst, which took its place). What the drops took is read in
    # the frames the server sent, decoded as a receiver without the dropped ones decodes them:
    # a burst the same detector does not find there, at its place and frequency, or finds
    # more than 6 dB down at its own frequency, went with them (the frame before a burst can
    # take it too). The player conceals and paces unlike this decoding, so a burst the drops
    # damaged is found, and classed, one way here and another there (R-RELAY-BURST). Each
    # burst missed is found in what was sent by its time, within 75 ms (they are 150 apart).
    sent, received, sent_time = frame_relay.stream(relay.frames)
    survivors = [(index, burst_class(received, index)) for index in burst_onsets(received, 0)]
    sent_bursts = []  # (time at the host's sink, whether it went with the drops, dB it kept)
    for index in burst_onsets(sent, 0):
        kind = burst_class(sent, index)
        kept_db = burst_level(received, index, kind) - burst_level(sent, index, kind)
        found = any(abs(other - index) <= 240 and other_kind == kind for other, other_kind in survivors)
        sent_bursts.append((sent_time(index), not found or kept_db < -6, kept_db))
    with_drop, never_sent, others = [], [], []
    for at in missed:
        nearest = min(sent_bursts, key=lambda burst: abs(burst[0] - at), default=None)
        if nearest is None or abs(nearest[0] - at) > 75e6:
            never_sent.append(at)
        elif nearest[1]:
            with_drop.append(at)
        else:
            others.append(at)
            print(f"      a burst missed at {at / 1e9:.3f} s is in what a receiver without the dropped frames decodes, "
                  f"{nearest[2]:+.1f} dB at its frequency against what was sent")
    dump("relay", host=host_samples, browser=browser_samples, sent=sent, received=received)
    print(f"      of the {len(sent_bursts)} bursts the server sent (and the tone's onset), {sum(lost for _, lost, _ in sent_bursts)} "
          f"are not in what a receiver without the dropped frames decodes, or 6 dB down")
    shed = player_stats.get("framesDropped", 0)
    times = lambda ats: "".join(f" {at / 1e9:.3f}" for at in ats)
    check(len(never_sent) + len(others) <= late + shed + waited,
          f"the browser played {len(latencies)} of the 200 bursts; of the {len(missed)} it did not, {len(with_drop)} "
          f"went with the frames the relay dropped, {len(never_sent)} were in no frame the server sent{times(never_sent)}, "
          f"and the other {len(others)}{times(others)} at most as many as the frames the player did not play as they "
          f"came ({late} late, {shed} dropped to shed delay, {waited} concealed while it waited; times: s at the host's sink)")
    # The target is 100 ms (see the loopback bound); the relay's 5-35 ms are in the jitter.
    report_delays(delays)
    # Chromium's own output stalls (run 29 of the clean-clone CI: bursts 163-172 up to 273 ms,
    # while the player's delay stayed under 53 ms and its arrival jitter under 53) show as holes
    # in the pilot tone the page plays beside the stream.
    holes = page_output_holes(pilot, be + 50, len(pilot), "while the bursts do")
    check_latency("through the relay", p99 - chromium_output_ms(output_delays, player_stats), 110, bursts_jitter, 60,
                  longest_ms(holes))


def formats(deskaudio, host, browser_env, work):
    """Frames other than 10 ms stereo: 5.1 and 7.1 (version 2, Opus multistream), and 5 ms,
    played by a browser whose output runs at 44.1 kHz."""
    # The rig's sink is stereo. PipeWire's capture of it in 5.1 has the tone in FL and FR at
    # its level and, upmixed, in FC 3 dB lower; in 7.1 also in SL and SR 3 dB lower (ffmpeg's
    # astats on `deskaudio record --channels 6|8`: -9.02, -9.02, -12.07 | and -12.01, -12.01).
    # The fold (L = FL + 0.707 FC + 0.707 RL + 0.707 SL, the library's StereoDownmix) gives
    # 0.5 + 0.707 * 0.352 (+ 0.707 * 0.354) of full scale.
    for channels, parts in ((6, (0.5, 0.352)), (8, (0.5, 0.352, 0.354))):
        amplitude = parts[0] + np.sqrt(0.5) * sum(parts[1:])
        format_run(deskaudio, host, browser_env, work, f"{channels} channels", ("--channels", str(channels)),
                   20 * np.log10(amplitude / np.sqrt(2)))
    format_run(deskaudio, host, browser_env, work, "5 ms frames", ("--frame-ms", "5"), TONE_DBFS, frame_ms=5)


def format_run(deskaudio, host, browser_env, work, name, options, expected, frame_ms=10):
    """`serve` with `options`, a tone played: Chromium decodes every frame, of `frame_ms`, and
    plays the tone at the `expected` level and its frequency."""
    serve = Serve(deskaudio, host, 60, *options)
    browser = Browser(serve.url, browser_env, os.path.join(work, f"profile-{'-'.join(options)}"))
    try:
        # The tone plays on until the 4 s recorded are in, however long Chromium took to start
        # (an 8 s tone ended inside the recording when it took 5.7 s, with the sanitized suites
        # running beside it).
        player = play(host, os.path.join(work, "format.wav"), tone(60))
        serve.wait_for_players(1)
        heard = StampedRecorder(browser_env["XDG_RUNTIME_DIR"])
        # 4 s, and on until 300 blocks of the tone are in (at most 15 s): beside the sanitized
        # suites Chromium's player had started as little as 109 blocks into the 4 s (R-WEB-FORMAT-LOAD).
        started = time.monotonic()
        while time.monotonic() - started < 15:
            time.sleep(0.5)
            so_far = np.concatenate(list(heard.chunks)) if heard.chunks else np.zeros(0, np.float32)
            if time.monotonic() - started >= 4 and np.count_nonzero(block_levels(so_far) > -30) >= 300:
                break
        samples, _ = heard.finish()
        player.terminate()
        player.wait()
        stats = serve.status()
    finally:
        browser.stop()
        serve.stop()
    player_stats = stats[min(stats)].get("player", {})
    check(player_stats.get("framesUndecodable") == 0 and player_stats.get("lastError") is None
          and player_stats.get("frameMs") == frame_ms,
          f"Chromium decodes the frames, {name} ({player_stats.get('framesUndecodable')} undecodable, "
          f"{player_stats.get('lastError')}; frames of {player_stats.get('frameMs')} ms, {frame_ms} sent)")
    levels = block_levels(samples)
    loud = levels[levels > -30]
    level = float(np.median(loud)) if len(loud) else -200.0
    check(len(loud) >= 300 and abs(level - expected) <= 1.0,
          f"the tone, {name}: {len(loud)} loud blocks of {len(levels)}, {level:.2f} dBFS ({expected:.2f} expected)")
    if len(loud) >= 100:
        # Right after the start the player's rate control is still taking its start-up delay
        # down: up to 0.3 % fast, which a 3 s measurement sees.
        hz = frequency(samples[np.flatnonzero(levels > -30)[0] * BLOCK:][:3 * 48000])
        check(abs(hz - 1000) <= 3.5, f"frequency, {name}: {hz:.2f} Hz (1000 played; 0.3 % of rate control allowed)")


def drift_in_browser(deskaudio, host, browser_env, work):
    """The jitter buffer in Chromium on simulated time: a sender 0.1 % fast, then 0.1 % slow,
    10 minutes each (Tests/Web/drift.html)."""
    del deskaudio, host
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
    handler.log_message = lambda *arguments: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = subprocess.run(
            ["chromium", "--headless=new", "--no-sandbox", f"--user-data-dir={os.path.join(work, 'profile-drift')}",
             "--dump-dom", "--virtual-time-budget=60000",
             f"http://127.0.0.1:{server.server_address[1]}/Tests/Web/drift.html"],
            env=browser_env, capture_output=True, text=True, timeout=180).stdout
    finally:
        server.shutdown()
    match = re.search(r"RESULT (\{.*\})", page)
    check(match is not None, "the drift page ran in Chromium")
    if not match:
        return
    for name, result in json.loads(match.group(1)).items():
        first, last = result["firstMinuteP99"], result["lastMinuteP99"]
        check(abs(last - first) <= 5 and result["longestQuietRun"] <= 1,
              f"sender 0.1 % {name}, 10 minutes: delay p99 {first:.1f} ms in the first minute, {last:.1f} ms in "
              f"the last; longest quiet run {result['longestQuietRun']} blocks")


def stalled_browser(deskaudio, host, browser_env, work):
    """Three browsers; one paused for 5 s: its frames are dropped, not the other two's."""
    serve = Serve(deskaudio, host, 120)
    browsers = [Browser(serve.url, browser_env, os.path.join(work, f"profile-{n}")) for n in (2, 3, 4)]
    try:
        player = play(host, os.path.join(work, "tone3.wav"), tone(20))
        ids = serve.wait_for_players(3)
        time.sleep(2)
        before = serve.status()
        browsers[2].pause()  # which client id it has does not matter: one of the three
        time.sleep(5)
        browsers[2].resume()
        time.sleep(3)
        after = serve.status()
        player.wait()
    finally:
        for browser in browsers:
            browser.stop()
        serve.stop()
    drops = {id: after[id]["dropped"] - before[id]["dropped"] for id in ids}
    lost = {id: after[id].get("player", {}).get("framesLost", 0) - before[id].get("player", {}).get("framesLost", 0)
            for id in ids}
    print(f"dropped by the server while one browser was paused: {drops}; lost by the players: {lost}")
    # The paused one drops most of its 5 s (all but the server's queue, 0.4 s); the others lose
    # nothing alone, but a loaded machine stalls their Chromiums too (22 to 135 frames beside the
    # sanitized suites: R-WEB-FORMAT-LOAD), so theirs are measured, against a gross budget of
    # 2 s, under half what the pause took from its own.
    paused = max(ids, key=lambda id: drops[id])
    check(drops[paused] >= 300, f"the paused client had most of its 5 s dropped: {drops[paused]} frames ({drops})")
    for id in ids:
        if id != paused:
            measure("frames dropped for a browser beside the paused one", drops[id], "frames", 200,
                    f"(lost by its player: {lost[id]})", digits="d")


def batched(deskaudio, host, browser_env, work):
    """`serve --frames-per-send 4` to a scripted WebSocket client: frames come four to a
    write, none lost, and a batch the gate leaves short still goes out at once."""
    del browser_env
    per_send = 4
    # 5 ms frames: the gate closes after 4 s of silence. Two gaps, each ending a batch short
    # unless the frames before it happen to fill it (1 in 4 each).
    serve = Serve(deskaudio, host, 60, "--frames-per-send", str(per_send), "--frame-ms", "5")
    player = play(host, os.path.join(work, "batched.wav"), tone(1.5), silence(5), tone(1), silence(5), tone(1))
    connection = websocket_handshake(serve.address)
    frames, reads, data, upgraded = [], 0, b"", False
    try:
        connection.settimeout(1)
        deadline = time.monotonic() + 15
        while True:
            if time.monotonic() > deadline and serve.process.poll() is None:
                serve.process.send_signal(signal.SIGINT)  # read on until it closes the socket
                connection.settimeout(10)
            try:
                chunk = connection.recv(65536)
            except socket.timeout:
                continue
            except ConnectionError:
                break
            if not chunk:
                break
            arrived = time.monotonic_ns()
            data += chunk
            if not upgraded:
                head, separator, data = data.partition(b"\r\n\r\n")
                check(head.startswith(b"HTTP/1.1 101"), f"the WebSocket upgrade is accepted ({head[:20]!r})")
                upgraded = bool(separator)
            before = len(frames)
            while upgraded and len(data) >= 2:  # server messages: unmasked, under 64 KiB
                length, at = data[1] & 0x7F, 2
                if length == 126:
                    length, at = int.from_bytes(data[2:4], "big"), 4
                if len(data) < at + length:
                    break
                opcode, message, data = data[0] & 0x0F, data[at:at + length], data[at + length:]
                if opcode == 2:
                    frames.append((arrived, int.from_bytes(message[12:16], "little"), message[5],
                                   int.from_bytes(message[24:32], "little")))
            reads += len(frames) > before
        serve.process.wait(10)
        summary = Serve.CLIENT.findall(serve.process.stdout.read())
    finally:
        connection.close()
        player.kill()
        serve.stop()
    check(len(frames) >= 2000, f"{len(frames)} frames received (about 2600 expected: 13 s outside the gate)")
    if len(frames) < 2000:
        return
    sequences = [frame[1] for frame in frames]
    holes = [(a, b) for a, b in zip(sequences, sequences[1:]) if b != (a + 1) % 2**32]
    check(not holes, f"every frame arrived, in order, across the gates (holes: {holes[:5]})")
    check(len(summary) == 1 and int(summary[0][2]) == len(frames) and summary[0][3] == "0",
          f"serve's count of frames sent and dropped is what the client got ({summary}, {len(frames)} received)")
    check(len(frames) / reads >= per_send - 0.5, f"frames come {per_send} to a write ({len(frames) / reads:.2f} a read)")
    # From the sample's time at the sink to the client's read.
    delays = np.array([(arrived - captured) / 1e6 for arrived, _, _, captured in frames])
    reopened = [index for index, frame in enumerate(frames) if index and frame[2] & 1]
    check(len(reopened) == 2, f"two frames say the gate opened again ({len(reopened)})")
    steady = np.percentile(delays[:reopened[0]], 99) if reopened else 0
    print(f"      {len(frames)} frames in {reads} reads; capture to client p50 {np.median(delays):.1f} ms, "
          f"p99 {steady:.1f} ms before the first gate")
    for index in reopened:
        last = index - 1
        # Held back, it would go out when the gate opens again, a second later; the short
        # batch's wait is 4.5 frames (22.5 ms), the rest is room for a loaded machine.
        size = sum(frame[0] == frames[last][0] for frame in frames[:index])
        # Held back it would be a second late: the gross budget is half that.
        measure("the batch before a gate, its last frame past the p99 before", delays[last] - steady, "ms", 500,
                f"(its read had {size} frames; {delays[last]:.1f} ms after capture, p99 before {steady:.1f} ms, "
                f"target + 50)")


def bad_clients(deskaudio, host, browser_env, work):
    """Garbage, oversized messages and half-closed connections, beside a playing browser."""
    serve = Serve(deskaudio, host, 120)
    browser = Browser(serve.url, browser_env, os.path.join(work, "profile-5"))
    player = play(host, os.path.join(work, "tone5.wav"), tone(40))
    try:
        [good] = serve.wait_for_players(1)
        answers = {}

        def http(request):
            host_, port = serve.address.rsplit(":", 1)
            with socket.create_connection((host_, int(port)), timeout=5) as connection:
                connection.sendall(request)
                return read_some(connection).split(b"\r\n", 1)[0].decode(errors="replace")

        answers["garbage"] = http(b"\x16\x03\x01 not http at all\r\n\r\n")
        answers["wrong path"] = http(f"GET /nothing HTTP/1.1\r\nHost: {serve.address}\r\n\r\n".encode())
        answers["POST"] = http(f"POST / HTTP/1.1\r\nHost: {serve.address}\r\nContent-Length: 3\r\n\r\nabc".encode())
        answers["frames without upgrade"] = http(f"GET /frames HTTP/1.1\r\nHost: {serve.address}\r\n\r\n".encode())
        answers["upgrade elsewhere"] = http(
            (f"GET /other HTTP/1.1\r\nHost: {serve.address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        answers["huge header"] = http(
            f"GET / HTTP/1.1\r\nHost: {serve.address}\r\nX-Big: {'a' * 200000}\r\n\r\n".encode())
        for what, status in answers.items():
            print(f"      {what}: {status}")
        check(answers["wrong path"].startswith("HTTP/1.1 404"), "a wrong path gets 404")
        check(answers["POST"].startswith("HTTP/1.1 405"), "POST gets 405")
        check(answers["frames without upgrade"].startswith("HTTP/1.1 426"), "/frames without an upgrade gets 426")
        check(answers["upgrade elsewhere"].startswith("HTTP/1.1 404"), "a WebSocket upgrade on another path gets 404")
        check(answers["garbage"].startswith("HTTP/1.1 400") or answers["garbage"] == "",
              f"garbage gets 400 or a close ({answers['garbage']!r})")
        check(answers["huge header"].startswith("HTTP/1.1 4") or answers["huge header"] == "",
              f"a 200 kB header gets a 4xx or a close ({answers['huge header']!r})")

        # WebSocket abuse: an oversized message (closed, 1009), a binary message (closed, 1003),
        # garbage after the handshake, and connections left half-closed; hundreds of them.
        def abuse(kind):
            connection = websocket_handshake(serve.address)
            reply = read_some(connection, 4096)
            if kind == "oversized":
                connection.sendall(masked(0x1, b"x" * 100000))
            elif kind == "binary":
                connection.sendall(masked(0x2, b"\x00" * 100))
            elif kind == "garbage":
                connection.sendall(os.urandom(3000))
            elif kind == "half-closed":
                connection.shutdown(socket.SHUT_WR)
            time.sleep(0.05)
            rest = read_some(connection)
            connection.close()
            return reply, rest

        reply, rest = abuse("oversized")
        check(reply.startswith(b"HTTP/1.1 101"), "the WebSocket upgrade on /frames is accepted")
        check(b"\x88" in rest and (b"\x03\xf1" in rest), "an oversized message gets a close with 1009")
        reply, rest = abuse("binary")
        check(b"\x88\x02\x03\xeb" in rest, "a binary message from a browser gets a close with 1003")
        rss_before = serve.rss_kib()
        sent_before = serve.status()[good]["sent"]
        started = time.monotonic()
        for round in range(300):
            abuse(("oversized", "binary", "garbage", "half-closed")[round % 4])
        elapsed = time.monotonic() - started
        time.sleep(1.5)
        rss_after = serve.rss_kib()
        after = serve.status()
        sent_during = after[good]["sent"] - sent_before
        player_stats = after[good].get("player", {})
        check(sent_during >= (elapsed + 1.0) * 100 * 0.9,
              f"the playing browser got {sent_during} frames during {elapsed:.1f} s of 300 bad connections")
        check(after[good]["dropped"] == 0 and player_stats.get("framesLost", 1) == 0,
              f"and lost none (dropped {after[good]['dropped']}, lost {player_stats.get('framesLost')})")
        check(rss_after - rss_before <= 2048,
              f"serve's RSS {rss_before} KiB before 300 bad connections, {rss_after} KiB after")
        # serve's own count (status() keeps every client a status line ever named, so a bad
        # connection open at one of those lines stayed in it: CI once read 3 so).
        connected = serve.connected_count()
        check(connected is not None and connected <= 2, f"bad connections are gone: serve counts {connected} clients")
        if failures:
            print("".join(serve.log[-3:]))
    finally:
        player.kill()
        browser.stop()
        serve.stop()


def main():
    parser = rig_arguments(__doc__)
    parser.add_argument("--only", nargs="+", choices=["tone", "relay", "formats", "drift", "stall", "bad", "batch", "mic", "echo", "busy"])
    parser.add_argument("--resampling-browser-rig",
                        help="a browser rig at another rate than 48 kHz, for the formats (default: --browser-rig)")
    arguments = parser.parse_args()
    host = rig_environment(arguments.host_rig)
    browser = rig_environment(arguments.browser_rig)
    resampling = rig_environment(arguments.resampling_browser_rig or arguments.browser_rig)
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    scenarios = {"tone": tone_and_gate, "relay": relayed, "formats": formats, "drift": drift_in_browser,
                 "stall": stalled_browser, "bad": bad_clients, "batch": batched, "mic": browser_microphone,
                 "echo": browser_echo, "busy": busy_page}
    # Each scenario runs once: a failure is a bug (a figure a loaded machine bends is measured
    # against a gross budget: measure()).
    for name, scenario in scenarios.items():
        if arguments.only is None or name in arguments.only:
            print(f"-- {scenario.__doc__.splitlines()[0]}", flush=True)
            scenario(arguments.deskaudio, host, resampling if name == "formats" else browser, arguments.work)
    if failures:
        print(f"browser tests: {len(failures)} failed")
        sys.exit(1)
    print("browser tests: all passed")


if __name__ == "__main__":
    main()
