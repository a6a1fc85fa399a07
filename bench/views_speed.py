#!/usr/bin/env python3
"""Query time of the SQL views gpu_ops_v and steps_v on a trace COPIES times the bundled
sample (the sample's 8 steps repeated, shifted in time and correlation id), standard library
only. The views come from `stepscope schema --sql` (as the Python API adds them to an older
trace).

  python3 bench/views_speed.py [STEPSCOPE_BIN] [COPIES]     (defaults: build/bin/stepscope, 20)
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build", "bin", "stepscope")
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    sql = subprocess.run([binary, "schema", "--sql"], check=True, capture_output=True,
                         text=True).stdout
    views = [s for s in sql.split(";\n") if s.strip().startswith("CREATE VIEW")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.sqlite")
        with open(os.path.join(SRC, "tests", "fixtures", "sample", "sample.sqlite"), "rb") as f, \
                open(path, "wb") as g:
            g.write(f.read())
        db = sqlite3.connect(path)
        lo, hi = db.execute("SELECT MIN(start_ns), MAX(end_ns) FROM api").fetchone()
        span = hi - lo + 1
        corr = db.execute("SELECT MAX(correlation) FROM api").fetchone()[0] + 1
        for table in ("kernels", "memcpy", "memset", "api", "nvtx"):
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] != "id"]
            for k in range(1, copies):
                sel = []
                for c in cols:
                    if c == "start_ns":
                        sel.append(f"start_ns + {k * span}")
                    elif c == "end_ns":
                        sel.append(f"CASE WHEN end_ns < 0 THEN end_ns ELSE end_ns + {k * span} END")
                    elif c == "correlation":
                        sel.append(f"CASE WHEN correlation = 0 THEN 0 ELSE correlation + {k * corr} END")
                    else:
                        sel.append(c)
                db.execute(f"INSERT INTO {table}({','.join(cols)}) SELECT {','.join(sel)} "
                           f"FROM {table} WHERE start_ns < {hi + 1}")
        for v in views:
            db.execute(v)
        db.commit()
        db.close()
        db = sqlite3.connect(path)
        ops = db.execute("SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpy) + "
                         "(SELECT COUNT(*) FROM memset)").fetchone()[0]
        for view in ("gpu_ops_v", "steps_v"):
            t0 = time.perf_counter()
            n = db.execute(f"SELECT COUNT(*) FROM {view}").fetchone()[0]
            dt = time.perf_counter() - t0
            print(f"{view}: {n} rows in {dt:.2f} s ({ops} GPU ops, {ops / dt / 1e3:.0f}k ops/s); "
                  f"sqlite {sqlite3.sqlite_version}")


if __name__ == "__main__":
    main()
