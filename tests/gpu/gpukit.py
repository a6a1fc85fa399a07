"""Helpers shared by the GPU checks (tests/gpu/*.py) and the GPU benchmarks (bench/*.py).

One direction only: bench/ scripts may import this module (they put tests/gpu on sys.path);
nothing under tests/gpu imports from bench/ (a check may still run a bench script as a
process). A script in tests/gpu imports it plainly (`from gpukit import q, report`): Python puts
the script's folder first on sys.path. Standard library only, so the checks that read traces
here (no GPU, no torch) import it too.

  REPO, STAGED              the repository root; build-gpu/, what tests/gpu/stage.sh installs
  staged_stepscope()        build-gpu/bin/stepscope when staged, else build/bin/stepscope (the
                            default --stepscope of the checks that have one)
  find_workload(path)       the reference workload train_gpt.py (see its docstring)
  q(path, sql, args)        rows of one query on a trace (SQLite), the connection closed
  report(name, ok, detail)  one PASS/FAIL line, kept in RESULTS as (name, ok, detail)
  run_timed(cmd, ...)       subprocess.run with stdout/stderr captured -> (process, seconds)
  ms_per_step(text)         the `ms_per_step=X` token a loop prints
  JsonLines(path)           an appending writer of one JSON object a line, each line on disk at once
  split_phases, ab_savings  step-end times of an in-process A/B run -> phases, realized saving
"""
import json
import os
import sqlite3
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
STAGED = os.path.join(REPO, "build-gpu")


def staged_stepscope():
    """The staged binary (build-gpu/bin/stepscope, what the GPU machine runs) if there is one,
    else the build folder's."""
    staged = os.path.join(STAGED, "bin", "stepscope")
    return staged if os.path.exists(staged) else os.path.join(REPO, "build", "bin", "stepscope")


def find_workload(path=""):
    """The reference workload train_gpt.py: `path` when given, else the first that exists of
    $TRAIN_GPT, build-gpu/train_gpt.py (stage.sh copies it there, so it travels with
    build-gpu), ../shared/workloads/train_gpt.py beside the checkout, shared/workloads inside
    it, /work/shared/workloads. Returns "" when none exists."""
    if path:
        return path
    for p in (os.environ.get("TRAIN_GPT", ""), os.path.join(STAGED, "train_gpt.py"),
              os.path.join(REPO, "..", "shared", "workloads", "train_gpt.py"),
              os.path.join(REPO, "shared", "workloads", "train_gpt.py"),
              "/work/shared/workloads/train_gpt.py"):
        if p and os.path.exists(p):
            return os.path.normpath(p)
    return ""


def q(path, sql, args=()):
    """All rows of one query on the SQLite trace at path."""
    db = sqlite3.connect(path)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


RESULTS = []


def report(name, ok, detail):
    """Prints `PASS name: detail` or `FAIL ...` at once and keeps (name, ok, detail) in RESULTS."""
    RESULTS.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def run_timed(cmd, timeout=600, env=None, cwd=None, text=False):
    """Runs cmd with stdout and stderr captured; env, when given, is added to os.environ.
    Returns (CompletedProcess, wall seconds). A timeout raises subprocess.TimeoutExpired."""
    e = None if env is None else dict(os.environ, **env)
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=e,
                       cwd=cwd, text=text)
    return p, time.time() - t0


def ms_per_step(text):
    """The value of the first `ms_per_step=X` token in text (unmarked_loop.py prints it), or None."""
    for tok in text.split():
        if tok.startswith("ms_per_step="):
            return float(tok.split("=", 1)[1])
    return None


class JsonLines:
    """Appends one JSON object a line to path, each line flushed as it is written: a run cut
    off at the device call's limit still returns every line it got to."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def write(self, obj):
        self.f.write(json.dumps(obj) + "\n")
        self.f.flush()

    def close(self):
        self.f.close()


def split_phases(ends):
    """Step-end times with None at each phase change -> the phases' step-end lists, the
    warm-up before the first change dropped."""
    phases, cur = [], []
    for t in ends:
        if t is None:
            phases.append(cur)
            cur = []
        else:
            cur.append(t)
    return phases[1:]


def ab_savings(ends, pairs, skip):
    """Alternating problem/fix phases (split_phases of `ends`; even = problem, odd = fix) -> a
    dict with runs_ms {problem, fix} (ms/step per phase, its first `skip` steps dropped), their
    medians, realized_saving_ms (difference of the medians) and paired_saving_ms (median of each
    problem phase minus the mean of its fix neighbours); {"error": ...} without a complete pair.
    Used by train_gpt_ab.py and hf_lora_train.py --phases."""
    times = {"problem": [], "fix": []}
    per = []
    for i, ts in enumerate(split_phases(ends)[: 2 * pairs]):
        ts = ts[skip:]
        if len(ts) < 3:
            continue
        ms = (ts[-1] - ts[0]) * 1e3 / (len(ts) - 1)
        per.append((i % 2 == 1, ms))
        times["fix" if i % 2 else "problem"].append(round(ms, 3))
    paired = []
    for j, (is_fix, ms) in enumerate(per):
        nb = [m for f, m in per[max(0, j - 1): j + 2] if f]
        if not is_fix and nb:
            paired.append(ms - statistics.mean(nb))
    if not times["problem"] or not times["fix"]:
        return {"error": "no complete phase pair"}
    mp, mf = statistics.median(times["problem"]), statistics.median(times["fix"])
    return {"runs_ms": times, "problem_median_ms": mp, "fix_median_ms": mf, "realized_saving_ms": mp - mf,
            "paired_saving_ms": round(statistics.median(paired), 3) if paired else None}
