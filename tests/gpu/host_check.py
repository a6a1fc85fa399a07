#!/usr/bin/env python3
"""GPU check of host capture (docs/capture.md, "Host capture"): its cost and what it finds.

usage (GPU machine, repo root, stepscope built and carried):
  python3 tests/gpu/host_check.py --stepscope build/bin/stepscope \
      --workload ../shared/workloads/train_gpt.py --out /tmp/host_check [--only cost,sync,data,hf]

Parts (each in its own try; a failure is reported and the rest runs):
  cost  train_gpt.py --preset small, 100 steps, 4 interleaved rounds of the arms
          bare | default (sampling 200 Hz + Python stacks at blocking/allocation calls)
          | nohost (--sample-hz 0 --python-stacks off: the CUDA capture alone)
          | hz1000 (--sample-hz 1000) | torch_stack (torch.profiler with_stack=True)
        targets: default/bare <= 1.03, hz1000/bare <= 1.05 (also reported against nohost:
        what host capture adds to the CUDA capture)
  sync  --preset small --sync-every 1: the Python stack of the sync calls (api_callsite) and
        the blocked_cuda samples name the script line of loss.item(); `analyze` output saved
  data  --workers 0 --cpu-work-ms 4: the main thread's samples in the steps have
        Tokens.__getitem__ as top frame (>= 50%)
  hf    tests/gpu/hf_lora_train.py (Trainer + LoRA): the launching thread's samples cover
        >= 90% of its step time (NVTX "step N" ranges) and carry Python stacks; top frames listed
Logs, traces and summary.json go under --out; a table is printed last. About 6 minutes.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

from gpukit import find_workload, q, staged_stepscope

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Check:
    def __init__(self, a):
        self.a = a
        self.results = []  # (part, name, ok, detail)
        self.data = {}

    def log(self, name, p):
        with open(os.path.join(self.a.out, name + ".log"), "w") as f:
            f.write("$ " + " ".join(p.args) + "\n--- stdout\n" + p.stdout + "\n--- stderr\n" + p.stderr)

    def run(self, name, cmd, timeout=300, env=None):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
        self.log(name, p)
        if p.returncode != 0:
            raise RuntimeError(f"{name}: exit {p.returncode}: {p.stderr[-800:]}")
        return p

    def profile(self, name, args, cmd, timeout=300):
        out = os.path.join(self.a.out, name)
        p = self.run(name, [self.a.stepscope, "profile", "-q", "-f", "-o", out] + args + ["--"] + cmd, timeout)
        return out + ".sqlite", p

    def record(self, part, name, ok, detail):
        self.results.append((part, name, bool(ok), detail))
        print(f"[{part}] {name}: {'PASS' if ok else 'FAIL'} {detail}", flush=True)

    def analyze(self, name, trace):
        p = subprocess.run([self.a.stepscope, "analyze", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        self.log(name + "_analyze", p)
        return p.stdout + p.stderr


def leaf_sql(where):
    return ("SELECT s.ts_ns, s.state, COALESCE(fn.value, ''), COALESCE(fl.value, ''), COALESCE(f.line, 0), "
            "COALESCE(w.value, '') FROM samples s LEFT JOIN callsites c ON c.id = s.callsite_id "
            "LEFT JOIN frames f ON f.id = c.frame_id LEFT JOIN strings fn ON fn.id = f.function_id "
            "LEFT JOIN strings fl ON fl.id = f.file_id LEFT JOIN strings w ON w.id = s.wait_id " + where)


def step_windows(trace, tid, skip=2):
    rows = q(trace, "SELECT n.start_ns, n.end_ns, s.value FROM nvtx n JOIN strings s ON s.id = n.name_id "
                    "WHERE s.value LIKE 'step %' AND n.tid = ? ORDER BY n.start_ns", (tid,))
    return [(a, b) for a, b, _ in rows[skip:]]


def in_windows(ts, windows):
    return any(a <= ts <= b for a, b in windows)


def part_cost(c):
    a = c.a
    base = [sys.executable, a.workload, "--preset", "small", "--steps", str(a.steps), "--json"]
    wrapper = os.path.join(ROOT, "bench", "torch_with_stack.py")
    arms = {
        "bare": base,
        "default": [a.stepscope, "profile", "-q", "-f", "-o", os.path.join(a.out, "cost_default"), "--"] + base,
        "nohost": [a.stepscope, "profile", "-q", "-f", "-o", os.path.join(a.out, "cost_nohost"),
                   "--sample-hz", "0", "--python-stacks", "off", "--"] + base,
        "hz1000": [a.stepscope, "profile", "-q", "-f", "-o", os.path.join(a.out, "cost_hz1000"),
                   "--sample-hz", "1000", "--"] + base,
        "torch_stack": [sys.executable, wrapper, a.workload] + base[2:] +
                       ["--torch-profiler", os.path.join(a.out, "cost_torch_stack.json")],
    }
    times = {k: [] for k in arms}
    no_export = dict(os.environ, STEPSCOPE_BENCH_NO_EXPORT="1")
    for i in range(a.pairs):
        for name, cmd in arms.items():
            try:
                p = c.run(f"cost_{name}_{i}", cmd, timeout=240, env=no_export if name == "torch_stack" else None)
                times[name].append(json.loads(p.stdout.strip().splitlines()[-1])["ms_per_step"])
            except Exception as e:  # one arm failing leaves the others
                print(f"cost {name} round {i}: {e}", flush=True)
        print(f"cost round {i}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in times.items() if v), flush=True)
    med = {k: statistics.median(v) for k, v in times.items() if v}
    c.data["cost"] = {"runs_ms": times, "median_ms": med}
    if "bare" not in med:
        raise RuntimeError("no bare run")
    for k in med:
        if k != "bare":
            c.data["cost"][f"ratio_{k}"] = med[k] / med["bare"]
    if "nohost" in med:
        for k in ("default", "hz1000"):
            if k in med:
                c.data["cost"][f"ratio_{k}_vs_nohost"] = med[k] / med["nohost"]
    r = c.data["cost"]
    c.record("cost", "default <= 1.03x bare", r.get("ratio_default", 9) <= 1.03,
             f"{r.get('ratio_default', float('nan')):.3f} (vs nohost {r.get('ratio_default_vs_nohost', float('nan')):.3f})")
    c.record("cost", "hz1000 <= 1.05x bare", r.get("ratio_hz1000", 9) <= 1.05,
             f"{r.get('ratio_hz1000', float('nan')):.3f} (vs nohost {r.get('ratio_hz1000_vs_nohost', float('nan')):.3f})")
    c.record("cost", "torch_stack (reference)", True, f"{r.get('ratio_torch_stack', float('nan')):.3f}x bare")
    # The sampler's own CPU (in the launcher) and its missed ticks.
    t = os.path.join(a.out, "cost_default.sqlite")
    if os.path.exists(t):
        stats = dict(q(t, "SELECT name, value FROM stats WHERE name LIKE 'host%'"))
        meta = dict(q(t, "SELECT key, value FROM meta WHERE key IN ('sample_hz', 'python_stacks', "
                         "'python_stacks_cuda_calls')"))
        c.data["cost"]["default_trace"] = {"stats": stats, "meta": meta}
        c.record("cost", "default trace has samples and Python stacks",
                 stats.get("host_samples", 0) > 0 and meta.get("python_stacks", "").startswith("on"),
                 f"{stats} {meta}")


def script_line(path, text):
    for i, line in enumerate(open(path).read().splitlines(), 1):
        if line.strip() == text:
            return i
    return -1


def part_sync(c):
    a = c.a
    line = script_line(a.workload, "loss.item()")
    trace, _ = c.profile("sync", [], [sys.executable, a.workload, "--preset", "small", "--steps", "30",
                                      "--sync-every", "1", "--json"])
    rows = q(trace, "SELECT n.value, fn.value, fl.value, f.line, COUNT(*) FROM api_callsite ac "
                    "JOIN api ON api.correlation = ac.correlation JOIN strings n ON n.id = api.name_id "
                    "JOIN callsites c ON c.id = ac.callsite_id JOIN frames f ON f.id = c.frame_id "
                    "JOIN strings fn ON fn.id = f.function_id JOIN strings fl ON fl.id = f.file_id "
                    "GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC")
    c.data["sync"] = {"loss_item_line": line, "api_callsites": rows[:15]}
    syncs = [r for r in rows if "Synchronize" in r[0] or r[0].startswith("cudaMemcpy")]
    at_line = sum(r[4] for r in syncs if r[2].endswith("train_gpt.py") and r[3] == line)
    total = sum(r[4] for r in syncs)
    c.record("sync", f"sync calls' Python stack names train_gpt.py:{line}", total > 0 and at_line >= 30,
             f"{at_line}/{total} sync/copy calls at that line; top {syncs[:3]}")
    pid = int(q(trace, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    blocked = q(trace, leaf_sql("WHERE s.tid = ? AND s.state = 2"), (pid,))
    hist = collections.Counter((r[2], r[4], r[5]) for r in blocked)
    c.data["sync"]["blocked_cuda_samples"] = hist.most_common(5)
    c.record("sync", "blocked_cuda samples at the loss.item() line",
             sum(n for (fn, ln, w), n in hist.items() if ln == line) >= 0.5 * max(1, len(blocked)),
             f"{len(blocked)} samples; {hist.most_common(3)}")
    out = c.analyze("sync", trace)
    c.record("sync", "analyze names the line (hostimport's finding)", f"train_gpt.py:{line}" in out,
             "see sync_analyze.log")


def part_data(c):
    a = c.a
    trace, _ = c.profile("data", [], [sys.executable, a.workload, "--preset", "small", "--steps", "20",
                                      "--workers", "0", "--cpu-work-ms", "4", "--json"])
    pid = int(q(trace, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    # The timed steps as one window: train_gpt.py loads a step's batch before
    # its "step N" range opens, so the loading lies between the ranges.
    steps = step_windows(trace, pid)
    windows = [(steps[0][0], steps[-1][1])] if steps else []
    rows = [r for r in q(trace, leaf_sql("WHERE s.tid = ?"), (pid,)) if in_windows(r[0], windows)]
    hist = collections.Counter(r[2] for r in rows)
    c.data["data"] = {"samples_in_steps": len(rows), "top_leaf": hist.most_common(8)}
    share = hist.get("Tokens.__getitem__", 0) / max(1, len(rows))
    c.record("data", "top frame of the main thread in steps is Tokens.__getitem__ (>= 50%)",
             share >= 0.5 and hist.most_common(1)[0][0] == "Tokens.__getitem__",
             f"{share:.0%} of {len(rows)} samples; {hist.most_common(3)}")
    out = c.analyze("data", trace)
    c.record("data", "analyze names __getitem__ (hostimport's finding)", "__getitem__" in out, "see data_analyze.log")


def part_hf(c):
    a = c.a
    trace, _ = c.profile("hf", [], [sys.executable, os.path.join(HERE, "hf_lora_train.py"), "--batch", "8",
                                    "--steps", "20"], timeout=400)
    # The launching thread whose step it is: the thread of the NVTX 'step N' ranges (the
    # Trainer's main thread, which launches the forward; the autograd thread launches more
    # kernels but runs no step of its own).
    tid = q(trace, "SELECT n.tid FROM nvtx n JOIN strings s ON s.id = n.name_id WHERE s.value LIKE "
                   "'step %' GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1")[0][0]
    hz = int(q(trace, "SELECT value FROM meta WHERE key = 'sample_hz'")[0][0])
    windows = step_windows(trace, tid, skip=3)
    step_ns = sum(end - start for start, end in windows)
    rows = [r for r in q(trace, leaf_sql("WHERE s.tid = ?"), (tid,)) if in_windows(r[0], windows)]
    covered = len(rows) * 1e9 / hz / max(1, step_ns)
    with_stack = sum(1 for r in rows if r[2]) / max(1, len(rows))
    hist = collections.Counter(f"{r[2]} ({os.path.basename(r[3])}:{r[4]})" for r in rows)
    states = collections.Counter(r[1] for r in rows)
    c.data["hf"] = {"tid": tid, "steps": len(windows), "step_ms": step_ns / 1e6 / max(1, len(windows)),
                    "samples": len(rows), "coverage": covered, "with_python_stack": with_stack,
                    "states": dict(states), "top_leaf": hist.most_common(10)}
    c.record("hf", "samples cover >= 90% of the launching thread's step time", covered >= 0.9 and with_stack >= 0.9,
             f"coverage {covered:.0%}, with a Python stack {with_stack:.0%}, states {dict(states)}")
    c.record("hf", "top Python frames (reference)", bool(hist), "; ".join(f"{k} x{v}" for k, v in hist.most_common(4)))
    out = c.analyze("hf", trace)
    c.record("hf", "analyze host-bound finding names Python frames (hostimport's)", ".py:" in out,
             "see hf_analyze.log")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", default=staged_stepscope())
    ap.add_argument("--workload", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="cost,sync,data,hf")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--steps", type=int, default=100)
    a = ap.parse_args()
    a.workload = os.path.abspath(find_workload(a.workload))
    a.stepscope = os.path.abspath(a.stepscope)
    os.makedirs(a.out, exist_ok=True)
    c = Check(a)
    t0 = time.time()
    parts = {"cost": part_cost, "sync": part_sync, "data": part_data, "hf": part_hf}
    for name in a.only.split(","):
        t = time.time()
        try:
            parts[name](c)
        except Exception as e:
            c.record(name, "ran", False, f"{type(e).__name__}: {e}")
            traceback.print_exc()
        c.data.setdefault("seconds", {})[name] = round(time.time() - t, 1)
    c.data["checks"] = c.results
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(c.data, f, indent=1, default=str)
    print(f"\nhost_check ({time.time() - t0:.0f} s), summary in {a.out}/summary.json")
    for part, name, ok, detail in c.results:
        print(f"  {'PASS' if ok else 'FAIL'}  {part:5s} {name}: {detail[:150]}")
    return 0 if all(ok for _, _, ok, _ in c.results) else 1


if __name__ == "__main__":
    sys.exit(main())
