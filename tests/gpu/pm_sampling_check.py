#!/usr/bin/env python3
"""GPU metrics (`profile --gpu-metrics`, CUPTI PM sampling) against ncu, on one GPU (issue 38).

The workload (this file with --run PHASES) runs two phases, each inside an NVTX push/pop range and
ended by a synchronize: `pm_gemm`, a bf16 torch.matmul of N x N x N (default 16384) repeated
--gemm-reps times, and `pm_copy`, an elementwise copy kernel (torch.mul(src, 1.0, out=dst), fp32,
--copy-mb MiB each way) repeated --copy-reps times.

The driver (default) then:
 1. runs the workload under `stepscope profile --gpu-metrics INTERVAL` (STEPSCOPE_VERBOSE=1) and
    prints every tracer line about the GPU metrics: a PM sampling failure is printed there with
    CUPTI's own error (call, text, number), for the next attempt to fix;
 2. reads the trace: per phase the dominant kernel (most GPU time among the kernels in the NVTX
    range), and per metric the time-weighted mean of the PM samples lying wholly inside that
    kernel's instances; the lag between the first GEMM kernel's start and the first sample whose
    tensor_active exceeds half its phase mean. When the GEMM starts within ~0.2 s of the first
    context, this is the sampler's start latency (the device is configured on its thread first:
    210 ms on an H200, 2026-11-28), not the clock alignment; the alignment shows in the samples
    falling off at the GEMM's last kernel (docs/capture.md, "Clock");
 3. runs ncu (--clock-control none, --cache-control none, --nvtx-include PHASE/) on the same kernels
    with the metrics that correspond (the same names where ncu has them, else the listed
    fallbacks; `ncu --query-metrics` says which exist) and prints a table: phase, metric,
    stepscope mean, ncu metric, ncu value, ratio; PASS/FAIL for the acceptance pairs (tensor
    active over the GEMM, DRAM bandwidth over the copy: within 10%).
Every result is a JSON line in OUT/results.jsonl, written as soon as it exists.

  python3 tests/gpu/pm_sampling_check.py --stepscope build-gpu/bin/stepscope --out $OUT
"""
import argparse
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# stepscope label -> the ncu metrics to compare with, in order of preference (the first ncu has).
NCU_FOR = {
    "sm_active": ["sm__cycles_active.avg.pct_of_peak_sustained_elapsed"],
    "tensor_active": ["sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
                      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"],
    "dram_read": ["dramc__read_throughput.avg.pct_of_peak_sustained_elapsed"],
    "dram_write": ["dramc__write_throughput.avg.pct_of_peak_sustained_elapsed"],
    "dram_read_bw": ["dram__bytes_read.sum.per_second"],
    "dram_write_bw": ["dram__bytes_write.sum.per_second"],
    "gr_active": ["gr__cycles_active.sum.pct_of_peak_sustained_elapsed"],
    "gpc_clock": ["gpc__cycles_elapsed.avg.per_second"],
}
# Shown for reference (the ncu metrics).
NCU_EXTRA = ["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
             "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes.sum.per_second"]
# Acceptance: (phase, stepscope label or sum of labels, ncu metric or sum).
ACCEPT = [("gemm", ["tensor_active"], None),
          ("copy", ["dram_read_bw", "dram_write_bw"], ["dram__bytes_read.sum.per_second",
                                                       "dram__bytes_write.sum.per_second"])]
# Shown with their ratio, judged by nothing: dramc read + write % (CUPTI's own peak) against ncu's
# DRAM throughput % (1.045x on an H200, 1.253x on an H100, 2026-11-28).
COMPARE = [("copy", ["dram_read", "dram_write"],
            ["dram__throughput.avg.pct_of_peak_sustained_elapsed"])]


class Results:
    def __init__(self, out):
        os.makedirs(out, exist_ok=True)
        self.f = open(os.path.join(out, "results.jsonl"), "a")

    def add(self, **kv):
        kv["t"] = round(time.time(), 1)
        self.f.write(json.dumps(kv) + "\n")
        self.f.flush()
        print("RESULT", json.dumps(kv), flush=True)


def run_workload(a):
    import torch
    import torch.cuda.nvtx as nvtx
    phases = a.run.split(",")
    dev = torch.device("cuda")
    if "gemm" in phases:
        x = torch.randn(a.gemm_n, a.gemm_n, device=dev, dtype=torch.bfloat16)
        y = torch.randn(a.gemm_n, a.gemm_n, device=dev, dtype=torch.bfloat16)
        z = torch.matmul(x, y)  # warm-up: cuBLAS picks its kernel
        torch.cuda.synchronize()
        t = time.time()
        nvtx.range_push("pm_gemm")
        for _ in range(a.gemm_reps):
            torch.matmul(x, y, out=z)
        torch.cuda.synchronize()
        nvtx.range_pop()
        print(f"gemm: {a.gemm_reps} x {a.gemm_n}^3 bf16 in {time.time() - t:.3f} s", flush=True)
        del x, y, z
    if "copy" in phases:
        n = a.copy_mb * (1 << 20) // 4
        src = torch.ones(n, device=dev, dtype=torch.float32)
        dst = torch.empty_like(src)
        torch.mul(src, 1.0, out=dst)
        torch.cuda.synchronize()
        t = time.time()
        nvtx.range_push("pm_copy")
        for _ in range(a.copy_reps):
            torch.mul(src, 1.0, out=dst)
        torch.cuda.synchronize()
        nvtx.range_pop()
        print(f"copy: {a.copy_reps} x {a.copy_mb} MiB in {time.time() - t:.3f} s", flush=True)


def q(db, sql, *args):
    return db.execute(sql, args).fetchall()


def dominant_kernel(db, phase):
    """(name, [(start, end), ...]) of the kernel with the most GPU time inside NVTX range pm_PHASE."""
    r = q(db, "SELECT n.start_ns, n.end_ns FROM nvtx n JOIN strings s ON s.id = n.name_id "
              "WHERE s.value = ? ORDER BY n.start_ns LIMIT 1", "pm_" + phase)
    if not r:
        return None, []
    lo, hi = r[0]
    rows = q(db, "SELECT k.name_id, SUM(k.end_ns - k.start_ns) t FROM kernels k WHERE k.start_ns >= ? "
                 "AND k.end_ns <= ? GROUP BY k.name_id ORDER BY t DESC LIMIT 1", lo, hi + 1)
    if not rows:
        return None, []
    name_id = rows[0][0]
    name = q(db, "SELECT value FROM strings WHERE id = ?", name_id)[0][0]
    spans = q(db, "SELECT start_ns, end_ns FROM kernels WHERE name_id = ? AND start_ns >= ? AND end_ns <= ? "
                  "ORDER BY start_ns", name_id, lo, hi + 1)
    return name, spans


def pm_means(db, spans):
    """Per metric label: time-weighted mean of the samples wholly inside one of `spans`; and counts."""
    sys.path.insert(0, HERE)
    rows = q(db, "SELECT g.start_ns, g.end_ns, g.value, s.value FROM gpu_metrics g "
                 "JOIN strings s ON s.id = g.metric_id ORDER BY g.start_ns")
    labels = labels_by_name()
    acc = {}
    j = 0
    for start, end, value, name in rows:
        while j < len(spans) and spans[j][1] < start:
            j += 1
        inside = any(s <= start and end <= e for s, e in spans[max(0, j - 1):j + 2])
        if not inside or end <= start:
            continue
        lab = labels.get(name, name)
        w, n, c = acc.get(lab, (0.0, 0, 0))
        acc[lab] = (w + value * (end - start), n + (end - start), c + 1)
    return {k: (w / n, c) for k, (w, n, c) in acc.items() if n > 0}


def labels_by_name():
    """CUPTI name -> label, read from src/format/gpu_metric_names.h (one definition)."""
    path = os.path.join(HERE, "..", "..", "src", "format", "gpu_metric_names.h")
    out = {}
    try:
        text = open(path).read()
    except OSError:
        return out
    import re
    for m in re.finditer(r'\{"([a-z0-9_.]+)",\s*"([a-z0-9_]+)",', text):
        out[m.group(1)] = m.group(2)
    return out


def edge_lag_ms(db, spans, mean):
    if not spans or not mean:
        return None
    first = spans[0][0]
    rows = q(db, "SELECT g.start_ns, g.end_ns, g.value FROM gpu_metrics g JOIN strings s ON s.id = g.metric_id "
                 "WHERE s.value LIKE 'sm__pipe_tensor%' AND g.start_ns >= ? - 200000000 ORDER BY g.start_ns",
             first)
    for start, end, value in rows:
        if value > mean / 2:
            return (end - first) / 1e6  # the sample's end: the earliest time it can have seen the kernel
    return None


def profile(a, res):
    trace = os.path.join(a.out, "pm_trace")
    cmd = [a.stepscope, "profile", "--gpu-metrics", a.interval, "--sample-hz", "0", "-f", "true", "-o", trace,
           "--", sys.executable, os.path.abspath(__file__), "--run", "gemm,copy", "--gemm-n", str(a.gemm_n),
           "--gemm-reps", str(a.gemm_reps), "--copy-mb", str(a.copy_mb), "--copy-reps", str(a.copy_reps)]
    env = dict(os.environ, STEPSCOPE_VERBOSE="1")
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.step_timeout)
    lines = (p.stdout + p.stderr).splitlines()
    for ln in lines:
        low = ln.lower()
        if "gpu metric" in low or "pm sampl" in low or "cupti" in low or "warning" in low or "error" in low:
            print("  tracer:", ln, flush=True)
    res.add(step="profile", rc=p.returncode,
            tracer_lines=[ln for ln in lines if "metric" in ln.lower() or "cupti" in ln.lower()][:40])
    return trace + ".sqlite"


def ncu_available(a):
    p = subprocess.run([a.ncu, "--query-metrics", "--csv"], capture_output=True, text=True, timeout=120)
    names = set()
    for row in csv.reader(io.StringIO(p.stdout)):
        if row and "__" in row[0]:
            names.add(row[0].strip())
    return names, p


def ncu_run(a, phase, metrics, res):
    reps = ["--gemm-reps", "3"] if phase == "gemm" else ["--copy-reps", "3"]
    cmd = [a.ncu, "--clock-control", "none", "--cache-control", "none", "--nvtx", "--nvtx-include",
           f"pm_{phase}/", "--launch-count", "2", "--print-units", "base", "--csv", "--page", "raw",
           "--metrics", ",".join(metrics), sys.executable, os.path.abspath(__file__), "--run", phase,
           "--gemm-n", str(a.gemm_n), "--copy-mb", str(a.copy_mb)] + reps
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.step_timeout)
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith('"')]
    if p.returncode != 0 or len(rows) < 3:
        tail = (p.stdout + p.stderr).splitlines()[-15:]
        print("  ncu failed (rc %d):\n    %s" % (p.returncode, "\n    ".join(tail)), flush=True)
        res.add(step="ncu", phase=phase, rc=p.returncode, tail=tail)
        return {}
    table = list(csv.reader(io.StringIO("\n".join(rows))))
    header, data = table[0], table[2:]  # row 1: units
    out = {}
    for m in metrics:
        if m not in header:
            continue
        i = header.index(m)
        vals = []
        for r in data:
            try:
                vals.append(float(r[i].replace(",", "")))
            except (ValueError, IndexError):
                pass
        if vals:
            out[m] = sum(vals) / len(vals)
    names = {r[header.index("Kernel Name")] for r in data if "Kernel Name" in header}
    res.add(step="ncu", phase=phase, kernels=sorted(names)[:3], values=out)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", help="(internal) run the workload phases: gemm,copy")
    ap.add_argument("--stepscope", default="build-gpu/bin/stepscope")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--out", default=os.environ.get("OUT", "pm_out"))
    ap.add_argument("--interval", default="1ms")
    ap.add_argument("--gemm-n", type=int, default=16384)
    ap.add_argument("--gemm-reps", type=int, default=60)
    ap.add_argument("--copy-mb", type=int, default=2048)
    ap.add_argument("--copy-reps", type=int, default=300)
    ap.add_argument("--step-timeout", type=int, default=150)
    a = ap.parse_args()
    if a.run:
        run_workload(a)
        return 0
    res = Results(a.out)
    path = profile(a, res)
    if not os.path.exists(path):
        print("FAIL no trace written:", path)
        return 1
    db = sqlite3.connect(path)
    n = q(db, "SELECT COUNT(*) FROM gpu_metrics")[0][0] if q(
        db, "SELECT 1 FROM sqlite_master WHERE name = 'gpu_metrics'") else 0
    sampled = [r[0] for r in q(db, "SELECT DISTINCT s.value FROM gpu_metrics g JOIN strings s "
                                   "ON s.id = g.metric_id")] if n else []
    res.add(step="trace", gpu_metric_rows=n, metrics=sampled)
    print(f"{'PASS' if n else 'FAIL'} gpu_metrics rows: {n} ({len(sampled)} metrics)", flush=True)
    ours = {}
    for phase in ("gemm", "copy"):
        name, spans = dominant_kernel(db, phase)
        means = pm_means(db, spans) if n else {}
        ours[phase] = means
        lag = edge_lag_ms(db, spans, means.get("tensor_active", (0, 0))[0]) if phase == "gemm" else None
        res.add(step="stepscope", phase=phase, kernel=(name or "")[:120], instances=len(spans),
                kernel_ms=sum(e - s for s, e in spans) / 1e6, means=means, tensor_edge_lag_ms=lag)
    avail, qp = ncu_available(a)
    if not avail:
        print("ncu --query-metrics gave nothing:", (qp.stdout + qp.stderr)[-800:], flush=True)
    bases = {m.split(".")[0] for m in avail}
    pick = {lab: next((m for m in c if m.split(".")[0] in bases), None) for lab, c in NCU_FOR.items()}
    extra = [m for m in NCU_EXTRA if m.split(".")[0] in bases]
    res.add(step="ncu_metrics", picked=pick, extra=extra)
    wanted = sorted({m for m in pick.values() if m} | set(extra))
    theirs = {ph: ncu_run(a, ph, wanted, res) for ph in ("gemm", "copy")}
    print("\nphase  metric          stepscope        ncu metric                                          ncu"
          "              ratio")
    for ph in ("gemm", "copy"):
        for lab, m in pick.items():
            mine = ours[ph].get(lab, (None, 0))[0]
            other = theirs[ph].get(m) if m else None
            ratio = mine / other if mine is not None and other else None
            print(f"{ph:6s} {lab:15s} {fmt(mine):>16s} {m or '-':52s} {fmt(other):>16s} {fmt(ratio):>8s}")
        for m in extra:
            print(f"{ph:6s} {'(reference)':15s} {'':>16s} {m:52s} {fmt(theirs[ph].get(m)):>16s}")
    ok = True
    for ph, labs, ncu_ms in COMPARE:
        mine = [ours[ph].get(lab, (None, 0))[0] for lab in labs]
        other = [theirs[ph].get(m) for m in ncu_ms]
        if None not in mine and None not in other and sum(other):
            print(f"(compare) {ph} {'+'.join(labs)}: stepscope {fmt(sum(mine))} / ncu {fmt(sum(other))}"
                  f" = {sum(mine) / sum(other):.3f}")
    for ph, labs, ncu_ms in ACCEPT:
        mine = [ours[ph].get(lab, (None, 0))[0] for lab in labs]
        ms = ncu_ms or [pick.get(labs[0])]
        other = [theirs[ph].get(m) if m else None for m in ms]
        if None in mine or None in other or not sum(other):
            print(f"FAIL {ph} {'+'.join(labs)}: no value (stepscope {mine}, ncu {other})")
            ok = False
            continue
        ratio = sum(mine) / sum(other)
        good = abs(ratio - 1) <= 0.10
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} {ph} {'+'.join(labs)}: stepscope {fmt(sum(mine))} / ncu "
              f"{fmt(sum(other))} = {ratio:.3f} (within 10%: {good})")
        res.add(step="accept", phase=ph, metric="+".join(labs), stepscope=sum(mine), ncu=sum(other),
                ratio=ratio, passed=good)
    return 0 if ok and n else 1


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.4e}"


if __name__ == "__main__":
    sys.exit(main())
