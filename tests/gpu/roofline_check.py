#!/usr/bin/env python3
"""GPU acceptance checks of `stepscope bench` and `stepscope roofline` (run by roofline_check.sh).

Checks, each logged to $OUT/<name>.log and judged in $OUT/summary.txt:
  bench      bf16 GEMM and device-copy bandwidth within 10% of the figures recorded
             for the lent machines (H200: ~790 TFLOP/s, ~4.3 TB/s; H100: ~798, ~3.0).
  selftest   kernels of known work (stepscope_roofline_selftest): counted FLOPs of a
             bf16 GEMM = 2*M*N*K within 1%; an FMA kernel's fp32 FLOPs within 1%; a
             copy kernel's DRAM bytes read/written within 5%.
  top5       `roofline --top 5` on train_gpt.py --preset small --steps 10: under
             2 minutes, and the printed loss equals a bare run's.
  survey     the trace that run's survey pass left is the `profile` tracer's (meta source
             capture, finalized), with kernels, launch API rows and the 10 "step N" ranges,
             and kernels were placed in the step by their launch calls.
  ncu        three kernels of train_gpt.py (a bf16 GEMM, an elementwise kernel, a
             layernorm or softmax): FLOPs and DRAM bytes vs `ncu --metrics <same>
             --clock-control none` on the same launch, within 5% (ncu runs with
             --cache-control all and, time permitting, none).
Only the Python standard library is used.
"""
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

from gpukit import find_workload

T0 = time.time()
OUT = os.environ.get("OUT", "/tmp/out")
DIST = os.environ.get("STEPSCOPE_DIST", "build-gpu")
SS = os.path.join(DIST, "bin", "stepscope")
SELFTEST = os.path.join(DIST, "bin", "stepscope_roofline_selftest")
PY = os.environ.get("PYTHON", sys.executable or "python3")
DEADLINE = float(os.environ.get("CHECK_DEADLINE_S", "270"))
CEIL = os.path.join(OUT, "ceilings.json")
verdicts = []


def find_ncu():
    n = os.environ.get("NCU") or shutil.which("ncu")
    if not n and os.path.exists("/usr/local/cuda/bin/ncu"):
        n = "/usr/local/cuda/bin/ncu"
    return n


def run(name, cmd, timeout=300, env=None):
    """Runs cmd, output to $OUT/name.log; returns (rc, output, seconds)."""
    t = time.time()
    e = dict(os.environ, **(env or {}))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=e)
        out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as x:
        out, rc = (x.stdout or b"").decode("utf-8", "replace") + f"\nTIMEOUT after {timeout}s\n", 124
    except OSError as x:  # not found, not executable: this check fails, the others run
        out, rc = f"cannot run: {x}\n", 127
    dt = time.time() - t
    with open(os.path.join(OUT, name + ".log"), "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + out + f"\n[rc={rc}, {dt:.1f}s]\n")
    print(f"-- {name}: rc={rc} in {dt:.1f}s (log {name}.log)", flush=True)
    return rc, out, dt


def verdict(check, ok, detail):
    line = f"{'PASS' if ok else 'FAIL'} {check}: {detail}"
    verdicts.append((check, ok))
    print(line, flush=True)
    with open(os.path.join(OUT, "summary.txt"), "a") as f:
        f.write(line + "\n")


def rel(a, b):
    return abs(a - b) / abs(b) if b else float("inf")


def flops(m):
    """The counting of src/roofline/roofline_model.cc, from a metric dict."""
    s = lambda op: m.get(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum", 0.0)
    f = (s("dadd") + s("dmul") + 2 * s("dfma") + s("fadd") + s("fmul") + 2 * s("ffma")
         + s("hadd") + s("hmul") + 2 * s("hfma"))
    agg, dst = {}, {}
    for k, v in m.items():
        mm = re.match(r"^sm__ops_path_tensor_src_([a-z0-9]+?)(?:_dst_([a-z0-9]+))?\.sum$", k)
        if not mm or "_sparsity_" in k or mm.group(1).startswith(("int", "uint")):
            continue
        (dst if mm.group(2) else agg)[mm.group(1)] = (dst if mm.group(2) else agg).get(mm.group(1), 0) + v
    per = dict(dst)
    per.update(agg)
    return f + sum(per.values())


def dram(m):
    return m.get("dram__bytes_read.sum", 0.0) + m.get("dram__bytes_write.sum", 0.0)


# ---------------------------------------------------------------------------------------------
def check_bench():
    rc, out, _ = run("bench", [SS, "bench", "--ceilings", CEIL])
    if rc != 0:
        verdict("bench", False, f"stepscope bench exited {rc}: {out.strip().splitlines()[-1:]}")
        return False
    with open(CEIL) as f:
        store = json.load(f)
    for key, g in store["gpus"].items():
        name = g["name"]
        c = {k: v["value"] for k, v in g["ceilings"].items()}
        ref = None
        if "H200" in name:
            ref = (790e12, 4.3e12)
        elif "H100" in name:
            ref = (798e12, 3.0e12)
        got = (c.get("tensor_bf16", 0), c.get("dram_bw", 0))
        txt = f"{name}: bf16 {got[0]/1e12:.1f} TFLOP/s, DRAM {got[1]/1e12:.3f} TB/s"
        if ref is None:
            verdict("bench", got[0] > 0 and got[1] > 0, txt + " (no recorded figures for this GPU)")
        else:
            ok = rel(got[0], ref[0]) <= 0.10 and rel(got[1], ref[1]) <= 0.10
            verdict("bench", ok, txt + f" vs recorded {ref[0]/1e12:.0f} / {ref[1]/1e12:.1f}"
                    f" ({100*rel(got[0], ref[0]):.1f}% / {100*rel(got[1], ref[1]):.1f}% off)")
    return True


def rows(db):
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    r = [dict(x) for x in con.execute(
        "SELECT r.*, s.value AS name FROM roofline r JOIN strings s ON s.id = r.name_id ORDER BY rank")]
    con.close()
    return r


def check_selftest():
    db = os.path.join(OUT, "selftest.sqlite")
    rc, out, _ = run("selftest", [SS, "roofline", "--kernel", ".", "--top", "0", "--instances", "1",
                                  "--ceilings", CEIL, "-f", "-o", db, "--results",
                                  os.path.join(OUT, "selftest_results.jsonl"),
                                  "--svg", os.path.join(OUT, "selftest.svg"), "--",
                                  SELFTEST, "--gemm", "4096,4096,4096", "--repeat", "2"])
    if rc != 0 or not os.path.exists(db):
        verdict("selftest", False, f"roofline on the selftest exited {rc}; see selftest.log")
        return
    expect = {}
    for line in out.splitlines():
        if line.startswith("{\"kernel\""):
            j = json.loads(line)
            expect[j["kernel"]] = j
    rs = rows(db)
    gemm = [r for r in rs if (r["flops_tensor_bf16"] or 0) > 0]
    if not gemm or "gemm" not in expect:
        verdict("selftest gemm", False, "no row with bf16 tensor FLOPs")
    else:
        got = sum(r["flops_tensor_bf16"] for r in gemm) / max(1, sum(r["instances"] for r in gemm))
        want = expect["gemm"]["flops"]
        verdict("selftest gemm", rel(got, want) <= 0.01,
                f"counted {got:.6g} bf16 tensor FLOPs per GEMM vs 2*M*N*K = {want:.6g} "
                f"({100*rel(got, want):.3f}% off; {len(gemm)} kernel(s): {[r['name'][:60] for r in gemm]})")
    fma = [r for r in rs if "FmaKernel" in r["name"]]
    if fma and "fma_fp32" in expect:
        got = fma[0]["flops_fp32"] / fma[0]["instances"]
        want = 2 * expect["fma_fp32"]["ffma"]
        verdict("selftest fma", rel(got, want) <= 0.01,
                f"fp32 FLOPs {got:.6g} vs 2*FFMA {want:.6g} ({100*rel(got, want):.3f}% off)")
    else:
        verdict("selftest fma", False, "FmaKernel not profiled")
    cp = [r for r in rs if "CopyKernel" in r["name"]]
    if cp and "copy" in expect:
        n = cp[0]["instances"]
        rd, wr = cp[0]["dram_read_bytes"] / n, cp[0]["dram_write_bytes"] / n
        w = expect["copy"]["read_bytes"]
        # With L2 flushed before the launch, up to an L2's worth of the written lines can still
        # sit in L2 (not yet in DRAM) when the kernel ends: at most 64 MiB fewer writes.
        verdict("selftest copy", rel(rd, w) <= 0.05 and -0.05 * w <= w - wr <= 64 * 2**20,
                f"DRAM read {rd/2**20:.1f} MiB, written {wr/2**20:.1f} MiB vs {w/2**20:.0f} MiB each "
                f"(writes may fall short by up to the L2 size)")
    else:
        verdict("selftest copy", False, "CopyKernel not profiled")


def losses(text):
    return re.findall(r"loss=([0-9.eE+-]+)", text)


def check_top5(train_gpt):
    args = [PY, train_gpt, "--preset", "small", "--steps", "10"]
    # Two bare runs: the workload's printed loss itself varies by one unit of its last digit
    # between identical bare runs (seen on the H200: 10.5342 and 10.5343), from atomics in its
    # backward kernels; "unchanged" means within that spread (at least one unit, 1e-4).
    rc, bare, _ = run("gpt_bare", args, timeout=240)
    _, bare2, _ = run("gpt_bare2", args, timeout=240)
    db = os.path.join(OUT, "gpt.sqlite")
    rc2, out, dt = run("gpt_top5", [SS, "roofline", "--top", "5", "--ceilings", CEIL, "-f", "-o", db,
                                    "--results", os.path.join(OUT, "gpt_results.jsonl"),
                                    "--svg", os.path.join(OUT, "gpt.svg"), "--"] + args, timeout=300)
    lb = [float(x) for x in losses(bare) + losses(bare2)]
    lr = [float(x) for x in losses(out)]
    tol = max(1e-4, max(lb) - min(lb)) + 1e-9 if lb else 0
    verdict("top5 time", rc2 == 0 and dt < 120, f"roofline --top 5 exited {rc2} after {dt:.1f}s (limit 120s)")
    # The survey run, the profiling run and the time-and-bytes run each print the loss.
    ok = rc == 0 and len(lb) == 2 and len(lr) == 3 and all(min(abs(x - b) for b in lb) <= tol for x in lr)
    verdict("top5 loss", ok, f"bare runs {lb}; survey, profiling and time-and-bytes runs {lr} "
                             f"(allowed: within {tol:.4g} of a bare run)")
    check_survey(db, out)
    return db if rc2 == 0 and os.path.exists(db) else None


def check_survey(db, out):
    """The survey pass runs under the profile tracer: its trace is an ordinary capture trace."""
    if not os.path.exists(db):
        verdict("survey", False, f"{db} missing; see gpt_top5.log")
        return
    try:
        con = sqlite3.connect(db)
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        kernels = con.execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
        api = con.execute("SELECT COUNT(*) FROM api").fetchone()[0]
        steps = con.execute("SELECT COUNT(*) FROM nvtx n JOIN strings s ON s.id = n.name_id "
                            "WHERE s.value LIKE 'step %'").fetchone()[0]
        con.close()
    except Exception as e:  # noqa: BLE001 - any failure is this check's verdict
        verdict("survey", False, f"cannot read {db}: {e}")
        return
    by_api = "kernels by launch api in step" in out
    ok = (meta.get("source") == "capture" and meta.get("finalized") == "1" and kernels > 0 and api > 0
          and steps >= 10 and by_api)
    verdict("survey", ok, f"source {meta.get('source')}, finalized {meta.get('finalized')}, {kernels} kernels, "
                          f"{api} API rows, {steps} 'step N' ranges, selection by launch api: {by_api}")


def regex_exact(name):
    return "^" + "".join(c if (c.isalnum() or c == "_") else "\\x%02x" % ord(c) for c in name
                         if ord(c) < 256) + "$"


def pick_kernels(db):
    """The top bf16 GEMM, elementwise and layernorm/softmax kernels of the median step."""
    rc, out, _ = run("gpt_select", [SS, "roofline", "--from", db, "--top", "0", "--dry-run",
                                    "--format", "csv"])
    table = list(csv.DictReader(io.StringIO(out[out.find("rank,"):])))
    picks = {}
    pats = {"gemm": r"gemm|nvjet|cutlass|xmma|sm90_|sm100_",
            "elementwise": r"elementwise",
            "norm": r"layer_norm|LayerNorm|softmax|Softmax"}
    for role, pat in pats.items():
        for r in table:
            if re.search(pat, r["name"]) and not any(r["name"] == p["name"] for p in picks.values()):
                picks[role] = r
                break
    return picks


def ncu_metrics(ncu, symbol, launch_index, metrics, args, cache, tag):
    cmd = [ncu, "--metrics", ",".join(metrics), "--clock-control", "none", "--cache-control", cache,
           "--kernel-name-base", "mangled", "--kernel-name", symbol, "--launch-skip", str(launch_index),
           "--launch-count", "1", "--csv", "--page", "raw", "--print-units", "base"] + args
    rc, out, _ = run(tag, cmd, timeout=240)
    lines = [l for l in out.splitlines() if l.startswith('"')]
    if rc != 0 or len(lines) < 2:
        return None
    rdr = list(csv.reader(io.StringIO("\n".join(lines))))
    head, data = rdr[0], rdr[-1]
    m = {}
    for k, v in zip(head, data):
        if k in metrics:
            try:
                m[k] = float(v.replace(",", ""))
            except ValueError:
                pass
    return m


def check_ncu(train_gpt, db):
    ncu = find_ncu()
    if not ncu:
        verdict("ncu", False, "ncu not found (set NCU)")
        return
    run("ncu_version", [ncu, "--version"], timeout=60)
    picks = pick_kernels(db)
    print("picked:", {k: v["name"][:80] + " grid " + v["grid"] for k, v in picks.items()}, flush=True)
    if len(picks) < 3:
        verdict("ncu", False, f"found only {sorted(picks)} among the step's kernels")
    if not picks:
        return
    regex = "|".join(regex_exact(p["name"]) for p in picks.values())
    args = [PY, train_gpt, "--preset", "small", "--steps", "1", "--warmup", "1", "--workers", "0"]
    res = os.path.join(OUT, "cmp_results.jsonl")
    rc, out, _ = run("cmp_roofline", [SS, "roofline", "--from", db, "--kernel", regex, "--instances", "1",
                                      "--ceilings", CEIL, "--no-store", "--no-svg", "--results", res, "--"] + args,
                     timeout=240)
    inst, metrics = [], []
    if os.path.exists(res):
        for line in open(res):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("type") == "device":  # one per profiling run; the first has every metric
                metrics += [m for m in j["metrics"] if m not in metrics]
            if j.get("type") == "instance":
                inst.append(j)
    if not inst or not metrics:
        verdict("ncu", False, f"roofline comparison run collected nothing (rc={rc}); see cmp_roofline.log")
        return
    mem_metrics = [m for m in metrics if m.startswith(("gpu__time_duration", "dram__", "lts__", "l1tex__"))]
    flop_metrics = [m for m in metrics if m not in mem_metrics]
    for role, p in picks.items():
        grid = [int(x) for x in p["grid"].strip("()").split(",")]
        block = [int(x) for x in p["block"].strip("()").split(",")]
        mine = [i for i in inst if i["grid"] == grid and i["block"] == block]
        # Two launches per kernel: every metric (kernel replay) on one, time + memory only (one
        # pass) on the next (docs/roofline.md); each is compared with ncu on that same launch.
        mem = [i for i in mine if i.get("group") == "memory"]
        fl = [i for i in mine if i.get("group", "all") == "all"]
        if not mem or not fl:
            verdict(f"ncu {role}", False, f"{p['name'][:60]} grid {grid}: memory/FLOP launches not both profiled")
            continue
        m0, f0 = mem[0], fl[0]
        theirs = ncu_metrics(ncu, f0["name"], f0["launch_index"], flop_metrics, args, "all", f"ncu_{role}_flops")
        if theirs is None:
            verdict(f"ncu {role} flops", False, "ncu produced no row; see the log")
        else:
            f1, f2 = flops(f0["counters"]), flops(theirs)
            ok = f2 == 0 and f1 == 0 or rel(f1, f2) <= 0.05
            verdict(f"ncu {role} flops", ok, f"{f0['name'][:50]} launch {f0['launch_index']}: FLOPs {f1:.6g} vs "
                                            f"ncu {f2:.6g} ({100*rel(f1, f2) if f2 else 0:.2f}%)")
        # stepscope flushes L2 before the time-and-bytes launch (--cache-control all, the
        # default), as ncu does by default; the natural-state bytes (none) depend on timing.
        for cache in ("all",):
            theirs = ncu_metrics(ncu, m0["name"], m0["launch_index"], mem_metrics, args, cache,
                                 f"ncu_{role}_mem_{cache}")
            if theirs is None:
                verdict(f"ncu {role} dram cache={cache}", False, "ncu produced no row; see the log")
                continue
            d1, d2 = dram(m0["counters"]), dram(theirs)
            r1, r2 = m0["counters"].get("dram__bytes_read.sum", 0), theirs.get("dram__bytes_read.sum", 0)
            detail = (f"{m0['name'][:50]} launch {m0['launch_index']}: DRAM bytes {d1:.6g} vs ncu {d2:.6g} "
                      f"({100*rel(d1, d2) if d2 else 0:.2f}%; read {r1:.6g} vs {r2:.6g}; the replayed launch "
                      f"{f0['launch_index']} counted {dram(f0['counters']):.6g})")
            ok = d2 == 0 and d1 == 0 or rel(d1, d2) <= 0.05
            verdict(f"ncu {role} dram cache={cache}", ok, detail)
            with open(os.path.join(OUT, f"ncu_{role}_{cache}_compare.txt"), "w") as f:
                for k in sorted(set(m0["counters"]) | set(theirs)):
                    a, b = m0["counters"].get(k), theirs.get(k)
                    f.write(f"{k:60s} {a!s:>22} {b!s:>22}\n")


def main():
    open(os.path.join(OUT, "summary.txt"), "w").close()
    run("nvidia-smi", ["nvidia-smi"], timeout=60)
    if not os.path.exists(SS):
        verdict("setup", False, f"{SS} missing: run tests/gpu/stage_roofline.sh and carry build-gpu")
        return 1
    check_bench()
    check_selftest()
    tg = os.path.abspath(find_workload()) if find_workload() else None
    if not tg:
        verdict("train_gpt", False, "train_gpt.py not found (set TRAIN_GPT)")
    else:
        db = check_top5(tg)
        if db:
            check_ncu(tg, db)
    failed = [c for c, ok in verdicts if not ok]
    print(f"\n{len(verdicts) - len(failed)} passed, {len(failed)} failed, {time.time() - T0:.0f}s total")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
