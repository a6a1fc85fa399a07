#!/usr/bin/env python3
"""Figure: the tracer's cost per kernel launch, by part (docs/PERFORMANCE.md, "Capture overhead").

A host-bound loop of N empty kernel launches (tests/gpu/tiny_kernels.cu, built here with nvcc) run
bare and under `stepscope profile` with parts of the capture switched off (STEPSCOPE_DIAG_OFF,
diagnostics), arms interleaved round by round (A B C ... A B C ...). The loop is pure launch work:
its time per launch moves far less between processes than a training step does, so the difference
of medians between two arms is the per-launch cost of what separates them.

  python3 bench/launch_cost.py --stepscope BIN --out DIR [--n 200000] [--rounds 5]

Arms: bare; floor (kernel + memcpy records only); api (floor + API callbacks; launches from the
driver domain only, the default); api_both (launches from the runtime and the driver domain: two
callback pairs per launch, the tracer before 2026-11-24); full_both (the default tracer so);
api_noop (callbacks that return at once: CUPTI's own cost of calling them); api_noput
(timestamps, no ring write); full (the default tracer, no host
sampling: a C program has no Python). Prints per arm the median us/launch and the difference to
bare and to the floor, and writes DIR/launch_cost.json.

--in-process: the same parts inside ONE process (tests/gpu/launch_phases.cu under
`--capture-range cudaProfilerApi` with STEPSCOPE_DIAG_CYCLE): ROUNDS x SETS phases of N launches
with recording ON, each followed by N launches with it OFF; per set the median over rounds of
(ON - mean of the OFF phases around it) in us/launch. Process-to-process noise on the lent VMs
(+-20% on bare runs) cancels; what remains is the cost of each set's parts.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


IN_PROCESS_SETS = [
    ("floor", "api,overhead,memory,um,nvtx,sampling"),  # kernel + memcpy records only
    ("api_noop", "overhead,memory,um,nvtx,sampling,apiwork"),
    ("api_noput", "overhead,memory,um,nvtx,sampling,apiput"),
    ("api_both", "overhead,memory,um,nvtx,sampling,rtlaunch_on"),  # launches from both domains
    ("api_rt", "overhead,memory,um,nvtx,sampling,rtlaunch_on,driver"),  # runtime domain only
    ("api", "overhead,memory,um,nvtx,sampling"),  # the default: launches from the driver domain
    ("full_both", "rtlaunch_on"),  # the tracer before 2026-11-24
    ("full", "none"),  # the default tracer
]


def in_process(a):
    binary = os.path.join(a.out, "launch_phases")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    subprocess.run([nvcc, "-O2", "-o", binary, os.path.join(HERE, "..", "tests", "gpu", "launch_phases.cu")],
                   check=True)
    env = dict(os.environ, STEPSCOPE_DIAG_CYCLE=";".join(p for _, p in IN_PROCESS_SETS))
    if a.ring_mb:
        env["STEPSCOPE_RING_MB"] = str(a.ring_mb)
    cmd = [a.stepscope, "profile", "-q", "-f", "--sample-hz", "0", "--capture-range", "cudaProfilerApi",
           "-o", os.path.join(a.out, "lp"), "--", binary, str(a.n), str(a.rounds), str(len(IN_PROCESS_SETS))]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=600)
    line = [l for l in p.stdout.decode().splitlines() if l.startswith("{")]
    if p.returncode != 0 or not line:
        raise SystemExit(f"launch_phases failed rc {p.returncode}: {p.stderr.decode()[-500:]}")
    ph = json.loads(line[-1])["phases"]
    # OFF phase i follows ON phase i; the OFF before ON phase i is phase i-1's.
    res = {}
    for i, x in enumerate(ph):
        offs = [x["off"]] + ([ph[i - 1]["off"]] if i else [])
        res.setdefault(x["set"], []).append(x["on"] - statistics.mean(offs))
    off_all = statistics.median(x["off"] for x in ph)
    out = {}
    floor = statistics.median(res[0])
    print(f"OFF (recording off, tracer subscribed) {off_all:.3f} us/launch; N={a.n}, {a.rounds} rounds", flush=True)
    for k, (name, parts) in enumerate(IN_PROCESS_SETS):
        d = statistics.median(res[k])
        out[name] = {"parts_off": parts, "us_over_off": d, "us_over_floor": d - floor, "per_round": res[k]}
        print(f"{name:14s} +{d:.3f} us/launch over OFF, {d - floor:+.3f} over the floor "
              f"(IQR {statistics.quantiles(res[k], n=4)[0]:.3f}..{statistics.quantiles(res[k], n=4)[2]:.3f})",
              flush=True)
    with open(os.path.join(a.out, f"launch_cost_in_process{a.tag}.json"), "w") as f:
        json.dump({"n": a.n, "rounds": a.rounds, "off_us": off_all, "sets": out, "phases": ph}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--binary", help="a prebuilt tiny_kernels")
    ap.add_argument("--ring-mb", type=int, default=0, help="STEPSCOPE_RING_MB for --in-process")
    ap.add_argument("--tag", default="", help="suffix of the result file")
    ap.add_argument("--in-process", action="store_true", help="the parts inside one process (see above)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.in_process:
        return in_process(a)
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
        "api_both": (prof + ["--trace", "cuda"], {"STEPSCOPE_DIAG_OFF": "overhead,memory,um,rtlaunch_on"}),
        "full_both": (prof, {"STEPSCOPE_DIAG_OFF": "rtlaunch_on"}),
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
