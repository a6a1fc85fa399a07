#!/usr/bin/env python3
"""Figure: what the untraced step measured by a `profile --steps` trace does to the external suite's
prices (issue 32, docs/PERFORMANCE.md "Run 4"; docs/whatif.md "Measured by the trace itself").

For each scenario of an external-suite run traced with a window (suite_batch.sh with
PROFILE_ARGS="--steps N --warmup-steps W"), the price `analyze` puts on the scenario's cause,
four ways, against the realized saving (median bare problem - median bare fix):
  measured     --untraced-step-ms measured (the hook's mark, when steady and shorter than traced)
  comp-only    the default (the tracer's self-timed time removed)
  as-traced    --keep-tracer-time
  bare-given   --untraced-step-ms = the bare problem arm's median (what no user has)
No GPU: stored traces and results.

  python3 bench/untraced_pricing.py --stepscope BIN --traces DIR suite.jsonl [more.jsonl ...]
"""
import argparse
import json
import os
import statistics
import subprocess


def cause_price(binary, trace, cause, extra=()):
    out = subprocess.run([binary, "analyze", "--format", "json", *extra, trace],
                         capture_output=True, text=True, check=True).stdout
    best = None
    for f in json.loads(out)["findings"]:
        rule = f["rule"]
        if rule == cause or (cause == "data_dependent" and rule.startswith("data_dependent")):
            v = f.get("cost_per_step_ns", 0) / 1e6
            best = v if best is None else max(best, v)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--traces", required=True, help="the run's traces (NAME.sqlite)")
    ap.add_argument("results", nargs="+", help="suite.jsonl files of the run")
    a = ap.parse_args()
    rows = {}
    for path in a.results:
        for line in open(path):
            d = json.loads(line)
            if "cause" in d and d.get("problem_ms"):
                rows[d["scenario"]] = d
    for name, d in sorted(rows.items()):
        trace = os.path.join(a.traces, name + ".sqlite")
        bare = statistics.median(d["problem_ms"])
        r = d["realized_ms"]
        cells = [cause_price(a.stepscope, trace, d["cause"], ["--untraced-step-ms", "measured"]),
                 cause_price(a.stepscope, trace, d["cause"]),
                 cause_price(a.stepscope, trace, d["cause"], ["--keep-tracer-time"]),
                 cause_price(a.stepscope, trace, d["cause"], ["--untraced-step-ms", str(bare)])]
        text = ["-" if v is None else f"{v:.2f} ({100 * (v - r) / r:+.0f}%)" for v in cells]
        print(f"{name:20s} realized {r:6.2f} | measured {text[0]:15s} | comp-only {text[1]:15s} | "
              f"as-traced {text[2]:15s} | bare-given {text[3]}")

if __name__ == "__main__":
    main()
