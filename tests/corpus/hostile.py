#!/usr/bin/env python3
"""Hostile traces that once crashed stepscope or ate all memory; run by ctest.

  hostile.py --stepscope build/bin/stepscope

1. A step range named "step " + 100,000 digits: steps/analyze/diff/report used a
   recursive std::regex on NVTX names and overflowed the stack (SIGSEGV). Now
   each must exit 0 (the name is simply no step).
2. A gzip "string bomb": ~1 MB of .gz holding one JSON string of 1 GB. The
   import must finish with exit 0, skip and count the event
   (import_json_value_too_large = 1), keep the other events, stay under 512 MB
   of peak RSS and leave no temporary file. Generated at test time.
"""
import argparse
import gzip
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile


def digits_name(tmp, stepscope):
    events = []
    for i, name in enumerate(["step 1", "step " + "7" * 100000, "step 2", "step 3"]):
        ts = 1000 + i * 1000
        events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 900})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 10, "dur": 5, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts + 20, "dur": 500,
                       "args": {"device": 0, "stream": 7, "correlation": i + 1}})
    src = os.path.join(tmp, "digits.json")
    with open(src, "w") as f:
        json.dump({"traceEvents": events}, f)
    db = os.path.join(tmp, "digits.sqlite")
    failures = []
    cmds = [["import", src, "-o", db, "-q"], ["steps", db], ["analyze", db], ["diff", db, db],
            ["report", db, "-o", os.path.join(tmp, "digits.html")],
            ["steps", "--step-range", "(a|b)*7", db]]
    for c in cmds:
        p = subprocess.run([stepscope] + c, capture_output=True, text=True)
        if c[0] == "report" and p.returncode == 1 and "charting library" in p.stderr:
            print("hostile: report skipped (this build has no charting library)")
            continue
        if p.returncode != 0:
            failures.append(f"{' '.join(c[:1])}: exit {p.returncode}: {p.stderr.strip()[-200:]}")
    p = subprocess.run([stepscope, "steps", "--format", "json", db], capture_output=True, text=True)
    if p.returncode == 0:
        n = json.loads(p.stdout)["step_summary"][0]["steps"]
        if n != 3:
            failures.append(f"steps found {n}, want 3 (the 100,000-digit name is no step)")
    return failures


def string_bomb(tmp, stepscope, size_mb):
    src = os.path.join(tmp, "bomb.json.gz")
    with gzip.open(src, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, '
                b'"dur": 2, "args": {"device": 0, "stream": 7}}, {"ph": "X", "name": "')
        block = b"A" * (1 << 20)
        for _ in range(size_mb):
            f.write(block)
        f.write(b'"}, {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 5, "dur": 2}]}')
    out_dir = os.path.join(tmp, "bomb_out")
    os.mkdir(out_dir)
    db = os.path.join(out_dir, "bomb.sqlite")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # Not -q: that would silence the warning checked below.
    p = subprocess.run([stepscope, "import", src, "-o", db], capture_output=True, text=True)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    failures = []
    if p.returncode != 0:
        failures.append(f"bomb import: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    if peak_mb > 512 and peak_mb * 1024 > before:
        failures.append(f"bomb import peak RSS {peak_mb:.0f} MB > 512 MB")
    if "import_json_value_too_large" not in p.stderr:
        failures.append("no warning naming import_json_value_too_large")
    left = sorted(os.listdir(out_dir))
    if p.returncode == 0:
        con = sqlite3.connect(db)
        kernels = con.execute("SELECT count(*) FROM kernels").fetchone()[0]
        skipped = con.execute("SELECT value FROM stats WHERE name = 'import_json_value_too_large'").fetchone()
        con.close()
        if kernels != 2 or not skipped or skipped[0] != 1:
            failures.append(f"bomb import: kernels {kernels} (want 2), skipped {skipped} (want 1)")
        if left != ["bomb.sqlite"]:
            failures.append(f"files left beside the output: {left}")
    elif left:
        failures.append(f"files left after a failed import: {left}")
    print(f"string bomb: {os.path.getsize(src) / 1e6:.1f} MB of gzip, {size_mb} MB string, "
          f"import peak RSS {peak_mb:.0f} MB")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--bomb-mb", type=int, default=1024)
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        failures += digits_name(tmp, args.stepscope)
        failures += string_bomb(tmp, args.stepscope, args.bomb_mb)
    for f in failures:
        print("FAIL " + f)
    print("hostile: " + ("ok" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
