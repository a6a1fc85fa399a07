#!/usr/bin/env python3
"""Parses the logs of bench/monitor_overhead.sh: the workload's JSON result
lines ({"rank": R, "ms_per_step": X, ...}; two ranks may print on one line).

  monitor_overhead_parse.py LOG              one run: "rank0=X rank1=Y"
  monitor_overhead_parse.py --summary DIR N ARM...  medians of run_ARM_{1..N}.log,
                                                    ratios to the first ARM
"""
import json
import os
import re
import statistics
import sys

OBJ = re.compile(r"\{[^{}]*\"ms_per_step\"[^{}]*\}")


def results(path):
    out = {}
    with open(path, errors="replace") as f:
        for m in OBJ.finditer(f.read()):
            j = json.loads(m.group(0))
            out[j["rank"]] = j["ms_per_step"]
    return out


def main():
    if sys.argv[1] != "--summary":
        r = results(sys.argv[1])
        print(" ".join(f"rank{k}={v}" for k, v in sorted(r.items())) or "no result")
        return
    log, pairs, arms = sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    t = {}
    for arm in arms:
        for i in range(1, pairs + 1):
            path = os.path.join(log, f"run_{arm}_{i}.log")
            if os.path.exists(path):
                for rank, ms in results(path).items():
                    t.setdefault((arm, rank), []).append(ms)
    for r in sorted({k[1] for k in t}):
        base = t.get((arms[0], r), [])
        if not base:
            continue
        mb = statistics.median(base)
        parts = [f"{arms[0]} {mb:.3f} ms/step ({len(base)} runs)"]
        for arm in arms[1:]:
            v = t.get((arm, r), [])
            if v:
                m = statistics.median(v)
                parts.append(f"{arm} {m:.3f} ms/step ({len(v)} runs, ratio {m / mb:.4f})")
        print(f"rank {r}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
