#!/usr/bin/env python3
"""Steps of loops that mark none: each config of tests/gpu/unmarked_loop.py runs bare and under
`stepscope profile` (default settings: the iteration ranges on), then `steps`, `analyze`,
`summarize` and `stepscope.open(...).steps()` read the trace. For each config one JSON line
(written as soon as it exists) with the bare and traced ms/step, the step method and
pattern, and the steady step count and median step of each reader; "agree" is true when all
readers give the same count and median (within 0.5%).

usage: unmarked_steps_check.py --stepscope BIN --out DIR [--configs gpt2:forloop,gpt2:fused,...]
                               [--steps N] [--budget-s S] [--keep-traces]
Run on the GPU machine from the repository root (tests/gpu/README.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from gpukit import JsonLines, ms_per_step

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "unmarked_loop.py")


def run(cmd, timeout, env=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return 124, "", "timeout", time.monotonic() - t0


def tables(text):
    try:
        return json.loads(text)
    except ValueError:
        return {}


def steps_reader(binary, trace):
    rc, out, err, _ = run([binary, "steps", "--format", "json", trace], 120)
    doc = tables(out)
    rows = doc.get("steps", [])
    steady = [r for r in rows if r.get("Status", r.get("status")) == "ok"]
    summ = (doc.get("step_summary") or [{}])[0]
    return {"rc": rc, "method": summ.get("Method"), "pattern": summ.get("Pattern"),
            "count": summ.get("Steady"), "median_ns": summ.get("Median (ns)"),
            "listed": len(rows), "ok_rows": len(steady), "err": err.strip()[-300:]}


def analyze_reader(binary, trace, out_dir, name):
    rc, out, err, _ = run([binary, "analyze", trace], 300)
    with open(os.path.join(out_dir, name + "_analyze.txt"), "w") as f:
        f.write(out + err)
    head = out.splitlines()[:6]
    return {"rc": rc, "head": head, "err": err.strip()[-300:]}


def summarize_reader(binary, trace, out_dir):
    path = os.path.join(out_dir, os.path.basename(trace) + ".summary.json")
    rc, out, err, _ = run([binary, "summarize", "-f", "-o", path, trace], 300)
    res = {"rc": rc, "err": err.strip()[-300:]}
    try:
        with open(path) as f:
            s = json.load(f)
        durs = [st["end_ns"] - st["start_ns"] for st in s.get("steps", [])]
        res.update(source=s.get("step_source"), listed=len(durs),
                   median_ns=statistics.median(durs) if durs else None)
    except (OSError, ValueError, KeyError) as e:
        res["parse_error"] = repr(e)
    return res


def python_reader(binary, trace):
    lib_python = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(binary))), "lib", "python")
    code = ("import json, stepscope\n"
            "s = stepscope.open(%r).steps()\n"
            "cols = list(s.columns)\n"
            "st = s[s['status'] == 'ok'] if 'status' in cols else s\n"
            "dur = 'duration_ns' if 'duration_ns' in cols else [c for c in cols if 'dur' in c.lower()][0]\n"
            "print(json.dumps({'count': int(len(st)), 'median_ns': float(st[dur].median()) if len(st) else None,"
            " 'columns': cols}))\n" % trace)
    env = dict(os.environ, PYTHONPATH=lib_python + os.pathsep + os.environ.get("PYTHONPATH", ""),
               STEPSCOPE_BIN=binary)
    rc, out, err, _ = run([sys.executable, "-c", code], 300, env)
    res = tables(out.strip().splitlines()[-1]) if out.strip() else {}
    res.update(rc=rc, err=err.strip()[-300:])
    return res


def agree(r):
    counts = [r["steps"].get("count"), r["python"].get("count")]
    medians = [r["steps"].get("median_ns"), r["python"].get("median_ns")]
    if None in counts or None in medians or len(set(counts)) != 1:
        return False
    return max(medians) - min(medians) <= 0.005 * max(medians)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default="gpt2:forloop,gpt2:fused,llama:fused:2")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--budget-s", type=float, default=480)
    ap.add_argument("--keep-traces", action="store_true", help="gzip each trace into OUT")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    work = "/tmp/unmarked"
    os.makedirs(work, exist_ok=True)
    t0 = time.monotonic()
    results = JsonLines(os.path.join(a.out, "unmarked_steps.jsonl"))
    for cfg in a.configs.split(","):
        if time.monotonic() - t0 > a.budget_s:
            break
        parts = cfg.split(":")
        model, optim = parts[0], parts[1]
        acc = parts[2] if len(parts) > 2 else "1"
        name = "%s_%s_acc%s" % (model, optim, acc)
        loop = [sys.executable, LOOP, "--model", model, "--optim", optim, "--steps", str(a.steps),
                "--accumulate", acc]
        r = {"config": name}
        rc, out, err, secs = run(loop, 300)
        r["bare"] = {"rc": rc, "ms_per_step": ms_per_step(out), "secs": round(secs, 1),
                     "err": err.strip()[-300:] if rc else ""}
        trace = os.path.join(work, name)
        rc, out, err, secs = run([a.stepscope, "profile", "-f", "-o", trace, "--"] + loop, 400)
        r["traced"] = {"rc": rc, "ms_per_step": ms_per_step(out), "secs": round(secs, 1),
                       "summary": err.strip().splitlines()[-6:]}
        trace += ".sqlite"
        if os.path.exists(trace):
            r["steps"] = steps_reader(a.stepscope, trace)
            r["analyze"] = analyze_reader(a.stepscope, trace, a.out, name)
            r["summarize"] = summarize_reader(a.stepscope, trace, work)
            r["python"] = python_reader(a.stepscope, trace)
            r["agree"] = agree(r)
            if a.keep_traces:
                subprocess.run("gzip -c %s > %s.sqlite.gz" % (trace, os.path.join(a.out, name)), shell=True)
        results.write(r)
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
