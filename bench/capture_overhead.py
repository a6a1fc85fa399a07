#!/usr/bin/env python3
"""Figure: step-time overhead of `stepscope profile` (docs/PERFORMANCE.md, "Capture overhead").

Runs the reference workload bare and under the tracer in interleaved pairs
(A B A B ...), per preset, and reports the median ms/step of each arm, the
ratio of medians, and the median of the per-pair ratios. The workload prints
its own ms/step over the timed steps (after warm-up), so startup and the
tracer's finalization are excluded, as a user's step time would be.

usage: capture_overhead.py --stepscope BIN --workload train_gpt.py
         [--presets small,tiny] [--pairs 6] [--steps 100] [--floor] [--variant NAME=ENV,...]
--floor adds the CUPTI floor arm "floor": kernel and memcpy records only
(--trace cuda, STEPSCOPE_DIAG_OFF=api,overhead,flush), the least any CUPTI tracer costs.
A variant adds another arm with extra environment for the tracer, e.g.
  --variant nomem=STEPSCOPE_TRACE=cuda,nvtx --variant act="STEPSCOPE_API_MODE=activity;STEPSCOPE_SYNC_MODE=cupti"
An arm adds `stepscope profile` options, e.g. (host sampling, docs/host.md)
  --arm nohost="--sample-hz 0 --python-stacks off" --arm hz1000="--sample-hz 1000"
--torch-stack adds the arm "torch_stack": the workload under torch.profiler with
with_stack=True (bench/torch_with_stack.py; the workload's --torch-profiler).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def one(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {p.stderr.decode()[-1500:]}")
    return json.loads(p.stdout.decode().strip().splitlines()[-1])["ms_per_step"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--presets", default="small,tiny")
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--floor", action="store_true", help="add the CUPTI floor arm (see above)")
    ap.add_argument("--arm", action="append", default=[], help="NAME=PROFILE_OPTIONS (see above)")
    ap.add_argument("--torch-stack", action="store_true", help="add torch.profiler with_stack=True")
    ap.add_argument("--json-out")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="stepscope-overhead-")
    results = {}
    for preset in a.presets.split(","):
        base = [sys.executable, a.workload, "--preset", preset, "--steps", str(a.steps), "--json"]
        arms = {"bare": (base, None), "stepscope": ([a.stepscope, "profile", "-q", "-f", "-o",
                                                     os.path.join(tmp, "t")] + ["--"] + base, None)}
        for v in a.variant:
            name, kvs = v.split("=", 1)
            env = dict(os.environ)
            for kv in kvs.split(";"):
                k, val = kv.split("=", 1)
                env[k] = val
            arms[name] = ([a.stepscope, "profile", "-q", "-f", "-o", os.path.join(tmp, name)] + ["--"] + base, env)
        for arm in a.arm:
            name, opts = arm.split("=", 1)
            arms[name] = ([a.stepscope, "profile", "-q", "-f", "-o", os.path.join(tmp, name)] + opts.split() +
                          ["--"] + base, None)
        if a.torch_stack:
            wrapper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_with_stack.py")
            arms["torch_stack"] = ([sys.executable, wrapper, a.workload] + base[2:] +
                                   ["--torch-profiler", os.path.join(tmp, "torch_stack.json")], None)
        if a.floor:
            env = dict(os.environ, STEPSCOPE_DIAG_OFF="api,overhead,flush")
            arms["floor"] = ([a.stepscope, "profile", "-q", "-f", "-o", os.path.join(tmp, "floor"),
                              "--trace", "cuda", "--"] + base, env)
        times = {k: [] for k in arms}
        for i in range(a.pairs):
            for name, (cmd, env) in arms.items():
                times[name].append(one(cmd, env))
            print(f"{preset} pair {i}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in times.items()), flush=True)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"median_ms": med, "runs": times}
        for k in arms:
            if k == "bare":
                continue
            row[f"ratio_{k}"] = med[k] / med["bare"]
            row[f"pair_ratio_median_{k}"] = statistics.median(t / b for t, b in zip(times[k], times["bare"]))
        results[preset] = row
        print(f"{preset}: " + ", ".join(f"{k} median {v:.3f} ms" for k, v in med.items()) + "; " +
              ", ".join(f"{k} {v:.3f}" for k, v in row.items() if k.startswith(("ratio", "pair"))), flush=True)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
