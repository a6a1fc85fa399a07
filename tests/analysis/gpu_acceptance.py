#!/usr/bin/env python3
"""Acceptance checks of `stepscope analyze` / `diff` on the real GPU traces.

tests/fixtures/gpu/ holds traces of ../shared/workloads/train_gpt.py recorded on
an H200, each with the workload's own timing (NAME.result.json: ms_per_step).
The issue's acceptance criteria, checked against those numbers:

  * --workers 0 --cpu-work-ms 4: data_loading is the top finding and its cost
    per step is within 10% of the measured step-time difference to
    --workers 4 --cpu-work-ms 4;
  * --sync-every 1: host_sync is the top finding; --dtype fp32: fp32_gemm;
    --offload: offload_copies;
  * the default run: no finding costs more than 5% of the analyzed time;
  * diff workers0 vs workers4: the step-time ratio within 5% of the ratio of
    the workload's own ms_per_step.

  gpu_acceptance.py STEPSCOPE_BINARY
"""
import csv
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU = os.path.join(SRC, "tests", "fixtures", "gpu")


def main():
    stepscope = sys.argv[1]
    if not os.path.isdir(GPU):
        print(f"skipped: {GPU} is absent")
        return 0
    tmp = tempfile.mkdtemp(prefix="stepscope-acceptance-")
    failures = []
    try:
        traces, ms = {}, {}
        for name in ["default", "workers0_cpu4", "workers4_cpu4", "sync1", "fp32", "offload"]:
            traces[name] = os.path.join(tmp, name + ".sqlite")
            with gzip.open(os.path.join(GPU, name + ".sqlite.gz"), "rb") as fin, open(traces[name], "wb") as fout:
                shutil.copyfileobj(fin, fout)
            with open(os.path.join(GPU, name + ".result.json")) as f:
                ms[name] = json.load(f)["ms_per_step"]

        def findings(name):
            out = subprocess.run([stepscope, "analyze", "--format", "csv", "--output", os.path.join(tmp, name),
                                  traces[name]], check=True, capture_output=True)
            with open(os.path.join(tmp, name, "findings.csv")) as f:
                return list(csv.DictReader(f))

        def check(ok, what):
            print(("ok   " if ok else "FAIL ") + what)
            if not ok:
                failures.append(what)

        for name, rule in [("workers0_cpu4", "data_loading"), ("sync1", "host_sync"), ("fp32", "fp32_gemm"),
                           ("offload", "offload_copies")]:
            f = findings(name)
            top = f[0]["rule"] if f else "(none)"
            check(top == rule, f"{name}: top finding {top}, expected {rule}")
        f = findings("workers0_cpu4")
        lost = int(f[0]["cost_per_step_ns"]) / 1e6
        measured = ms["workers0_cpu4"] - ms["workers4_cpu4"]
        err = (lost - measured) / measured
        check(abs(err) <= 0.10, f"data_loading cost {lost:.3f} ms/step vs measured difference "
                                f"{measured:.3f} ms/step: {100 * err:+.1f}% (limit 10%)")
        f = findings("default")
        worst = max((float(x["cost_pct"]) for x in f), default=0.0)
        check(worst <= 5.0, f"default run: costliest finding {worst:.2f}% of the analyzed time (limit 5%)")
        out = subprocess.run([stepscope, "diff", "--format", "csv", "--output", os.path.join(tmp, "diff"),
                              traces["workers0_cpu4"], traces["workers4_cpu4"]], check=True, capture_output=True)
        with open(os.path.join(tmp, "diff", "diff_summary.csv")) as f:
            rows = {r["metric"]: r for r in csv.DictReader(f)}
        ratio = float(rows["speedup (before/after)"]["change"])
        expected = ms["workers0_cpu4"] / ms["workers4_cpu4"]
        err = (ratio - expected) / expected
        check(abs(err) <= 0.05, f"diff step-time ratio {ratio:.3f} vs train_gpt.py's {expected:.3f}: "
                                f"{100 * err:+.1f}% (limit 5%)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
