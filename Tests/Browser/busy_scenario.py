"""The player off the page's thread (issue 64): the page's main thread kept busy 40 ms of
every 50 (`?busy=40`), the frames received and decoded on the page's thread
(`?receive=page`, as before) and in the player's Worker (the default); bursts from the host,
recorded at both sinks with CLOCK_MONOTONIC times. Measured: the arrival jitter the receiver
saw (p99) and sink to sink less Chromium's output delay (p99)."""
import os
import time

import numpy as np

from signals import sink_to_sink
from stamped_recorder import StampedRecorder
from verdicts import check, measure
from web_rig import Browser, Serve, bursts, play, silence

BUSY_MS = 40
QUANTUM_MS = 256 / 48  # the host rig's graph cycle


def busy_run(deskaudio, host, browser_env, work, receive):
    serve = Serve(deskaudio, host, 90)
    browser = Browser(f"{serve.url}?busy={BUSY_MS}&receive={receive}", browser_env, os.path.join(work, f"profile-busy-{receive}"))
    player = None
    try:
        [client] = serve.wait_for_players(1)
        tap = StampedRecorder(host["XDG_RUNTIME_DIR"])
        heard = StampedRecorder(browser_env["XDG_RUNTIME_DIR"])
        player = play(host, os.path.join(work, f"busy-{receive}.wav"), silence(0.5), bursts(150), silence(1))
        output_delays = []
        while player.poll() is None:
            stats = serve.status().get(str(client), {}).get("player", {})
            if isinstance(stats.get("outputDelayMs"), (int, float)):
                output_delays.append(stats["outputDelayMs"])
            time.sleep(0.25)
        time.sleep(1.5)  # a report after the last burst
        (host_samples, host_time), (browser_samples, browser_time) = tap.finish(), heard.finish()
        stats = serve.status().get(str(client), {}).get("player", {})
    finally:
        if player:
            player.kill()
        browser.stop()
        serve.stop()
    latencies, missed = sink_to_sink(host_samples, host_time, browser_samples, browser_time, 0, 0)
    output_ms = float(np.median(output_delays)) if output_delays else stats.get("outputLatencyMs", 0)
    p99 = float(np.percentile(latencies, 99)) if latencies else float("nan")
    jitter = stats.get("arrivalJitterP99Ms")
    print(f"      received on the {receive}'s thread, the page busy {BUSY_MS} of 50 ms: arrival jitter p50 "
          f"{stats.get('arrivalJitterP50Ms')} p99 {jitter} ms; sink to sink n={len(latencies)} missed={len(missed)} "
          f"p50 {np.percentile(latencies, 50) if latencies else float('nan'):.1f} p99 {p99:.1f} ms, Chromium's output "
          f"delay {output_ms:.1f} ms; the player's own jitter estimate {stats.get('jitterMs', float('nan')):.1f} ms, "
          f"lost {stats.get('framesLost')}")
    return jitter, p99 - output_ms, len(latencies)


def busy_page(deskaudio, host, browser_env, work):
    """The player off the page's thread: a busy page, frames received in the page and in the Worker."""
    page = busy_run(deskaudio, host, browser_env, work, "page")
    worker = busy_run(deskaudio, host, browser_env, work, "worker")
    check(worker[2] >= 145 and page[2] >= 145, f"the bursts were heard ({worker[2]} and {page[2]} of 150)")
    if worker[0] is None:
        check(False, "the page reported no arrival jitter")
        return
    bound = QUANTUM_MS + 3
    measure("busy page, receiver in the Worker: arrival jitter p99", worker[0], "ms", round(3 * bound),
            f"(the issue's bar {bound:.1f}: one graph cycle + 3 ms; on the page's thread {page[0]} ms)")
    # Gross: 38.7 ms in clean-clone run 38, 93.8 in run 44, alone both times (p50 111 ms there,
    # the player's own jitter estimate 30 ms against 8.5 ms of arrival jitter p99: it held
    # more than the arrivals asked, not explained yet); a player that does not keep up is far past.
    measure("busy page, receiver in the Worker: sink to sink p99 less Chromium's output delay", worker[1], "ms", 150,
            f"(the issue's bar 30; on the page's thread {page[1]:.1f} ms)")
