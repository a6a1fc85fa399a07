#!/usr/bin/env python3
"""GPU acceptance check of unified-memory tracing (docs/um.md). Runs on the lent GPU, ~1 minute.

  build       nvcc -O2 tests/gpu/um_touch.cu (256 MiB cudaMallocManaged, 3 rounds CPU touch / GPU `touch`)
  migrations  per round, host->device migrations >= 90% of the buffer inside the kernel, and
              device->host >= 90% in the rounds whose CPU touch follows a kernel (2, 3): CUPTI's
              records (when on) and, separately, the driver's totals (driver_htod/driver_dtoh)
  faults      GPU fault groups (--trace ...,um-gpu-faults) overlap every `touch` kernel
  analyze     `stepscope analyze` leads with um_faults and its fix names cudaMemPrefetchAsync
  prefetch    with --prefetch the kernels' time drops; um_faults' predicted drop (the fault-stalled
              kernel time) within 20% of the measured drop, both over the steps the finding names;
              the net saving (minus the prefetch copy time) printed beside the measured one.
              prefetch_bare: the same prediction against the drop measured WITHOUT the tracer
              (um_touch's own CUDA-event kernel times, 3 interleaved pairs of bare runs): the
              yardstick, since tracing can stretch fault handling
              --work N makes the kernel compute too, --repeat R adds fault-free runs of it
  cost        wall time, interleaved x5: the program without managed memory (--device-mem) traced
              with UM counters on (default) vs off (STEPSCOPE_UM=off): must be equal within noise;
              and the managed program with um-gpu-faults / um-cpu-faults on vs off (their cost)

usage: python3 tests/gpu/um_check.py --stepscope build/bin/stepscope --out /tmp/um [--mib 256] [--work N]
       [--only NAMES] [--cats CATEGORIES] [--env KEY=VALUE ...]
Keep --mib far below the GPU's free memory (oversubscribing managed memory can hang a GPU).
"""
import argparse
import functools
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys

from gpukit import RESULTS, report, run_timed, staged_stepscope

run = functools.partial(run_timed, timeout=300)  # -> (process, seconds)

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20


def parse_duration(s):
    m = re.match(r"([0-9.]+)\s*(ns|us|ms|s)$", s.strip())
    if not m:
        raise ValueError("not a duration: " + s)
    return float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]


def profile(a, binary, name, extra_args, trace_cats):
    out = os.path.join(a.out, name)
    p, wall = run([a.stepscope, "profile", "--trace", trace_cats, "-f", "-o", out, "--", binary,
                   "--mib", str(a.mib), "--rounds", str(a.rounds), "--work", str(a.work), "--repeat", str(a.repeat)]
                  + extra_args,
                  env=dict(a.env, STEPSCOPE_VERBOSE="1"))
    with open(os.path.join(a.out, name + ".log"), "wb") as f:
        f.write(p.stdout + b"\n--- stderr\n" + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"profile {name} rc={p.returncode}: {p.stderr.decode()[-600:]}")
    line = [l for l in p.stdout.decode().splitlines() if l.startswith("{")]
    return out + ".sqlite", json.loads(line[-1]) if line else {}, wall


def trace_facts(path):
    db = sqlite3.connect(path)
    q = lambda sql: db.execute(sql).fetchall()
    steps = q("SELECT n.start_ns, n.end_ns, s.value FROM nvtx n JOIN strings s ON s.id = n.name_id "
              "WHERE s.value LIKE 'step %' ORDER BY n.start_ns")
    kernels = q("SELECT k.start_ns, k.end_ns FROM kernels k JOIN strings s ON s.id = k.name_id "
                "WHERE s.value LIKE 'touch%' ORDER BY k.start_ns")
    um = q("SELECT start_ns, end_ns, kind, value, flags FROM um ORDER BY start_ns")
    return steps, kernels, um


def check_trace(a, path, label):
    steps, kernels, um = trace_facts(path)
    size = a.mib * MIB
    ok_mig, notes = True, []
    cupti = any(k in (1, 2) for s, e, k, v, f in um)
    ok_drv, drv_notes = True, []
    for i, (s0, s1, name) in enumerate(steps):
        need_d = i > 0  # round 1's CPU touch populates fresh pages on the host: nothing to migrate
        h = sum(v for s, e, k, v, f in um if k == 1 and s0 <= s < s1)
        d = sum(v for s, e, k, v, f in um if k == 2 and s0 <= s < s1)
        ok_mig &= h >= 0.9 * size and (d >= 0.9 * size or not need_d)
        notes.append(f"{name}: HtoD {h / MIB:.0f} MiB, DtoH {d / MIB:.0f} MiB")
        # The driver's totals: poll intervals (~1 ms; longer while CUPTI flushes a fault
        # storm's records), prorated by their overlap with the step; host->device bytes
        # move while a kernel runs: by the overlap of the interval's kernel time.
        def share(s, e):
            return (max(0, min(e, s1) - max(s, s0)) / (e - s)) if e > s else float(s0 <= s < s1)

        def kshare(s, e):
            ov = [(max(s, ks), min(e, ke)) for ks, ke in kernels if min(e, ke) > max(s, ks)]
            tot = sum(b - a for a, b in ov)
            if tot <= 0:
                return share(s, e)
            return sum(max(0, min(b, s1) - max(a, s0)) for a, b in ov) / tot
        h = sum(v * kshare(s, e) for s, e, k, v, f in um if k == 9)
        d = sum(v * share(s, e) for s, e, k, v, f in um if k == 10)
        ok_drv &= h >= 0.9 * size and (d >= 0.9 * size or not need_d)
        drv_notes.append(f"{name}: HtoD {h / MIB:.0f} MiB, DtoH {d / MIB:.0f} MiB")
    if cupti:
        report(f"migrations[{label}]", ok_mig and len(steps) == a.rounds,
               f"CUPTI records: {len(steps)} rounds; " + "; ".join(notes) +
               f" (need >= {0.9 * a.mib:.0f} MiB)")
    report(f"driver_totals[{label}]", ok_drv and len(steps) == a.rounds,
           f"{len(steps)} rounds; " + "; ".join(drv_notes) + f" (need >= {0.9 * a.mib:.0f} MiB)")
    return steps, kernels, um


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepscope", default=staged_stepscope())
    ap.add_argument("--out", required=True)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1,
                    help="kernel launches per round (the later ones run on resident data)")
    ap.add_argument("--work", type=int, default=0,
                    help="multiply-adds per element in the kernel (a kernel that computes too: "
                         "the prefetch check then tests the stall model where resident time is not ~0)")
    ap.add_argument("--binary", help="a prebuilt um_touch (default: build it with nvcc)")
    ap.add_argument("--only", default="")
    ap.add_argument("--cats", default="cuda,nvtx,memory,um-gpu-faults", help="--trace of the traced runs")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the traced runs")
    a = ap.parse_args()
    a.env = dict(kv.split("=", 1) for kv in a.env)
    a.stepscope = os.path.abspath(a.stepscope)
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    want = lambda n: not only or n in only
    summary = {}

    binary = a.binary
    if not binary:
        binary = os.path.join(a.out, "um_touch")
        nvcc = shutil.which("nvcc") or next(
            (c for c in ("/usr/local/cuda/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc") if os.path.exists(c)), "nvcc")
        p, _ = run([nvcc, "-O2", "-o", binary, os.path.join(HERE, "um_touch.cu")])
        report("build", p.returncode == 0, p.stderr.decode()[-400:] or "nvcc ok")
        if p.returncode != 0:
            return finish(a, summary)
    try:
        p, _ = run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", "0"])
        free_mib = int(p.stdout.decode().split()[0])
        if a.mib * 8 > free_mib:
            report("memory", False, f"{free_mib} MiB free: too little for {a.mib} MiB managed x8 margin")
            return finish(a, summary)
    except Exception as e:  # no nvidia-smi: go on
        print("note: free memory unknown:", e)

    cats = a.cats
    base = pre = None
    if want("migrations") or want("faults") or want("analyze") or want("prefetch"):
        try:
            base, out0, wall0 = profile(a, binary, "um_fault", [], cats)
            summary["fault_run"] = {"kernel_ms_events": out0.get("kernel_ms"), "wall_s": wall0}
            steps, kernels, um = check_trace(a, base, "fault")
            groups_in = [sum(1 for s, e, k, v, f in um if k == 4 and s < ke and e > ks) for ks, ke in kernels]
            # With --repeat R only the first launch of each round faults (the others are the
            # fault-free runs on purpose).
            firsts = groups_in[::max(a.repeat, 1)]
            if want("faults"):
                report("faults", len(kernels) == a.rounds * max(a.repeat, 1) and all(g > 0 for g in firsts),
                       f"GPU fault groups per touch kernel: {groups_in}")
        except Exception as e:
            report("fault_run", False, repr(e))
    finding = None
    if base and (want("analyze") or want("prefetch")):
        try:
            p, _ = run([a.stepscope, "analyze", "--format", "json", base])
            with open(os.path.join(a.out, "analyze_fault.json"), "wb") as f:
                f.write(p.stdout)
            fs = json.loads(p.stdout)["findings"]
            finding = next((f for f in fs if f["rule"] == "um_faults"), None)
            lead = fs[0]["rule"] if fs else "(none)"
            variant = a.work > 0 or a.repeat > 1  # um_faults need not lead: it prices less there
            named = any(f["rule"] == "um_faults" and "cudaMemPrefetchAsync" in f["fix"] for f in fs)
            report("analyze", named if variant else lead == "um_faults" and "cudaMemPrefetchAsync" in fs[0]["fix"],
                   f"first finding {lead}; rules {[f['rule'] + ' ' + str(round(f['cost_pct'], 1)) + '%' for f in fs]}"
                   + (" (variant: um_faults reported, need not lead)" if variant else ""))
            subprocess.run([a.stepscope, "analyze", base], stdout=open(os.path.join(a.out, "analyze_fault.txt"), "wb"))
            for r in ("um_total_sum", "um_sum", "um_step_share"):
                subprocess.run([a.stepscope, "stats", "-r", r, base],
                               stdout=open(os.path.join(a.out, r + ".txt"), "wb"))
        except Exception as e:
            report("analyze", False, repr(e))
    if base and want("prefetch"):
        try:
            pre, out1, wall1 = profile(a, binary, "um_prefetch", ["--prefetch"], cats)
            st0, k0, _ = trace_facts(base)
            st1, k1, um1 = trace_facts(pre)
            # Like for like: the measured drop is over the kernels of the steps the finding
            # priced ("where: steps 2-3"), in both runs.
            mw = re.search(r"steps? (\d+)(?:-(\d+))?", finding["where"]) if finding else None
            lo, hi = (int(mw.group(1)), int(mw.group(2) or mw.group(1))) if mw else (2, a.rounds)

            def in_steps(steps, t):
                return any(s0 <= t < s1 and lo <= int(name.split()[-1]) <= hi for s0, s1, name in steps)
            t0 = sum(e - s for s, e in k0 if in_steps(st0, s))
            t1 = sum(e - s for s, e in k1 if in_steps(st1, s))
            measured = t0 - t1
            prefetch_ns = sum(e - s for s, e, k, v, f in um1 if k == 1 and f == 1 and in_steps(st1, s))
            m = re.search(r"would run ([0-9.]+ (?:ns|us|ms|s)) shorter", finding["detail"]) if finding else None
            predicted = parse_duration(m.group(1)) if m else float("nan")
            m2 = re.search(r"saving ([0-9.]+ (?:ns|us|ms|s))", finding["detail"]) if finding else None
            net_pred = parse_duration(m2.group(1)) if m2 else float("nan")
            err = abs(predicted - measured) / measured if measured > 0 else float("inf")
            summary["prefetch"] = {"kernel_ns_fault": t0, "kernel_ns_prefetch": t1, "measured_drop_ns": measured,
                                   "predicted_drop_ns": predicted, "net_predicted_ns": net_pred,
                                   "net_measured_ns": measured - prefetch_ns, "prefetch_copy_ns": prefetch_ns,
                                   "kernel_ms_events": out1.get("kernel_ms"), "steps": [lo, hi]}
            report("prefetch", measured > 0 and err <= 0.2,
                   f"kernels {t0 / 1e6:.1f} -> {t1 / 1e6:.1f} ms: measured drop {measured / 1e6:.1f} ms, "
                   f"predicted {predicted / 1e6:.1f} ms ({100 * err:.0f}% off); net saving predicted "
                   f"{net_pred / 1e6:.1f} ms vs measured {(measured - prefetch_ns) / 1e6:.1f} ms "
                   f"(prefetch copies {prefetch_ns / 1e6:.1f} ms)")
            p, _ = run([a.stepscope, "analyze", "--format", "json", pre])
            fs = json.loads(p.stdout)["findings"]
            print("  after prefetch, findings:", [(f["rule"], round(f["cost_pct"], 1)) for f in fs])
            # Reality: the same drop without the tracer (um_touch's CUDA-event kernel times).
            bare = {"fault": [], "prefetch": []}
            for rep in range(3):
                for name, extra in (("fault", []), ("prefetch", ["--prefetch"])):
                    pb, _ = run([binary, "--mib", str(a.mib), "--rounds", str(a.rounds), "--work", str(a.work),
                                 "--repeat", str(a.repeat)] + extra)
                    js = [l for l in pb.stdout.decode().splitlines() if l.startswith("{")]
                    ks = json.loads(js[-1])["kernel_ms"]
                    bare[name].append(sum(ks[r - 1] for r in range(lo, hi + 1)))  # per round, all R launches
            b0, b1 = statistics.median(bare["fault"]), statistics.median(bare["prefetch"])
            bare_drop = (b0 - b1) * 1e6
            err_b = abs(predicted - bare_drop) / bare_drop if bare_drop > 0 else float("inf")
            summary["prefetch_bare"] = {"kernel_ms_fault": bare["fault"], "kernel_ms_prefetch": bare["prefetch"],
                                        "bare_drop_ns": bare_drop, "predicted_drop_ns": predicted}
            report("prefetch_bare", bare_drop > 0 and err_b <= 0.2,
                   f"untraced kernels (steps {lo}-{hi}, median of 3): {b0:.1f} -> {b1:.1f} ms: drop "
                   f"{bare_drop / 1e6:.1f} ms; predicted {predicted / 1e6:.1f} ms ({100 * err_b:.0f}% off); "
                   f"traced fault run's kernels {t0 / 1e6:.1f} ms")
        except Exception as e:
            report("prefetch", False, repr(e))
    if want("cost"):
        try:
            rows = {}
            variants = [("devmem_um_on", ["--device-mem"], {}, "cuda,nvtx,memory"),
                        ("devmem_um_off", ["--device-mem"], {"STEPSCOPE_UM": "off"}, "cuda,nvtx,memory"),
                        ("managed_default", [], {}, "cuda,nvtx,memory"),
                        ("managed_um_off", [], {"STEPSCOPE_UM": "off"}, "cuda,nvtx,memory"),
                        ("managed_driver_only", [], {"STEPSCOPE_UM": "driver"}, "cuda,nvtx,memory"),
                        ("managed_migrations", [], {}, "cuda,nvtx,memory,um-migrations"),
                        ("managed_bare", None, {}, ""),
                        ("managed_gpu_faults", [], {}, "cuda,nvtx,memory,um-gpu-faults"),
                        ("managed_cpu_faults", [], {}, "cuda,nvtx,memory,um-cpu-faults")]
            for rep in range(5):
                for name, args, env, c in variants:
                    prog = [binary, "--mib", str(a.mib), "--rounds", str(a.rounds)] + (args or [])
                    p, w = run(prog if args is None else
                               [a.stepscope, "profile", "--trace", c, "-f", "-o",
                                os.path.join(a.out, "cost_" + name), "--"] + prog, env=env)
                    if p.returncode == 0:
                        rows.setdefault(name, []).append(w)
            med = {k: statistics.median(v) for k, v in rows.items()}
            summary["cost_wall_s"] = med
            on, off = med.get("devmem_um_on"), med.get("devmem_um_off")
            ok = on is not None and off is not None and on <= off * 1.03 + 0.05
            report("cost", ok, "median wall s: " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()) +
                   " (no managed memory: UM on vs off must match within noise; fault kinds' cost shown)")
        except Exception as e:
            report("cost", False, repr(e))
    return finish(a, summary)


def finish(a, summary):
    summary["results"] = [{"name": n, "ok": ok, "detail": d} for n, ok, d in RESULTS]
    with open(os.path.join(a.out, "um_check.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("\n== um_check summary ==")
    for n, ok, d in RESULTS:
        print(f"{'PASS' if ok else 'FAIL':4}  {n:18} {d[:150]}")
    return 0 if RESULTS and all(ok for _, ok, _ in RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
