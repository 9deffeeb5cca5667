#!/usr/bin/env python3
"""CPU of `deskaudio serve --web` with one browser attached against `deskaudio record` on the
same capture (scripts/bench-serve runs it). A 1 kHz tone plus white noise (so the encoder
works) plays into the host rig's default sink throughout; rounds alternate the order; each
process's own CPU (utime + stime from /proc) is taken over the same window of each run, after
start-up. The browser's CPU is not counted: it is the viewer's, not the host's."""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Browser"))
from web_rig import (Browser, Serve, cpu_seconds, play, rig_arguments, rig_environment, silence,  # noqa: E402
                     tone)

def measure(process, warmup, window):
    time.sleep(warmup)
    start = cpu_seconds(process.pid)
    time.sleep(window)
    return (cpu_seconds(process.pid) - start) / window


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
    try:
        for round in range(arguments.rounds):
            order = ["record", "serve"] if round % 2 == 0 else ["serve", "record"]
            for kind in order:
                if kind == "record":
                    process = subprocess.Popen(
                        [arguments.deskaudio, "record", "--seconds", str(window + 4),
                         os.path.join(arguments.work, "bench.opus")],
                        env=host, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    results[kind].append(measure(process, 2, window))
                    process.wait()
                else:
                    serve = Serve(arguments.deskaudio, host, window + 30)
                    browser = Browser(serve.url, browser_env, os.path.join(arguments.work, f"profile-{round}"))
                    try:
                        serve.wait_for_players(1)
                        results[kind].append(measure(serve.process, 2, window))
                    finally:
                        browser.stop()
                        serve.stop()
                print(f"round {round + 1}: {kind} {100 * results[kind][-1]:.2f} % of a core", flush=True)
    finally:
        player.kill()
    record, serve = np.median(results["record"]), np.median(results["serve"])
    print(f"median over {arguments.rounds} rounds of {window:.0f} s: record {100 * record:.2f} %, "
          f"serve with one browser {100 * serve:.2f} % of a core; serve / record = {serve / record:.2f}")


if __name__ == "__main__":
    main()
