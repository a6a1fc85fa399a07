#!/usr/bin/env python3
"""GPU integration check of the capture (issue: Capture). Runs on the lent GPU.

Checks, each printed as PASS/FAIL with its numbers:
  completeness  kernels per step and kernel time per step vs torch.profiler (same config, separate runs)
  nvtx          every torch.cuda.nvtx range of the workload is in the trace, on the main thread
  throughput    1M tiny kernels: all recorded, or every drop counted
  durability    kill -9 the profiled workload at random moments: trace valid, steps older than 1 s present
  size          bytes per step vs gzipped torch.profiler JSON per step
  subscriber    torch.profiler inside a traced run: program finishes, one warning, no crash
Also records the scenario traces used as analysis fixtures and the demo sample.

usage: capture_check.py --stepscope BIN --workload train_gpt.py --tiny TINY_BIN --out DIR [--only NAME,...]
"""
import argparse
import glob
import gzip
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time

from gpukit import RESULTS, q, report, run_timed


def step_ranges(path):
    return q(path, "SELECT CAST(substr(s.value, 6) AS INTEGER), n.start_ns, n.end_ns, n.tid FROM nvtx n "
                   "JOIN strings s ON s.id = n.name_id WHERE s.value GLOB 'step [0-9]*' ORDER BY n.start_ns")


def kernels_in(path, t0, t1):
    return q(path, f"SELECT COUNT(*), COALESCE(SUM(end_ns - start_ns), 0) FROM kernels "
                   f"WHERE start_ns >= {t0} AND start_ns < {t1}")[0]


def check_completeness(a, out):
    # Our trace: per timed step, kernels launched inside the step range (GPU work of a step can
    # run past the host range: use the start of the next step as the boundary).
    trace = os.path.join(out, "complete.sqlite")
    steps = 8
    p, _ = run_timed([a.stepscope, "profile", "-f", "-o", trace, "--", sys.executable, a.workload, "--preset", "small",
                "--steps", str(steps), "--warmup", "3", "--json"])
    if p.returncode != 0:
        return report("completeness", False, p.stderr.decode()[-2000:])
    sr = step_ranges(trace)
    timed = [r for r in sr if r[0] >= 3]
    bounds = [r[1] for r in timed] + [int(1e20)]
    ours = [kernels_in(trace, bounds[i], bounds[i + 1]) for i in range(len(timed))]
    # torch.profiler over the same timed steps, separate run.
    tp_json = os.path.join(out, "torch_profile.json")
    p2, _ = run_timed([sys.executable, a.workload, "--preset", "small", "--steps", str(steps), "--warmup", "3",
                 "--json", "--torch-profiler", tp_json])
    if p2.returncode != 0:
        return report("completeness", False, p2.stderr.decode()[-2000:])
    with open(tp_json) as f:
        ev = json.load(f)["traceEvents"]
    kern = [e for e in ev if e.get("cat") == "kernel"]
    tp_count = len(kern) / steps
    tp_time = sum(float(e["dur"]) for e in kern) * 1000 / steps
    our_count = sum(c for c, _ in ours) / len(ours)
    our_time = sum(t for _, t in ours) / len(ours)
    dc = abs(our_count - tp_count) / tp_count * 100
    dt = abs(our_time - tp_time) / tp_time * 100
    report("completeness", dc <= 0.5 and dt <= 2.0,
           f"kernels/step stepscope {our_count:.1f} vs torch.profiler {tp_count:.1f} ({dc:.2f}%); "
           f"kernel time/step {our_time/1e6:.3f} ms vs {tp_time/1e6:.3f} ms ({dt:.2f}%)")
    # NVTX: every range the workload pushes, on the main thread.
    pid = int(dict(q(trace, "SELECT key, value FROM meta"))["pid"])
    names = q(trace, "SELECT s.value, n.tid, COUNT(*) FROM nvtx n JOIN strings s ON s.id = n.name_id "
                     "GROUP BY s.value, n.tid")
    total_steps = steps + 3
    workload = {"data", "forward", "backward", "optimizer", "loss.item", "slow rank work"}
    is_workload = lambda n: n in workload or n.startswith("step ")
    counts = {n: c for n, tid, c in names if tid == pid and is_workload(n)}
    off_thread = [(n, tid) for n, tid, c in names if tid != pid and is_workload(n)]
    # Libraries push their own NVTX ranges too (CUB's sort/scan from the autograd thread).
    others = [(n, c) for n, tid, c in names if not is_workload(n)]
    want = {"data": total_steps, "forward": total_steps, "backward": total_steps, "optimizer": total_steps}
    missing = {k: (v, counts.get(k, 0)) for k, v in want.items() if counts.get(k, 0) != v}
    step_names = sorted(r[0] for r in sr)
    ok = not missing and step_names == list(range(total_steps)) and not off_thread
    report("nvtx", ok, f"{len(sr)} 'step N' ranges (want {total_steps}), per-phase counts {counts}, "
                       f"missing {missing}, workload ranges on other threads {off_thread[:5]}; "
                       f"library ranges also captured: {others[:6]}")
    # Size: bytes on disk per step vs gzipped torch.profiler JSON per step.
    ours_per_step = os.path.getsize(trace) / total_steps
    with open(tp_json, "rb") as f:
        gz = len(gzip.compress(f.read(), 6)) / steps
    report("size", ours_per_step <= gz, f"stepscope {ours_per_step/1024:.1f} KiB/step (whole file incl. startup / "
                                        f"{total_steps} steps) vs gzipped torch.profiler JSON {gz/1024:.1f} KiB/step; "
                                        f"raw JSON {os.path.getsize(tp_json)/steps/1024:.1f} KiB/step")
    dropped = q(trace, "SELECT value FROM stats WHERE name='cupti_dropped_records'")
    print("  stats:", q(trace, "SELECT name, value FROM stats"), flush=True)
    print("  api names:", q(trace, "SELECT s.value, COUNT(*) FROM api a JOIN strings s ON s.id=a.name_id GROUP BY 1 ORDER BY 2 DESC LIMIT 20"), flush=True)
    print("  sync:", q(trace, "SELECT type, tid != 0, COUNT(*) FROM sync GROUP BY 1, 2"), flush=True)
    print("  memory:", q(trace, "SELECT op, memory_kind, COUNT(*), SUM(bytes) FROM memory GROUP BY 1, 2"), flush=True)
    print("  devices:", q(trace, "SELECT d.id, s.value, d.uuid, d.sm_count, d.global_memory_bytes FROM devices d JOIN strings s ON s.id=d.name_id"), flush=True)


def check_throughput(a, out):
    p, wall = run_timed([a.tiny, "1000000"])
    bare = json.loads(p.stdout) if p.returncode == 0 else None
    trace = os.path.join(out, "tiny.sqlite")
    p2, wall2 = run_timed([a.stepscope, "profile", "-f", "-o", trace, "--", a.tiny, "1000000"])
    if p.returncode or p2.returncode:
        return report("throughput", False, (p.stderr + p2.stderr).decode()[-2000:])
    traced = json.loads(p2.stdout)
    n = q(trace, "SELECT COUNT(*) FROM kernels")[0][0]
    dropped = q(trace, "SELECT COALESCE(SUM(value),0) FROM stats WHERE name IN ('cupti_dropped_records')")[0][0]
    napi = q(trace, "SELECT COUNT(*) FROM api")[0][0]
    # Every launch is in the trace, or its loss is counted.
    report("throughput", n + dropped >= traced["kernels"],
           f"{n} kernels recorded + {dropped} dropped (counted) of {traced['kernels']} launched; {napi} api rows; "
           f"launch rate bare {bare['launches_per_s']:.0f}/s, traced {traced['launches_per_s']:.0f}/s; "
           f"wall bare {wall:.1f} s, whole traced run incl. CUPTI decoding and writing {wall2:.1f} s")


def check_durability(a, out, kills=10):
    oks = 0
    details = []
    for i in range(kills):
        trace = os.path.join(out, f"kill{i}.sqlite")
        for f in glob.glob(trace + "*"):
            os.remove(f)
        proc = subprocess.Popen([a.stepscope, "profile", "-q", "-o", trace, "--", sys.executable, a.workload,
                                 "--preset", "small", "--steps", "100000", "--warmup", "2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        delay = random.uniform(8, 16)
        time.sleep(delay)
        # kill -9 the traced python (the launcher's child), not the launcher.
        kids = subprocess.run(["pgrep", "-P", str(proc.pid)], stdout=subprocess.PIPE).stdout.split()
        kill_ns = time.time_ns()
        for k in kids:
            os.kill(int(k), signal.SIGKILL)
        proc.wait(timeout=60)
        try:
            integ = q(trace, "PRAGMA integrity_check")[0][0]
            sr = step_ranges(trace)
            nums = [r[0] for r in sr]
            contiguous = nums == list(range(len(nums)))
            last_end = max(r[2] for r in sr) if sr else 0
            step_ns = statistics.median([r[2] - r[1] for r in sr]) if sr else 0
            lag = (kill_ns - last_end) / 1e9
            fin = dict(q(trace, "SELECT key, value FROM meta")).get("finalized")
            nk = q(trace, "SELECT COUNT(*) FROM kernels")[0][0]
            # Everything that ended more than 1 s before the kill is there: the newest committed step
            # ended less than 1 s + one step before the kill, and no step is missing before it.
            ok = integ == "ok" and contiguous and len(nums) > 0 and lag <= 1.0 + step_ns / 1e9
            details.append(f"kill@{delay:.1f}s: {integ}, {len(nums)} steps, {nk} kernels, last step ended "
                           f"{lag:.2f} s before kill, finalized={fin}")
        except Exception as e:
            ok = False
            details.append(f"kill@{delay:.1f}s: {e}")
        oks += ok
    report("durability", oks == kills, f"{oks}/{kills} ok; " + "; ".join(details))


def check_subscriber(a, out):
    trace = os.path.join(out, "twoprofilers.sqlite")
    tp = os.path.join(out, "twoprofilers.json")
    p, _ = run_timed([a.stepscope, "profile", "-f", "-o", trace, "--", sys.executable, a.workload, "--preset", "tiny",
                "--steps", "5", "--warmup", "2", "--torch-profiler", tp])
    err = p.stderr.decode()
    report("subscriber", p.returncode == 0, f"exit {p.returncode}; stderr tail: {err[-600:]!r}")


def record_fixtures(a, out):
    scenarios = {
        "default": [],
        "workers0_cpu4": ["--workers", "0", "--cpu-work-ms", "4"],
        "workers4_cpu4": ["--workers", "4", "--cpu-work-ms", "4"],
        "sync1": ["--sync-every", "1"],
        "fp32": ["--dtype", "fp32"],
        "offload": ["--offload"],
    }
    for name, extra in scenarios.items():
        trace = os.path.join(out, f"scenario_{name}.sqlite")
        p, wall = run_timed([a.stepscope, "profile", "-q", "-f", "-o", trace, "--", sys.executable, a.workload,
                       "--preset", "small", "--steps", "6", "--warmup", "2", "--json"] + extra)
        line = p.stdout.decode().strip().splitlines()[-1] if p.stdout else ""
        print(f"  scenario {name}: rc={p.returncode} {line} size={os.path.getsize(trace) if os.path.exists(trace) else 0}",
              flush=True)
        with open(os.path.join(out, f"scenario_{name}.json"), "w") as f:
            f.write(line + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--tiny", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    checks = [("completeness", check_completeness), ("throughput", check_throughput),
              ("subscriber", check_subscriber), ("fixtures", record_fixtures), ("durability", check_durability)]
    for name, fn in checks:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn(a, a.out)
        except Exception as e:
            report(name, False, f"{type(e).__name__}: {e}")
        print(f"  ({name} took {time.time() - t0:.0f} s)", flush=True)
    failed = [n for n, ok, _ in RESULTS if not ok]
    print(f"{len(RESULTS) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
