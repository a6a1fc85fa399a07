#!/usr/bin/env python3
"""The tracer's cost the self-timing does not see, per CUDA API call (issue 33).

For each scenario of an external-suite run: the traced median step (`analyze` on the
trace), the untraced median step (the suite's interleaved problem arm), the tracer's
self-timed host time per step (the trace's `api.tracer_ns`, what `analyze` removes by
default) and the API calls per step. The residual per call is

    (traced step - untraced step - self-timed tracer time per step) / API calls per step

which is what the traced host pays per call beyond our own handlers (CUPTI's callback and
activity machinery, Python stacks' share outside the handler, cache effects). Only
host-bound steps expose it in the step time; GPU-bound ones show ~0 or negative.

usage: tracer_residual.py --results RUN.jsonl[,RUN2.jsonl] --traces DIR[,DIR2] [--stepscope BIN]

Example (session 18's H100 run 2, traces kept from it):
  python3 bench/tracer_residual.py --results bench/results/2026-11-27/h100_external_suite_run2.jsonl \\
      --traces /work/handoff/suite_h100_run2/a,/work/handoff/suite_h100_run2/b
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True, help="suite JSON lines, comma-separated")
    ap.add_argument("--traces", required=True, help="folders of SCENARIO.sqlite, comma-separated")
    ap.add_argument("--stepscope", default=os.path.join("build", "bin", "stepscope"))
    a = ap.parse_args()
    untraced = {}
    for f in a.results.split(","):
        for line in open(f):
            d = json.loads(line)
            if d.get("problem_ms"):
                untraced[d["scenario"]] = statistics.median(d["problem_ms"])
    print("| scenario | traced ms | untraced ms | traced/untraced | self-timed ms/step | API calls/step "
          "| residual us/call | host-bound |")
    print("|---|---|---|---|---|---|---|---|")
    for sc in sorted(untraced):
        path = next((os.path.join(d, sc + ".sqlite") for d in a.traces.split(",")
                     if os.path.exists(os.path.join(d, sc + ".sqlite"))), None)
        if not path:
            continue
        out = subprocess.run([a.stepscope, "analyze", "--format", "json", path], check=True,
                             capture_output=True, text=True).stdout
        s = json.loads(out)["summary"][0]
        steps = json.loads(subprocess.run([a.stepscope, "steps", "--format", "json", path], check=True,
                                          capture_output=True, text=True).stdout)["steps"]
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        calls = db.execute("SELECT COUNT(*), COALESCE(SUM(tracer_ns), 0) FROM api").fetchone()
        db.close()
        n = max(1, len(steps))
        traced = s["median_step_ns"] / 1e6
        self_ms = calls[1] / n / 1e6
        per_step = calls[0] / n
        resid_us = (traced - untraced[sc] - self_ms) * 1e3 / per_step
        print("| %s | %.2f | %.2f | %.2f | %.2f | %d | %.2f | %s |" % (
            sc, traced, untraced[sc], traced / untraced[sc], self_ms, per_step, resid_us, s["host_bound"]))


if __name__ == "__main__":
    main()
