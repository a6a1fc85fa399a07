#!/usr/bin/env python3
"""GPU check: every kernel and copy of a training step has its launching API record, whichever
domain the tracer takes launches from (capture/config.h: runtime_launches). ~1 minute.

  python3 tests/gpu/launch_records_check.py --stepscope BIN --workload train_gpt.py --out DIR

Profiles `train_gpt.py --preset small --steps 20` with the default tracer and with
STEPSCOPE_RUNTIME_LAUNCHES=1; per trace: kernels, memcpys and memsets whose correlation has an api
row (must be 100%), and the API functions that launched them.
"""
import argparse
import os
import sqlite3
import subprocess
import sys


def check(path):
    db = sqlite3.connect(path)
    out, ok = [], True
    for t in ("kernels", "memcpy", "memset"):
        n = db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        linked = db.execute(f"SELECT count(*) FROM {t} x WHERE EXISTS "
                            f"(SELECT 1 FROM api a WHERE a.correlation = x.correlation)").fetchone()[0]
        ok &= n == linked
        out.append(f"{t} {linked}/{n}")
    names = db.execute("SELECT s.value, count(*) FROM kernels k JOIN api a ON a.correlation = k.correlation "
                       "JOIN strings s ON s.id = a.name_id GROUP BY 1 ORDER BY 2 DESC").fetchall()
    return ok, ", ".join(out) + "; launched by " + ", ".join(f"{n} x{c}" for n, c in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    failed = 0
    for name, env in (("driver_launches", {}), ("runtime_launches", {"STEPSCOPE_RUNTIME_LAUNCHES": "1"})):
        base = os.path.join(a.out, name)
        p = subprocess.run([a.stepscope, "profile", "-q", "-f", "-o", base, "--", sys.executable, a.workload,
                            "--preset", "small", "--steps", "20"], env=dict(os.environ, **env),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if p.returncode != 0:
            print(f"FAIL {name}: rc {p.returncode}: {p.stderr.decode()[-300:]}")
            failed += 1
            continue
        ok, detail = check(base + ".sqlite")
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
