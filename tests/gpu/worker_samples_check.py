#!/usr/bin/env python3
"""GPU check: DataLoader worker processes are sampled (docs/capture.md, "Child processes").

Profiles `train_gpt.py --preset small --workers 2 --cpu-work-ms 4` and reads the trace with sqlite3:
the worker processes' threads (named pt_data_worker by PyTorch, or any thread of another process than
the traced one) carry samples, and their top Python frames are the dataset's __getitem__ work.

  python3 tests/gpu/worker_samples_check.py --stepscope BIN --workload train_gpt.py --out DIR
"""
import argparse
import collections
import os
import sqlite3
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    trace = os.path.join(a.out, "workers2")
    p = subprocess.run([a.stepscope, "profile", "-q", "-f", "-o", trace, "--", sys.executable, a.workload,
                        "--preset", "small", "--workers", "2", "--cpu-work-ms", "4", "--steps", "30", "--json"],
                       capture_output=True, text=True, timeout=300)
    print("profile rc", p.returncode, p.stderr[-500:])
    db = sqlite3.connect(trace + ".sqlite")
    pid = int(db.execute("SELECT value FROM meta WHERE key = 'pid'").fetchone()[0])
    names = dict(db.execute("SELECT t.tid, s.value FROM threads t JOIN strings s ON s.id = t.name_id"))
    per_tid = db.execute("SELECT tid, COUNT(*) FROM samples GROUP BY tid").fetchall()
    worker_tids = [t for t, n in per_tid if names.get(t) == "pt_data_worker"]
    print("threads with samples:", len(per_tid), "worker threads (pt_data_worker):", worker_tids)
    leaf = collections.Counter()
    frames_any = collections.Counter()
    for (cs,) in db.execute("SELECT callsite_id FROM samples WHERE tid IN (%s) AND state = 1" %
                            ",".join(str(t) for t in worker_tids) if worker_tids else "SELECT NULL WHERE 0"):
        x, first = cs, True
        seen = set()
        while x:
            parent, fid = db.execute("SELECT parent_id, frame_id FROM callsites WHERE id = ?", (x,)).fetchone()
            fn = db.execute("SELECT s.value FROM frames f JOIN strings s ON s.id = f.function_id WHERE f.id = ?",
                            (fid,)).fetchone()[0]
            if first:
                leaf[fn] += 1
                first = False
            seen.add(fn)
            x = parent
        for fn in seen:
            frames_any[fn] += 1
    n = sum(leaf.values())
    print("running worker samples:", n)
    for fn, c in leaf.most_common(6):
        print(f"  leaf {fn}: {100 * c / max(n, 1):.0f}%")
    share = frames_any.get("Tokens.__getitem__", 0) / max(n, 1)
    print(f"samples with Tokens.__getitem__ on the stack: {100 * share:.0f}%")
    ok = bool(worker_tids) and n > 50 and share >= 0.9
    print("PASS" if ok else "FAIL")
    r = subprocess.run([a.stepscope, "stats", "-r", "python_hotspots", trace + ".sqlite"], capture_output=True,
                       text=True)
    print(r.stdout[:3000], r.stderr[-300:])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
