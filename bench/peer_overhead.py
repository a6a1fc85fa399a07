#!/usr/bin/env python3
"""Figure: what tracing costs, stepscope against its peers, on loops nobody here wrote
(docs/PERFORMANCE.md, "Peers").

Each workload (a tests/gpu/unmarked_loop.py configuration: a Hugging Face model built from its
config, no NVTX of ours) runs in every arm, the arms interleaved round by round (the order
rotates each round), and each run's ms/step (timed inside the loop, after warm-up) is written to
OUT/peer_overhead.jsonl as soon as it exists: a call killed at its limit keeps what it measured.
Arms:
  bare       the loop alone
  default    stepscope profile, default settings
  nohost     stepscope profile --trace cuda,nvtx,memory (no host sampling)
  floor      stepscope profile --trace cuda, STEPSCOPE_DIAG_OFF=api,overhead,flush: kernel and
             memcpy records only, the least any CUPTI tracer costs
  torchprof  the loop under torch.profiler (CPU and CUDA activities, no export)
  nsys       NSYS profile (only with --nsys PATH). Its shutdown takes minutes a run on the lent
             machines (its report step fails there): once the loop has printed its ms/step and
             exited, nsys's process group is killed; the loop's own timing is what counts
At the end: per workload and arm the median ms/step and its ratio to bare's median.

usage: peer_overhead.py --stepscope BIN --out DIR [--workloads gpt2:fused,gpt2:forloop]
                        [--arms bare,default,nohost,floor,torchprof] [--rounds 3] [--steps 40]
                        [--budget-s 500] [--nsys PATH]
       peer_overhead.py --table RUNS.jsonl [RUNS.jsonl ...]
                        the runs of several calls (one machine kind) as one table: per workload
                        and arm n, median ms/step, x bare, the runs; then whether default is at or
                        below every peer arm and within 3% of the floor
A workload is MODEL:OPTIM[:EXTRA...] with EXTRA as loader=W (ms of Python per batch) or
acc=K (gradient accumulation).
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu", "unmarked_loop.py")


def loop_command(workload, steps):
    parts = workload.split(":")
    cmd = [sys.executable, LOOP, "--model", parts[0], "--optim", parts[1], "--steps", str(steps)]
    for extra in parts[2:]:
        k, v = extra.split("=", 1)
        cmd += {"loader": ["--loader-work-ms", v], "acc": ["--accumulate", v]}[k]
    return cmd


def arm_command(arm, a, loop, tmp):
    out = os.path.join(tmp, "t")
    prof = [a.stepscope, "profile", "-q", "-f", "-o", out]
    env = None
    if arm == "bare":
        cmd = loop
    elif arm == "default":
        cmd = prof + ["--"] + loop
    elif arm == "nohost":
        cmd = prof + ["--trace", "cuda,nvtx,memory", "--"] + loop
    elif arm == "floor":
        cmd = prof + ["--trace", "cuda", "--"] + loop
        env = dict(os.environ, STEPSCOPE_DIAG_OFF="api,overhead,flush")
    elif arm == "torchprof":
        cmd = loop + ["--torch-profiler"]
    elif arm == "nsys":
        cmd = [a.nsys, "profile", "-o", out + "_nsys", "--force-overwrite", "true"] + loop
    else:
        raise SystemExit("unknown arm " + arm)
    return cmd, env


def ms_per_step(text):
    for tok in text.split():
        if tok.startswith("ms_per_step="):
            return float(tok.split("=", 1)[1])
    return None


def run_nsys(cmd, timeout_s):
    """The loop under nsys; returns (rc, stdout, stderr) as soon as the loop has printed its
    ms_per_step line and a grace second has passed, killing nsys's wind-down."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         start_new_session=True)
    lines = []
    deadline = time.monotonic() + timeout_s
    for line in p.stdout:
        lines.append(line)
        if "ms_per_step=" in line or time.monotonic() > deadline:
            break
    time.sleep(1.0)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    return p.returncode, "".join(lines), ""


def print_table(per_workload):
    """per_workload: {workload: {arm: [ms, ...]}}; the medians and their ratios to bare."""
    for w, per_arm in per_workload.items():
        bare = statistics.median(per_arm["bare"]) if per_arm.get("bare") else None
        for arm, v in per_arm.items():
            med = statistics.median(v)
            ratio = "%.3f" % (med / bare) if bare else "-"
            print("%-28s %-10s n=%d median %.2f ms/step  x%s  (%s)" %
                  (w, arm, len(v), med, ratio, ", ".join("%.2f" % x for x in v)), flush=True)


def table(paths):
    per_workload = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                if row.get("ms_per_step") is not None:
                    per_workload.setdefault(row["workload"], {}).setdefault(row["arm"], []).append(
                        row["ms_per_step"])
    print_table(per_workload)
    for w, per_arm in per_workload.items():
        if "default" not in per_arm:
            continue
        d = statistics.median(per_arm["default"])
        peers = [a for a in per_arm if a not in ("bare", "default", "floor", "nohost")]
        below = all(d <= statistics.median(per_arm[a]) for a in peers)
        floor = ("default/floor %.3f" % (d / statistics.median(per_arm["floor"]))
                 if per_arm.get("floor") else "no floor arm")
        print("%-28s default %s every peer arm (%s); %s" %
              (w, "at or below" if below else "ABOVE", ", ".join(peers) or "none", floor))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--table":
        return table(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workloads", default="gpt2:fused,gpt2:forloop")
    ap.add_argument("--arms", default="bare,default,nohost,floor,torchprof")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--budget-s", type=float, default=500)
    ap.add_argument("--nsys")
    a = ap.parse_args()
    arms = a.arms.split(",") + (["nsys"] if a.nsys else [])
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="stepscope-peers-")
    log = open(os.path.join(a.out, "peer_overhead.jsonl"), "a")
    got = {}
    t0 = time.monotonic()
    for r in range(a.rounds):
        for w in a.workloads.split(","):
            order = arms[r % len(arms):] + arms[:r % len(arms)]
            for arm in order:
                if time.monotonic() - t0 > a.budget_s:
                    break
                cmd, env = arm_command(arm, a, loop_command(w, a.steps), tmp)
                t = time.monotonic()
                if arm == "nsys":
                    rc, stdout, stderr = run_nsys(cmd, 600)
                else:
                    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, env=env, timeout=600)
                    rc, stdout, stderr = p.returncode, p.stdout, p.stderr
                ms = ms_per_step(stdout)
                row = {"round": r, "workload": w, "arm": arm, "ms_per_step": ms, "rc": rc,
                       "wall_s": round(time.monotonic() - t, 1)}
                if ms is None:
                    row["stderr"] = stderr[-400:]
                log.write(json.dumps(row) + "\n")
                log.flush()
                if ms is not None:
                    got.setdefault(w, {}).setdefault(arm, []).append(ms)
    print_table(got)


if __name__ == "__main__":
    main()
