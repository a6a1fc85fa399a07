#!/usr/bin/env python3
"""The per_param_optimizer rule against the fix done for real: HF GPT-2 (tests/gpu/unmarked_loop.py,
built from its config, no NVTX of ours) with AdamW(foreach=False), the problem, against
AdamW(fused=True), the fix. One warm-up run, then ROUNDS rounds of three runs: the problem
bare, the fix bare, the problem under `stepscope profile` (default settings), each traced run
priced by `stepscope analyze` on the trace alone, as a user gets it. Each run's result is one
JSON line in OUT/optimizer_fix.jsonl as soon as it exists; at the end: realized saving =
median bare problem - median bare fix (ms/step timed inside the loop), predicted = median
of the traced runs' per_param_optimizer cost per step.

usage: optimizer_fix_check.py --stepscope BIN --out DIR [--rounds 3] [--steps 40] [--budget-s 480]
Run on the GPU machine from the repository root (tests/gpu/README.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from gpukit import JsonLines, ms_per_step

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unmarked_loop.py")


def loop(optim, steps):
    return [sys.executable, LOOP, "--model", "gpt2", "--optim", optim, "--steps", str(steps)]


def predicted_ms(binary, trace):
    p = subprocess.run([binary, "analyze", "--format", "json", trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return None, p.stderr[-300:]
    rules = [f["rule"] for f in doc.get("findings", [])]
    for f in doc.get("findings", []):
        if f["rule"] == "per_param_optimizer":
            return f["cost_per_step_ns"] / 1e6, rules
    return None, rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--budget-s", type=float, default=480)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    log = JsonLines(os.path.join(a.out, "optimizer_fix.jsonl"))
    t0 = time.monotonic()
    subprocess.run(loop("forloop", 10), stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # warm-up
    got = {"problem": [], "fix": [], "predicted": []}
    trace = "/tmp/optimizer_fix"
    for r in range(a.rounds):
        for arm, cmd in (("problem", loop("forloop", a.steps)), ("fix", loop("fused", a.steps)),
                         ("traced", [a.stepscope, "profile", "-q", "-f", "-o", trace, "--"] +
                          loop("forloop", a.steps))):
            if time.monotonic() - t0 > a.budget_s:
                break
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
            row = {"round": r, "arm": arm, "ms_per_step": ms_per_step(p.stdout), "rc": p.returncode}
            if arm == "traced":
                row["predicted_ms"], row["rules"] = predicted_ms(a.stepscope, trace + ".sqlite")
                if row["predicted_ms"] is not None:
                    got["predicted"].append(row["predicted_ms"])
            elif row["ms_per_step"] is not None:
                got[arm].append(row["ms_per_step"])
            log.write(row)
    if got["problem"] and got["fix"] and got["predicted"]:
        realized = statistics.median(got["problem"]) - statistics.median(got["fix"])
        predicted = statistics.median(got["predicted"])
        summary = {"realized_ms": round(realized, 3), "predicted_ms": round(predicted, 3),
                   "error_pct": round(100 * (predicted - realized) / realized, 1) if realized else None,
                   "n": {k: len(v) for k, v in got.items()}}
        log.write({"summary": summary})
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
