#!/usr/bin/env python3
"""GPU check of the SQL views gpu_ops_v / steps_v and the Python API on fresh captures.

Records the reference workload with `stepscope profile` (the tracer writes the views into the
trace), then checks with the standard library only (sqlite3, json), each printed PASS/FAIL:
  views_in_file   the captured trace holds gpu_ops_v and steps_v
  steps_v         step, start, duration and op count equal `stepscope steps --format json`
  proj_sum        the projection example of docs/schema.md equals the nvtx_gpu_proj_sum recipe
  autograd        ops launched by the autograd thread are attributed to `backward`
  speed           time of SELECT COUNT(*) FROM gpu_ops_v / steps_v (and ops per second)
  python_api      when pandas is importable: stepscope.open(trace) DataFrames vs the CLI
Runs: the small preset (6+2 steps) and a longer one (40+2 steps) for the speed figure.
About 3 minutes on an H100/H200.

usage (from the repository root, stepscope built here and carried):
  python3 tests/gpu/views_check.py --stepscope build/bin/stepscope \\
      --workload ../shared/workloads/train_gpt.py --out /tmp/views_check
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

from gpukit import RESULTS, report

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def cli_json(binary, *args):
    out = subprocess.run([binary, *args, "--format", "json"], check=True, capture_output=True,
                         text=True, timeout=300).stdout
    return json.loads(out)


def proj_query():
    with open(os.path.join(SRC, "docs", "schema.md")) as f:
        views = f.read().split("## Views", 1)[1]
    for q in re.findall(r"```sql\n(.*?)```", views, flags=re.S):
        if "total_proj_ns" in q:
            return q.strip().rstrip(";")
    raise RuntimeError("docs/schema.md has no projection example")


def check_trace(args, label, trace):
    db = sqlite3.connect(trace)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
    report(f"{label} views_in_file", {"gpu_ops_v", "steps_v"} <= names, sorted(names))
    try:
        cli = cli_json(args.stepscope, "steps", trace)["steps"]
        origin = db.execute("SELECT MIN(t) FROM (SELECT CAST(value AS INTEGER) AS t FROM meta "
                            "WHERE key = 'start_ns' UNION ALL SELECT MIN(start_ns) FROM kernels "
                            "UNION ALL SELECT MIN(start_ns) FROM api UNION ALL "
                            "SELECT MIN(start_ns) FROM nvtx)").fetchone()[0]
        rows = db.execute("SELECT step, start_ns, duration_ns, gpu_ops FROM steps_v").fetchall()
        mine = [(s, st - origin, d, g) for s, st, d, g in rows]
        theirs = [(s["step"], s["start_ns"], s["duration_ns"], s["gpu_ops"]) for s in cli]
        report(f"{label} steps_v", mine == theirs,
               f"{len(mine)} steps; first mismatch: "
               f"{next(((a, b) for a, b in zip(mine, theirs) if a != b), None)}")
    except Exception as e:  # noqa: BLE001 - report and go on
        report(f"{label} steps_v", False, repr(e))
    try:
        recipe = {r["range"]: r for r in cli_json(args.stepscope, "stats", trace, "--report",
                                                  "nvtx_gpu_proj_sum")["nvtx_gpu_proj_sum"]}
        got = {r[0]: r[1:] for r in db.execute(
            "SELECT range, instances, total_proj_ns, total_gpu_ops FROM (" + proj_query() + ")")}
        bad = [k for k in recipe if got.get(k) != (recipe[k]["instances"],
                                                   recipe[k]["total_proj_ns"],
                                                   recipe[k]["total_gpu_ops"])]
        report(f"{label} proj_sum", not bad and len(got) == len(recipe),
               f"{len(recipe)} ranges, mismatched: {bad[:3]}")
    except Exception as e:  # noqa: BLE001
        report(f"{label} proj_sum", False, repr(e))
    try:
        cross = db.execute("SELECT nvtx_name, COUNT(*) FROM gpu_ops_v WHERE api_tid <> nvtx_tid "
                           "GROUP BY nvtx_name").fetchall()
        report(f"{label} autograd", bool(cross) and {n for n, _ in cross} <= {"backward"},
               f"ops attributed across threads: {cross}")
    except Exception as e:  # noqa: BLE001
        report(f"{label} autograd", False, repr(e))
    try:
        t0 = time.time()
        n = db.execute("SELECT COUNT(*) FROM gpu_ops_v").fetchone()[0]
        t1 = time.time()
        db.execute("SELECT COUNT(*) FROM steps_v").fetchone()
        t2 = time.time()
        report(f"{label} speed", True,
               f"gpu_ops_v {n} ops in {t1 - t0:.2f} s ({n / max(t1 - t0, 1e-9):.0f} ops/s); "
               f"steps_v {t2 - t1:.2f} s")
    except Exception as e:  # noqa: BLE001
        report(f"{label} speed", False, repr(e))
    db.close()
    try:
        import pandas  # noqa: F401
    except ImportError:
        print(f"SKIP {label} python_api: no pandas here", flush=True)
        return
    try:
        sys.path.insert(0, os.path.join(SRC, "python"))
        os.environ["STEPSCOPE_BIN"] = os.path.abspath(args.stepscope)
        import stepscope
        with stepscope.open(trace) as t:
            steps = t.steps()
            ok = steps.to_dict("records") == cli_json(args.stepscope, "steps", trace)["steps"]
            ops = t.gpu_ops()
            report(f"{label} python_api", ok and len(ops) > 0,
                   f"steps() == CLI: {ok}; gpu_ops() {len(ops)} rows")
    except Exception as e:  # noqa: BLE001
        report(f"{label} python_api", False, repr(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for label, steps in (("small6", 6), ("small40", 40)):
        trace = os.path.join(args.out, f"{label}.sqlite")
        try:
            p = subprocess.run([args.stepscope, "profile", "-q", "-f", "-o", trace[:-7], "--",
                                sys.executable, args.workload, "--preset", "small", "--steps",
                                str(steps), "--warmup", "2"], capture_output=True, text=True,
                               timeout=240)
            with open(os.path.join(args.out, f"{label}.log"), "w") as f:
                f.write(p.stdout + p.stderr)
            if not os.path.exists(trace):
                report(f"{label} capture", False, f"exit {p.returncode}, no {trace}")
                continue
            check_trace(args, label, trace)
        except Exception as e:  # noqa: BLE001
            report(f"{label} capture", False, repr(e))
    with open(os.path.join(args.out, "views_check.json"), "w") as f:
        json.dump([{"check": n, "ok": ok, "detail": d} for n, ok, d in RESULTS], f, indent=1)
    print("\n=== views_check summary ===")
    for n, ok, d in RESULTS:
        print(f"{'PASS' if ok else 'FAIL'}  {n:22s} {str(d)[:100]}")
    print(f"{sum(ok for _, ok, _ in RESULTS)} passed, {sum(not ok for _, ok, _ in RESULTS)} failed")
    return 0 if all(ok for _, ok, _ in RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
