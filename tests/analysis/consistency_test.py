#!/usr/bin/env python3
"""One number per quantity, across every front-end (docs/steps.md, issue 37).

For every bundled trace (tests/fixtures: traces of our own, GPU fixtures, and the
public torch.profiler / nsys files imported first), this test runs the commands a
user would and checks that they agree:

  * the step count (steady steps) and the median step: `steps`, `analyze`, `ranks`,
    the HTML report's data and the Python API's `steps()` print the same two numbers;
  * `analyze`'s header: host-wait + sync-wait + kernel-wait + other = idle, and
    busy + idle = the analyzed time (one set of gaps, split once);
  * the header's host-wait and sync-wait are the sums of the findings' own gaps
    (`analyze --all`: each gap owned by one finding).

usage: consistency_test.py BUILD_DIR [--only SUBSTRING] [-v]
"""
import argparse
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")


def run_json(binary, args):
    p = subprocess.run([binary] + args + ["--format", "json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()[-300:]))
    return json.loads(p.stdout)


def bundled_traces():
    """(label, path) of every trace in tests/fixtures: stepscope traces, nsys exports and
    torch.profiler JSON."""
    out = []
    for root, _, files in os.walk(FIXTURES):
        for f in sorted(files):
            if f.endswith((".sqlite", ".sqlite.gz", ".json.gz")):
                src = os.path.join(root, f)
                out.append((os.path.relpath(src, FIXTURES), src))
    return sorted(out)


def materialize(binary, rel, src, tmp):
    """A stepscope trace for the fixture: decompressed, or imported; None if not a trace."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", rel)
    if src.endswith(".sqlite.gz"):
        dst = os.path.join(tmp, base[:-3])
        with gzip.open(src, "rb") as i, open(dst, "wb") as o:
            shutil.copyfileobj(i, o)
    elif src.endswith(".sqlite"):
        dst = os.path.join(tmp, base)
        shutil.copyfile(src, dst)
    else:
        dst = None
    if dst is not None and not is_stepscope_trace(dst):
        # An nsys export (or another SQLite file): import it like a JSON trace.
        src = dst
        dst = None
    if dst is None:
        dst = os.path.join(tmp, base + ".imported.sqlite")
        p = subprocess.run([binary, "import", src, "-o", dst, "-q"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
        if p.returncode != 0:
            return None
    return dst


def is_stepscope_trace(path):
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone() is not None \
                and db.execute("SELECT 1 FROM sqlite_master WHERE name='kernels'").fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return False


def from_steps(binary, path):
    d = run_json(binary, ["steps", path])
    s = (d.get("step_summary") or [{}])[0]
    return int(s.get("steady", 0)), int(round(s.get("median_ns", 0)))


def from_analyze(binary, path):
    d = run_json(binary, ["analyze", path])
    s = d["summary"][0]
    return (int(s["steps"]), int(round(s["median_step_ns"]))), s


def check_findings_gaps(binary, path, s):
    """The header's host-wait and sync-wait are the findings' gaps: every such gap of the
    analyzed windows is owned by one finding (analyze --all lists them all)."""
    if s["device"] < 0:
        return []
    d = run_json(binary, ["analyze", "--all", path])
    errs = []
    for col, key in (("gap_host_wait_ns", "host_wait_ns"), ("gap_sync_wait_ns", "sync_wait_ns")):
        total = sum(int(f[col]) for f in d["findings"])
        if total != int(s[key]):
            errs.append("%s: header %d, findings' gaps %d" % (key, s[key], total))
    return errs


def from_ranks(binary, path):
    d = run_json(binary, ["ranks", path])
    rows = d.get("ranks", [])
    if len(rows) != 1 or rows[0].get("step_ms") is None:
        return None
    return int(rows[0]["steps"]), int(round(rows[0]["step_ms"] * 1e6))


def from_report(binary, path, tmp):
    out = os.path.join(tmp, os.path.basename(path) + ".html")
    p = subprocess.run([binary, "report", path, "-o", out, "-q"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("report: exit %d: %s" % (p.returncode, p.stderr.decode()[-300:]))
    text = open(out, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="stepscope-data">(.*?)</script>', text, re.S)
    data = json.loads(m.group(1))
    s = data["step_summary"]
    return int(s["steady"]), int(round(s["median_ns"]))


def from_python(path):
    import stepscope  # noqa: E402 - python/ is on sys.path (main)
    with stepscope.open(path) as t:
        df = t.steps()
    if "status" not in df.columns:
        return 0, 0
    ok = df[df["status"] == "ok"]
    if len(ok) == 0:
        return 0, 0
    med = ok["duration_ns"].median()
    return int(len(ok)), int(round(med))


def check_header(s):
    """analyze's header: the idle split adds up, busy + idle = analyzed."""
    errs = []
    if s["device"] < 0:
        return errs  # no GPU work: the analyzed time is the steps' host ranges
    parts = s["host_wait_ns"] + s["sync_wait_ns"] + s["kernel_wait_ns"] + s["other_idle_ns"]
    if abs(parts - s["idle_ns"]) > 1000:
        errs.append("idle %d != host-wait+sync-wait+kernel-wait+other %d" % (s["idle_ns"], parts))
    if s["analyzed_ns"] and abs(s["busy_ns"] + s["idle_ns"] - s["analyzed_ns"]) > 1000:
        errs.append("busy %d + idle %d != analyzed %d" % (s["busy_ns"], s["idle_ns"], s["analyzed_ns"]))
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--only", default="")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(SOURCE, "tests", "python"))
    from with_pandas import reexec_with_pandas
    reexec_with_pandas()  # the Python API's DataFrames
    sys.path.insert(0, os.path.join(SOURCE, "python"))
    binary = os.path.join(os.path.abspath(a.build), "bin", "stepscope")
    os.environ.setdefault("STEPSCOPE_BIN", binary)
    tmp = tempfile.mkdtemp(prefix="stepscope-consistency-")
    failures, checked = [], 0
    try:
        for rel, src in bundled_traces():
            if a.only and a.only not in rel:
                continue
            path = materialize(binary, rel, src, tmp)
            if path is None:
                continue
            got = {}
            try:
                got["steps"] = from_steps(binary, path)
                got["analyze"], summary = from_analyze(binary, path)
                r = from_ranks(binary, path)
                if r is not None:
                    got["ranks"] = r
                got["report"] = from_report(binary, path, tmp)
                got["python"] = from_python(path)
            except Exception as e:  # noqa: BLE001 - reported as this trace's failure
                failures.append("%s: %s" % (rel, e))
                continue
            checked += 1
            if got["steps"][0] == 0:
                continue  # no steps: nothing to agree on (each says why)
            ref = got["steps"]
            for cmd, v in got.items():
                if v != ref:
                    failures.append("%s: %s says %d steps, median %d ns; steps says %d, %d" %
                                    (rel, cmd, v[0], v[1], ref[0], ref[1]))
            failures += ["%s: analyze header: %s" % (rel, e) for e in check_header(summary)]
            failures += ["%s: %s" % (rel, e) for e in check_findings_gaps(binary, path, summary)]
            if a.v:
                print("%-70s %s" % (rel, got))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print("%d traces checked, %d disagreements" % (checked, len(failures)))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
