#!/usr/bin/env python3
"""Figure: the tracer's cost per kernel launch, by part (docs/PERFORMANCE.md, "Capture overhead").

A host-bound loop of N empty kernel launches (tests/gpu/tiny_kernels.cu, built here with nvcc) run
bare and under `stepscope profile` with parts of the capture switched off (STEPSCOPE_DIAG_OFF,
diagnostics), arms interleaved round by round (A B C ... A B C ...). The loop is pure launch work:
its time per launch moves far less between processes than a training step does, so the difference
of medians between two arms is the per-launch cost of what separates them.

  python3 bench/launch_cost.py --stepscope BIN --out DIR [--n 200000] [--rounds 5]

Arms: bare; floor (kernel + memcpy records only); api (floor + API callbacks, runtime and driver
domain); api_rt (floor + runtime-domain callbacks only); api_noop (callbacks that return at once:
CUPTI's own cost of calling them); api_drvlaunch (launches from the driver-domain callbacks only:
one callback pair per launch instead of two); full_drvlaunch (the default tracer so); api_noput (timestamps, no ring write); full (the default tracer, no host
sampling: a C program has no Python). Prints per arm the median us/launch and the difference to
bare and to the floor, and writes DIR/launch_cost.json.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--binary", help="a prebuilt tiny_kernels")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    binary = a.binary or os.path.join(a.out, "tiny_kernels")
    if not a.binary:
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        subprocess.run([nvcc, "-O2", "-o", binary, os.path.join(HERE, "..", "tests", "gpu", "tiny_kernels.cu")],
                       check=True)
    prof = [a.stepscope, "profile", "-q", "-f", "--sample-hz", "0", "-o", os.path.join(a.out, "lc")]
    floor_off = "api,overhead,memory,um"
    arms = {
        "bare": ([], {}),
        "floor": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": floor_off}),
        "api": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": "overhead,memory,um"}),
        "api_rt": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": "overhead,memory,um,driver"}),
        "api_drvlaunch": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": "overhead,memory,um,rtlaunch"}),
        "full_drvlaunch": (prof, {"STEPSCOPE_DIAG_OFF": "rtlaunch"}),
        "api_noop": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": "overhead,memory,um,apiwork"}),
        "api_noput": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": "overhead,memory,um,apiput"}),
        "full": (prof, {}),
    }
    us = {k: [] for k in arms}
    for r in range(a.rounds):
        for name, (pre, env) in arms.items():
            e = dict(os.environ, **env)
            p = subprocess.run(pre + ["--", binary, str(a.n)] if pre else [binary, str(a.n)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, timeout=300)
            line = [l for l in p.stdout.decode().splitlines() if l.startswith("{")]
            if p.returncode != 0 or not line:
                print(f"{name}: rc {p.returncode}: {p.stderr.decode()[-300:]}", flush=True)
                continue
            d = json.loads(line[-1])
            us[name].append(d["seconds"] / a.n * 1e6)
    med = {k: statistics.median(v) for k, v in us.items() if v}
    for k, m in med.items():
        print(f"{k:14s} {m:.3f} us/launch  (+{m - med.get('bare', m):.3f} vs bare, "
              f"{m - med.get('floor', m):+.3f} vs floor)  runs {[round(x, 3) for x in us[k]]}", flush=True)
    with open(os.path.join(a.out, "launch_cost.json"), "w") as f:
        json.dump({"n": a.n, "us_per_launch": us, "median": med}, f, indent=1)


if __name__ == "__main__":
    main()
