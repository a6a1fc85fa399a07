#!/usr/bin/env python3
"""The public-trace corpus: import and analyze traces nobody on this project
wrote, and check stepscope against reference.py (an independent, stdlib-only
reading of each raw file).

  run_corpus.py --stepscope build/bin/stepscope [--shared DIR] [--table OUT.md] [TRACE...]

Traces: tests/fixtures/public/ (always, small files committed with their
licenses) and, where it exists, ../shared/data/public/ (the whole corpus; a
message says when it is absent). Per trace it checks:
  * imported kernels/memcpy/memset/api rows and the kernel time == reference;
  * GPU busy time (union of the imported GPU intervals) == reference;
  * memcpy/memset is_async (async/sync/unknown by the issuing call) == reference;
  * NVTX steps found == reference (the step definition written again in reference.py);
  * `steps` and `analyze` agree on the steady step count;
  * nsys: thread_sched rows and running time, and the names of the scheduled
    threads == reference (SCHED_EVENTS, ThreadNames);
  * no rule fires that the evidence forbids (sync_memcpy without a synchronous
    copy call; host_sync on cudaEventQuery).
Exit code 1 on any mismatch. --table writes the markdown table of docs/import.md.
"""
import argparse
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def union_len(rows):
    total, s0, e0 = 0, None, None
    for s, e in sorted(rows):
        if e0 is None or s > e0:
            if e0 is not None:
                total += e0 - s0
            s0, e0 = s, e
        else:
            e0 = max(e0, e)
    return total + (e0 - s0 if e0 is not None else 0)


def check(stepscope, trace, tmp):
    name = os.path.basename(trace)
    problems = []
    rc, out, err = run([sys.executable, os.path.join(HERE, "reference.py"), trace])
    if rc != 0:
        return name, None, None, ["reference.py failed: " + err.strip()[-300:]]
    ref = json.loads(out)
    db_path = os.path.join(tmp, name + ".sqlite")
    rc, out, err = run([stepscope, "import", trace, "-o", db_path, "--summary", "json"])
    if rc != 0:
        return name, ref, None, ["import failed: " + err.strip()[-300:]]
    warnings = [l for l in err.splitlines() if "warning:" in l]
    db = sqlite3.connect(db_path)
    q = lambda sql: db.execute(sql).fetchone()[0]
    got = dict(kernels=q("SELECT count(*) FROM kernels"), memcpy=q("SELECT count(*) FROM memcpy"),
               memset=q("SELECT count(*) FROM memset"), api=q("SELECT count(*) FROM api"),
               kernel_ns=q("SELECT coalesce(sum(end_ns - start_ns), 0) FROM kernels"),
               copies_async=q("SELECT count(*) FROM (SELECT is_async FROM memcpy UNION ALL "
                              "SELECT is_async FROM memset) WHERE is_async = 1"),
               copies_sync=q("SELECT count(*) FROM (SELECT is_async FROM memcpy UNION ALL "
                             "SELECT is_async FROM memset) WHERE is_async = 0"),
               copies_unknown=q("SELECT count(*) FROM (SELECT is_async FROM memcpy UNION ALL "
                                "SELECT is_async FROM memset) WHERE is_async IS NULL"))
    got["busy_ns"] = union_len(db.execute("SELECT start_ns, end_ns FROM kernels UNION ALL SELECT start_ns, end_ns "
                                          "FROM memcpy UNION ALL SELECT start_ns, end_ns FROM memset").fetchall())
    if "sched_rows" in ref:
        got["sched_rows"] = q("SELECT count(*) FROM thread_sched")
        got["sched_running_ns"] = q("SELECT coalesce(sum(end_ns - start_ns), 0) FROM thread_sched WHERE state = 1")
        names = dict(db.execute("SELECT t.tid, s.value FROM threads t LEFT JOIN strings s ON s.id = t.name_id"))
        want = ref["host_thread_names"]
        bad = [t for t in want if names.get(int(t)) != want[t]]
        if bad:
            problems.append(f"thread names of {len(bad)} of {len(want)} scheduled threads differ, e.g. tid {bad[0]}: "
                            f"stepscope {names.get(int(bad[0]))!r}, reference {want[bad[0]]!r}")
        for k in ("sched_rows", "sched_running_ns"):
            if got[k] != ref[k]:
                problems.append(f"{k}: stepscope {got[k]}, reference {ref[k]}")
    db.close()
    for k in ("kernels", "memcpy", "memset", "api", "kernel_ns", "busy_ns", "copies_async", "copies_sync",
              "copies_unknown"):
        if got[k] != ref[k]:
            problems.append(f"{k}: stepscope {got[k]}, reference {ref[k]}")
    if ref["kernels"] + ref["memcpy"] + ref["memset"] == 0 and not any("no GPU activity" in w for w in warnings):
        problems.append("no GPU activity but no warning")
    rc, out, err = run([stepscope, "steps", "--format", "json", db_path])
    steps = json.loads(out) if rc == 0 else {}
    summary = (steps.get("step_summary") or [{}])[0]
    method = summary.get("method", "")
    got["steps"] = summary.get("steps", 0) if method == "nvtx" else 0
    got["method"] = method or "none"
    got["steady"] = summary.get("steady", 0)
    if got["steps"] != ref["steps"]:
        problems.append(f"NVTX steps: stepscope {got['steps']}, reference {ref['steps']}")
    rc, out, err = run([stepscope, "analyze", "--format", "json", db_path])
    if rc != 0:
        return name, ref, got, problems + ["analyze failed: " + err.strip()[-300:]]
    a = json.loads(out)
    a_steady = (a.get("summary") or [{}])[0].get("steps", 0)
    if got["method"] != "none" and a_steady != got["steady"]:
        problems.append(f"steady steps: steps {got['steady']}, analyze {a_steady}")
    findings = a.get("findings", [])
    got["rules"] = [f["rule"] for f in findings]
    got["top"] = f"{findings[0]['rule']} {findings[0]['cost_pct']:.1f}%" if findings else "-"
    for f in findings:
        if f["rule"] in ref["must_not_fire"]:
            problems.append(f"{f['rule']} fired without the evidence for it")
        if f["rule"] == "host_sync" and "cudaEventQuery" in f.get("title", ""):
            problems.append("host_sync on cudaEventQuery (a query never blocks)")
    got["warnings"] = len(warnings)
    return name, ref, got, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared", "data", "public"))
    ap.add_argument("--table", help="write the markdown table here")
    ap.add_argument("--fixtures-only", action="store_true")
    ap.add_argument("traces", nargs="*")
    args = ap.parse_args()
    traces = list(args.traces)
    if not traces:
        fixtures = os.path.join(REPO, "tests", "fixtures", "public")
        traces = sorted(glob.glob(os.path.join(fixtures, "*", "*.json.gz")) +
                        glob.glob(os.path.join(fixtures, "*", "*.sqlite")))
        seen = {os.path.basename(t) for t in traces}
        if args.fixtures_only:
            pass
        elif os.path.isdir(args.shared):
            extra = os.path.join(os.path.dirname(os.path.normpath(args.shared)), "kineto_gpt_small_3steps.json.gz")
            for t in sorted(glob.glob(os.path.join(args.shared, "*", "*"))) + [extra]:
                if (t.endswith(".json.gz") or t.endswith(".sqlite")) and os.path.basename(t) not in seen and \
                        os.path.exists(t):
                    traces.append(t)
        else:
            print(f"run_corpus: {args.shared} not found: the shared corpus is skipped "
                  f"(only the {len(traces)} committed fixtures run)")
    failed = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            name, ref, got, problems = check(args.stepscope, t, tmp)
            status = "ok" if not problems else "FAIL"
            failed += bool(problems)
            print(f"{status:4} {name}" + "".join("\n     " + p for p in problems))
            if ref and got:
                rows.append((name, ref, got))
    if args.table:
        with open(args.table, "w") as f:
            f.write("| trace | kernels | memcpy+memset (async/sync/unknown) | kernel time ms | GPU busy ms | "
                    "NVTX steps (reference) | steps method, steady | top finding |\n")
            f.write("|---|---|---|---|---|---|---|---|\n")
            for name, ref, got in rows:
                f.write(f"| `{name}` | {got['kernels']} ({ref['kernels']}) | "
                        f"{got['memcpy'] + got['memset']}: {got['copies_async']}/{got['copies_sync']}/"
                        f"{got['copies_unknown']} ({ref['copies_async']}/{ref['copies_sync']}/"
                        f"{ref['copies_unknown']}) | {got['kernel_ns'] / 1e6:.3f} ({ref['kernel_ns'] / 1e6:.3f}) | "
                        f"{got['busy_ns'] / 1e6:.3f} ({ref['busy_ns'] / 1e6:.3f}) | {got['steps']} ({ref['steps']}) | "
                        f"{got['method']}, {got['steady']} | {got['top']} |\n")
    print(f"run_corpus: {len(traces) - failed} of {len(traces)} traces agree with the reference")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
