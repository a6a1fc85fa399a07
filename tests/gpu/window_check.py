#!/usr/bin/env python3
"""GPU check of the recording windows: --capture-range cudaProfilerApi (train_gpt.py --profiler-range
wraps its timed steps in cudaProfilerStart/Stop) and --delay/--duration.

usage: window_check.py --stepscope BIN --workload train_gpt.py --out DIR
"""
import argparse
import os
import subprocess
import sys

from gpukit import q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    fails = 0
    t = os.path.join(a.out, "range.sqlite")
    p = subprocess.run([a.stepscope, "profile", "-q", "-f", "-o", t, "--capture-range", "cudaProfilerApi", "--",
                        sys.executable, a.workload, "--preset", "tiny", "--steps", "10", "--warmup", "3",
                        "--profiler-range"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    steps = [r[0] for r in q(t, "SELECT s.value FROM nvtx n JOIN strings s ON s.id=n.name_id "
                                "WHERE s.value GLOB 'step [0-9]*' ORDER BY n.start_ns")]
    nk = q(t, "SELECT COUNT(*) FROM kernels")[0][0]
    first_step = q(t, "SELECT MIN(n.start_ns) FROM nvtx n JOIN strings s ON s.id=n.name_id WHERE s.value='step 3'")[0][0]
    early = q(t, f"SELECT COUNT(*) FROM kernels WHERE start_ns < {first_step or 0}")[0][0]
    ok = p.returncode == 0 and steps == [f"step {i}" for i in range(3, 13)] and nk > 0 and early == 0
    fails += not ok
    print(f"{'PASS' if ok else 'FAIL'} capture-range cudaProfilerApi: steps recorded {steps}; {nk} kernels, "
          f"{early} before the range; rc {p.returncode} {p.stderr.decode()[-300:]!r}")
    t = os.path.join(a.out, "window.sqlite")
    p = subprocess.run([a.stepscope, "profile", "-q", "-f", "-o", t, "--delay", "9", "--duration", "2", "--",
                        sys.executable, a.workload, "--preset", "tiny", "--steps", "5000", "--warmup", "3"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not os.path.exists(t):  # e.g. the program ended before the delay: nothing recorded
        print(f"FAIL delay 9 s, duration 2 s: no trace at {t}; rc {p.returncode}; stderr "
              f"{p.stderr.decode()[-400:]!r}; stdout {p.stdout.decode()[-200:]!r}")
        print(f"{1 - fails} passed, {fails + 1} failed")
        return 1
    meta = dict(q(t, "SELECT key, value FROM meta"))
    start = int(meta["start_ns"])
    k0, k1, nk = q(t, "SELECT MIN(start_ns), MAX(end_ns), COUNT(*) FROM kernels")[0]
    n0, n1, nn = q(t, "SELECT MIN(start_ns), MAX(end_ns), COUNT(*) FROM nvtx")[0]
    ok = p.returncode == 0 and nk > 0 and (k0 - start) / 1e9 >= 8.9 and (k1 - k0) / 1e9 <= 2.6
    fails += not ok
    print(f"{'PASS' if ok else 'FAIL'} delay 9 s, duration 2 s: first kernel {(k0 - start) / 1e9:.2f} s after start, "
          f"kernels span {(k1 - k0) / 1e9:.2f} s ({nk} kernels); NVTX {(n0 - start) / 1e9 if n0 else -1:.2f}.."
          f"{(n1 - start) / 1e9 if n1 else -1:.2f} s ({nn}); rc {p.returncode}")
    print(f"{2 - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
