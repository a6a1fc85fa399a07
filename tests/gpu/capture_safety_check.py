#!/usr/bin/env python3
"""GPU acceptance of "capture you can trust" (issue 11): collection outside the traced process.

How to run (on the GPU machine, from the repository root, stepscope built in build/):
  python3 tests/gpu/capture_safety_check.py --stepscope build/bin/stepscope \
      --workload ../shared/workloads/train_gpt.py --out /tmp/safety [--only kill,both,oom,overhead]
About 7 minutes at the defaults. Each part runs in try/except and prints PASS/FAIL with numbers;
a summary table comes last; everything is also in OUT/summary.json.

Parts:
  kill      kill -9 of the traced python at random moments (0.2-5 s after the first step ended) during `train_gpt.py --preset small` (10x):
            the .sqlite copied ALONE to another directory passes integrity_check, is finalized,
            holds the step ranges contiguously, and the newest step ended at most one step + 0.1 s
            before the kill (every step that ended before the kill is there)
  both      kill -9 of the launcher and the program together (process group, 5x): the .sqlite alone
            passes integrity_check; newest recorded step end vs kill time <= 0.5 s (+ one step)
  oom       torch allocating 1 GiB tensors inside NVTX ranges layer_N_fwd until OutOfMemoryError,
            variant "exit" (caught, exits normally) and "kill" (SIGKILL right after): the oom row's
            time lies in the range layer_N_fwd (the last one), written with nvtx.unclosed = 1
  overhead  bench/capture_overhead.py interleaving bare / stepscope / CUPTI floor (kernel+memcpy
            records only: --trace cuda, STEPSCOPE_DIAG_OFF=api,overhead,flush) for small and
            tiny: budget stepscope/bare <= 1.03 (small), stepscope/floor <= 1.02 (tiny)
"""
import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

from gpukit import RESULTS, q, report

HERE = os.path.dirname(os.path.abspath(__file__))


def alone(path, out, tag):
    """Copies the main .sqlite file alone (no -journal/-wal) to a fresh directory."""
    d = os.path.join(out, "alone", tag)
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, os.path.basename(path))
    shutil.copyfile(path, dst)
    return dst


def steps(path):
    return q(path, "SELECT CAST(substr(s.value, 6) AS INTEGER), n.start_ns, n.end_ns, n.unclosed FROM nvtx n "
                   "JOIN strings s ON s.id = n.name_id WHERE s.value GLOB 'step [0-9]*' ORDER BY n.start_ns")


def wait_file(path, timeout=90):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def wait_training(path, timeout=90):
    """Waits until the live trace holds a committed step range: training has begun, so a kill
    after this lands "during train_gpt.py", not during Python's imports."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2)
            try:
                n = db.execute("SELECT COUNT(*) FROM nvtx n JOIN strings s ON s.id = n.name_id "
                               "WHERE s.value GLOB 'step [0-9]*' AND n.end_ns > n.start_ns").fetchone()[0]
            finally:
                db.close()
            if n > 0:
                return True
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    return False


def check_trace_after_kill(trace, out, tag, kill_ns, max_lag_s):
    a = alone(trace, out, tag)
    integ = q(a, "PRAGMA integrity_check")[0][0]
    meta = dict(q(a, "SELECT key, value FROM meta"))
    sr = steps(a)
    closed = [r for r in sr if not r[3]]
    nums = [r[0] for r in closed]
    contiguous = nums == list(range(len(nums)))
    step_s = statistics.median([(r[2] - r[1]) / 1e9 for r in closed]) if closed else 0
    last_end = max(r[2] for r in closed) if closed else 0
    lag = (kill_ns - last_end) / 1e9
    nk = q(a, "SELECT COUNT(*) FROM kernels")[0][0]
    ok = integ == "ok" and contiguous and len(nums) > 0 and lag <= max_lag_s + step_s
    return ok, (f"{integ}, finalized={meta.get('finalized')}, exit={meta.get('process_exit')}, "
                f"{len(nums)} steps (+{len(sr) - len(closed)} unclosed), {nk} kernels, newest step ended "
                f"{lag:.3f} s before the kill (step {step_s * 1e3:.0f} ms)")


def train_cmd(a, preset="small"):
    return [sys.executable, a.workload, "--preset", preset, "--steps", "100000", "--warmup", "2"]


def part_kill(a, out):
    oks, details = 0, []
    for i in range(a.kills):
        delay = 0.0
        try:
            trace = os.path.join(out, f"kill{i}.sqlite")
            proc = subprocess.Popen([a.stepscope, "profile", "-q", "-f", "-o", trace, "--"] + train_cmd(a),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wait_file(trace)
            wait_training(trace)
            delay = random.uniform(0.2, 5)
            time.sleep(delay)
            kids = subprocess.run(["pgrep", "-P", str(proc.pid)], stdout=subprocess.PIPE).stdout.split()
            kill_ns = time.time_ns()
            for k in kids:
                os.kill(int(k), signal.SIGKILL)
            proc.wait(timeout=120)
            proc.stderr.close()
            ok, d = check_trace_after_kill(trace, out, f"kill{i}", kill_ns, 0.1)
        except Exception as e:  # noqa: BLE001
            ok, d = False, repr(e)
        oks += ok
        details.append(f"#{i} kill@+{delay:.1f}s: {d}")
        print(("  ok   " if ok else "  FAIL ") + details[-1], flush=True)
    report("kill", oks == a.kills, f"{oks}/{a.kills} traces valid as the .sqlite alone with every ended step")


def part_both(a, out):
    oks, details = 0, []
    for i in range(a.both):
        delay = 0.0
        try:
            trace = os.path.join(out, f"both{i}.sqlite")
            for f in [trace, trace + "-journal"]:
                if os.path.exists(f):
                    os.remove(f)
            proc = subprocess.Popen([a.stepscope, "profile", "-q", "-o", trace, "--"] + train_cmd(a),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            wait_file(trace)
            wait_training(trace)
            delay = random.uniform(0.2, 5)
            time.sleep(delay)
            # The launcher runs the program in a process group of its own (signals as if the
            # launcher were not there): kill both groups, as a scheduler killing the job does.
            prog = [int(k) for k in subprocess.run(["pgrep", "-P", str(proc.pid)],
                                                   stdout=subprocess.PIPE).stdout.split()]
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capture"))
            from proc_groups import kill_groups  # noqa: E402 (tests/capture/proc_groups.py)
            kill_ns = time.time_ns()
            kill_groups(proc.pid, prog)
            proc.wait(timeout=60)
            time.sleep(0.5)  # DataLoader workers die with the group
            ok, d = check_trace_after_kill(trace, out, f"both{i}", kill_ns, 0.5)
            d += f", -journal beside it: {os.path.exists(trace + '-journal')}"
        except Exception as e:  # noqa: BLE001
            ok, d = False, repr(e)
        oks += ok
        details.append(f"#{i} kill@+{delay:.1f}s: {d}")
        print(("  ok   " if ok else "  FAIL ") + details[-1], flush=True)
    report("both", oks == a.both, f"{oks}/{a.both}: launcher+program killed, .sqlite alone valid, <= 0.5 s lost")


OOM_PROGRAM = r'''
import os, signal, sys, torch
mode = sys.argv[1]
xs = []
i = 0
torch.cuda.init()
torch.cuda.nvtx.range_push("train")
try:
    while True:
        torch.cuda.nvtx.range_push(f"layer_{i}_fwd")
        xs.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
        torch.cuda.nvtx.range_pop()
        i += 1
except torch.OutOfMemoryError:
    print(f"oom in layer_{i}_fwd", flush=True)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
'''


def part_oom(a, out):
    prog = os.path.join(out, "oom_in_range.py")
    with open(prog, "w") as f:
        f.write(OOM_PROGRAM)
    for mode in ["exit", "kill"]:
        try:
            trace = os.path.join(out, f"oom_{mode}.sqlite")
            p = subprocess.run([a.stepscope, "profile", "-f", "-o", trace, "--", sys.executable, prog, mode],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
            said = p.stdout.decode().strip()
            expect = said.split()[-1] if said.startswith("oom in") else "?"
            t = alone(trace, out, f"oom_{mode}")
            ooms = q(t, "SELECT ts_ns, tid, requested_bytes FROM oom ORDER BY ts_ns")
            rows = q(t, "SELECT s.value, n.unclosed FROM oom o JOIN nvtx n ON o.ts_ns BETWEEN n.start_ns AND n.end_ns "
                        "AND n.tid = o.tid JOIN strings s ON s.id = n.name_id WHERE s.value GLOB 'layer_*' "
                        "ORDER BY o.ts_ns LIMIT 1")
            ok = (p.returncode == (0 if mode == "exit" else -signal.SIGKILL) and ooms and rows
                  and rows[0][0] == expect and rows[0][1] == 1)
            report(f"oom_{mode}", ok, f"rc={p.returncode}, program said '{said}', {len(ooms)} oom rows, "
                                      f"first oom in range {rows[0] if rows else None} (expected {expect}, unclosed 1)")
        except Exception as e:  # noqa: BLE001
            report(f"oom_{mode}", False, repr(e))


def part_overhead(a, out):
    bench = os.path.join(HERE, "..", "..", "bench", "capture_overhead.py")
    js = os.path.join(out, "overhead.json")
    try:
        p = subprocess.run([sys.executable, bench, "--stepscope", a.stepscope, "--workload", a.workload,
                            "--presets", "small,tiny", "--pairs", str(a.pairs), "--steps", str(a.steps),
                            "--floor", "--json-out", js], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=590)
        print(p.stdout.decode()[-3000:], flush=True)
        res = json.load(open(js))
        small = res["small"]["pair_ratio_median_stepscope"]
        tiny_vs_floor = res["tiny"]["median_ms"]["stepscope"] / res["tiny"]["median_ms"]["floor"]
        report("overhead_small", small <= 1.03, f"stepscope/bare {small:.3f} (budget 1.03)")
        report("overhead_tiny", tiny_vs_floor <= 1.02,
               f"stepscope/floor {tiny_vs_floor:.3f} (budget 1.02), stepscope/bare "
               f"{res['tiny']['pair_ratio_median_stepscope']:.3f}, floor/bare {res['tiny']['pair_ratio_median_floor']:.3f}")
    except Exception as e:  # noqa: BLE001
        report("overhead", False, repr(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True, help="train_gpt.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="kill,both,oom,overhead")
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--both", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=50)
    a = ap.parse_args()
    a.stepscope = os.path.abspath(a.stepscope)
    a.workload = os.path.abspath(a.workload)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    parts = {"kill": part_kill, "both": part_both, "oom": part_oom, "overhead": part_overhead}
    for name in a.only.split(","):
        try:
            parts[name](a, a.out)
        except Exception as e:  # noqa: BLE001
            report(name, False, f"crashed: {e!r}")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump([{"part": n, "ok": bool(ok), "detail": d} for n, ok, d in RESULTS], f, indent=1)
    print(f"\n== capture safety: {time.time() - t0:.0f} s ==")
    for n, ok, d in RESULTS:
        print(f"{'PASS' if ok else 'FAIL':4}  {n:15} {d[:150]}")
    return 0 if all(ok for _, ok, _ in RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
