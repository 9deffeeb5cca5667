#!/usr/bin/env python3
"""CPU of `deskaudio serve --web` with one browser attached against `deskaudio record` on the
same capture (scripts/bench-serve runs it). A 1 kHz tone plus white noise (so the encoder
works) plays into the host rig's default sink throughout. Each round runs both at once, side
by side, and takes each process's own CPU (utime + stime from /proc) over the same window,
after start-up, so both meet the same load; rounds alternate which starts first. (One after
the other, as this measured before, two identical senders on this machine differed by up to
1.28x over 20 s windows: Tests/WebRTC/webrtc_test.py.) The browser's CPU is not counted: it is
the viewer's, not the host's. $DESKAUDIO_SERVE_FLAGS and $DESKAUDIO_RECORD_FLAGS add options to
each (`--frame-ms 5` to both, to compare like with like)."""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Browser"))
from web_rig import (Browser, Serve, cpu_seconds, play, rig_arguments, rig_environment, silence,  # noqa: E402
                     tone)

def measure(processes, warmup, window):
    """Each of `processes`' CPU over the same `window` seconds after `warmup`, as a share of a core."""
    time.sleep(warmup)
    start = [cpu_seconds(process.pid) for process in processes]
    time.sleep(window)
    return [(cpu_seconds(process.pid) - before) / window for process, before in zip(processes, start)]


def main():
    parser = rig_arguments(__doc__)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    host = rig_environment(arguments.host_rig)
    browser_env = rig_environment(arguments.browser_rig)
    window = arguments.seconds
    total = (window + 15) * 2 * arguments.rounds + 30
    noise = np.random.default_rng(1).normal(0, 0.05, int(total * 48000))
    signal = np.clip(tone(total, 0.3) + noise, -1, 1)
    player = play(host, os.path.join(arguments.work, "bench.wav"), signal, silence(0.1))
    results = {"record": [], "serve": []}

    def start_record():
        return subprocess.Popen(
            [arguments.deskaudio, "record", "--seconds", str(window + 30), os.path.join(arguments.work, "bench.opus"),
             *os.environ.get("DESKAUDIO_RECORD_FLAGS", "").split()],
            env=host, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for round in range(arguments.rounds):
            record = start_record() if round % 2 == 0 else None
            serve = Serve(arguments.deskaudio, host, window + 30)
            browser = Browser(serve.url, browser_env, os.path.join(arguments.work, f"profile-{round}"))
            try:
                serve.wait_for_players(1)
                record = record or start_record()
                record_cpu, serve_cpu = measure([record, serve.process], 2, window)
                results["record"].append(record_cpu)
                results["serve"].append(serve_cpu)
            finally:
                browser.stop()
                serve.stop()
                if record:
                    record.send_signal(2)
                    record.wait(10)
            print(f"round {round + 1}: record {100 * record_cpu:.2f} %, serve {100 * serve_cpu:.2f} % of a core "
                  f"({serve_cpu / record_cpu:.2f}x)", flush=True)
    finally:
        player.kill()
    record, serve = np.median(results["record"]), np.median(results["serve"])
    ratios = sorted(s / r for s, r in zip(results["serve"], results["record"]))
    print(f"median over {arguments.rounds} rounds of {window:.0f} s side by side: record {100 * record:.2f} %, "
          f"serve with one browser {100 * serve:.2f} % of a core; serve / record = {serve / record:.2f} "
          f"(per round {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
