#!/usr/bin/env python3
"""kill -9 of the whole job at full NVTX rate, in a loop (issue 36; docs/capture.md).

Each run profiles `nvtx_app many` (push/pop as fast as it can: the shared ring stays
full) and kills the launcher's and the program's process groups with SIGKILL after a
random (seeded) 0.3-2.0 s. Then, for every run:
  * the .sqlite alone (copied away without any -journal or -wal beside it) passes
    PRAGMA integrity_check;
  * the newest committed NVTX range ended at most --max-lost seconds (default 0.25,
    the docs' promise) before the kill; a trace with no row yet counts from its start.
The kill leaves the launcher no chance to run code: what keeps the main file whole is
the journal keeper (`stepscope _guard`), a process in a session of its own that rolls
a hot -journal back once the launcher is gone. A job kill that reaches every process
of the machine's job (a cgroup kill) kills it too: docs/capture.md says what is left.

usage: kill9_loop_test.py BUILD_DIR [--runs N] [--seed S] [--max-lost SECONDS]
Exit 0 when every run passed; prints one line per run and a summary.
"""
import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from proc_groups import kill_groups


def rows(path, sql):
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def groups_of_session(sid):
    """The process groups of every process in session `sid` (the job: the launcher's group
    and the program's, which the launcher puts in a group of its own)."""
    groups = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # fields after the name: state ppid pgrp session ...
            groups.add(int(fields[2]))
    return groups


def one_run(args, tmp, i, delay):
    out = "flood%d" % i
    proc = subprocess.Popen([args.stepscope, "profile", "-q", "-o", out, "--", args.app, "many",
                             "2000000000"], cwd=tmp, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(delay)
    # The job is the launcher's session (it was started as a session leader): every process
    # group in it gets SIGKILL, the launcher's first. The launcher runs the program in a
    # group of its own; the journal keeper is in a session of its own and survives.
    groups = groups_of_session(proc.pid) - {proc.pid}
    killed_at = time.time()
    kill_groups(proc.pid, groups)
    proc.wait(timeout=20)
    path = os.path.join(tmp, out + ".sqlite")
    # The journal keeper rolls a hot journal back within milliseconds of the kill.
    deadline = time.time() + 5
    while os.path.exists(path + "-journal") and time.time() < deadline:
        time.sleep(0.01)
    if not os.path.exists(path):
        return {"run": i, "delay": delay, "ok": True, "note": "no trace yet (killed before the handshake)",
                "lost": 0.0, "rows": 0, "journal": False}
    journal_left = os.path.exists(path + "-journal")
    alone_dir = tempfile.mkdtemp(prefix="stepscope-alone-", dir=tmp)
    alone = os.path.join(alone_dir, out + ".sqlite")
    shutil.copyfile(path, alone)
    res = {"run": i, "delay": delay, "journal": journal_left}
    try:
        check = rows(alone, "PRAGMA integrity_check")
        res["integrity"] = check[0][0] if len(check) == 1 else "; ".join(r[0] for r in check[:3])
        meta = dict(rows(alone, "SELECT key, value FROM meta"))
        offset = int(meta.get("wall_clock_offset_ns", "0") or 0)
        newest, n = rows(alone, "SELECT MAX(end_ns), COUNT(*) FROM nvtx")[0]
        if newest is None:
            newest = int(meta.get("start_ns", "0") or 0)
        res["rows"] = n
        res["lost"] = killed_at - (newest + offset) / 1e9
        # The loss in its two parts: since the last commit (meta.end_ns is the collector's
        # clock at each commit), and how stale the newest row was when it was committed.
        end_ns = int(meta.get("end_ns", "0") or 0)
        res["since_commit"] = killed_at - (end_ns + offset) / 1e9 if end_ns else float("nan")
        res["stale"] = res["lost"] - res["since_commit"]
    except sqlite3.Error as e:
        res["integrity"] = "error: %s" % e
        res["rows"] = 0
        res["lost"] = float("inf")
    res["ok"] = res["integrity"] == "ok" and res["lost"] <= args.max_lost
    shutil.rmtree(alone_dir, ignore_errors=True)
    for f in os.listdir(tmp):
        if f.startswith(out + "."):
            os.unlink(os.path.join(tmp, f))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--max-lost", type=float, default=0.25)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    args.stepscope = os.path.join(build, "bin", "stepscope")
    args.app = os.path.join(build, "tests", "nvtx_app")
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="stepscope-kill9-")
    results = []
    t0 = time.time()
    try:
        for i in range(args.runs):
            r = one_run(args, tmp, i, round(rng.uniform(0.3, 2.0), 3))
            results.append(r)
            print("run %2d: kill after %.3f s: %s, %s rows, newest %.3f s before the kill "
                  "(last commit %.3f s before, %.3f s stale)%s%s" % (
                r["run"], r["delay"], r.get("integrity", "-"), r["rows"], r["lost"],
                r.get("since_commit", float("nan")), r.get("stale", float("nan")),
                ", -journal left" if r["journal"] else "", "" if r["ok"] else "  FAILED"),
                flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = [r for r in results if not r["ok"]]
    lost = [r["lost"] for r in results if r["rows"]]
    print("kill9_loop: %d runs in %.0f s, %d failed; integrity ok %d/%d; newest row %.3f-%.3f s "
          "before the kill (limit %.2f)" % (
              len(results), time.time() - t0, len(bad),
              sum(1 for r in results if r.get("integrity", "ok") == "ok"), len(results),
              min(lost) if lost else 0, max(lost) if lost else 0, args.max_lost))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
