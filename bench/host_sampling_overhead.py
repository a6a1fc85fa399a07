#!/usr/bin/env python3
"""Figure: what host sampling costs a CPU-bound Python program (docs/PERFORMANCE.md, "Host sampling").

Runs a pure-Python loop with 8 extra idle threads (a training process has dozens) bare and
under `stepscope profile` at the default 200 Hz and at 1 kHz, in interleaved rounds, and
reports median seconds per arm and the ratios. No GPU needed.

usage: host_sampling_overhead.py --stepscope BIN [--rounds 5] [--seconds 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PROGRAM = r"""
import json, sys, threading, time
stop = threading.Event()
threads = [threading.Thread(target=stop.wait) for _ in range(8)]
for t in threads: t.start()
def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
t0 = time.perf_counter(); work(int(sys.argv[1])); dt = time.perf_counter() - t0
stop.set()
print(json.dumps({"seconds": dt}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=30_000_000)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="stepscope-hostcost-")
    prog = os.path.join(tmp, "loop.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    base = [sys.executable, prog, str(a.iterations)]
    arms = {"bare": base,
            "hz200": [a.stepscope, "profile", "-q", "-f", "-o", os.path.join(tmp, "a"), "--"] + base,
            "hz1000": [a.stepscope, "profile", "-q", "-f", "-o", os.path.join(tmp, "b"), "--sample-hz", "1000",
                       "--"] + base}
    times = {k: [] for k in arms}
    for i in range(a.rounds):
        for k, cmd in arms.items():
            out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True).stdout
            times[k].append(json.loads(out.strip().splitlines()[-1])["seconds"])
        print(f"round {i}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in times.items()), flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({"median_s": med, "ratio_hz200": med["hz200"] / med["bare"],
                      "ratio_hz1000": med["hz1000"] / med["bare"]}))


if __name__ == "__main__":
    main()
