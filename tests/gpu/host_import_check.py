#!/usr/bin/env python3
"""GPU check of the host-model import (issue 14) on fresh real traces.

How to run (on the GPU machine, from the repository root, with a built stepscope):

  python3 tests/gpu/host_import_check.py --stepscope build/bin/stepscope --out /tmp/hic

Parts (each in try/except; logs, traces and JSON under --out; a summary table last; about a
minute on an H100, nsys part included):
  kineto_stack  a small training loop with loss.item() every step, recorded by torch.profiler with
                with_stack=True: after `stepscope import`, api_callsite must hold the sync calls
                (cudaStreamSynchronize / cudaMemcpyAsync of .item()), their Python line must be this
                script's `loss.item()` line, python_hotspots must come from python_function spans,
                and an analyze host_sync / sync_memcpy finding (if any) must name this file.
  nsys_host     when `nsys` is on PATH (or /usr/local/cuda/bin/nsys): the same loop under
                `nsys profile --trace=cuda,osrt --sample=process-tree --cpuctxsw=process-tree`,
                exported to SQLite: the import must give thread_sched rows (if SCHED_EVENTS has rows),
                osrt rows (if OSRT_API has rows), samples (if COMPOSITE_EVENTS has rows), the thread
                names of the process, and tests/corpus/run_corpus.py must agree with the reference
                (thread names, scheduling intervals). The export is kept under --out for the corpus.
"""
import argparse
import functools
import json
import os
import shutil
import sys
import time
import traceback

from gpukit import RESULTS, q, report, run_timed, staged_stepscope

run = functools.partial(run_timed, timeout=300, text=True)  # -> (process, seconds)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ITEM_LINE = None  # set by loop(): the line of loss.item()


def loop(steps, prof=None):
    global ITEM_LINE
    import inspect
    import torch
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device=dev)
    for _ in range(steps):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        ITEM_LINE = inspect.currentframe().f_lineno + 1
        loss.item()
        if prof is not None:
            prof.step()


def part_kineto(args):
    import torch
    out = os.path.join(args.out, "kineto_stack.json")
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA],
                                schedule=sched, with_stack=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
        loop(6, prof)
    db = os.path.join(args.out, "kineto_stack.sqlite")
    if os.path.exists(db):
        os.remove(db)
    p, _ = run([args.stepscope, "import", out, "-o", db])
    open(os.path.join(args.out, "kineto_import.log"), "w").write(p.stdout + p.stderr)
    report("kineto_import", p.returncode == 0, f"rc {p.returncode}")
    n = q(db, "SELECT count(*) FROM api_callsite")[0][0]
    rows = q(db, "SELECT n.value, fi.value, f.line, fn.value FROM api_callsite a JOIN api ON api.correlation ="
                 " a.correlation JOIN strings n ON n.id = api.name_id JOIN callsites c ON c.id = a.callsite_id"
                 " JOIN frames f ON f.id = c.frame_id LEFT JOIN strings fi ON fi.id = f.file_id"
                 " LEFT JOIN strings fn ON fn.id = f.function_id")
    json.dump(rows[:200], open(os.path.join(args.out, "kineto_api_callsite.json"), "w"), indent=1)
    report("kineto_api_callsite", n > 0, f"{n} CUDA calls with a Python stack")
    # The Python line of the syncs: walk up from the leaf to the innermost Python frame.
    lines = q(db, """WITH RECURSIVE up(leaf, id, parent, frame) AS (
                       SELECT a.callsite_id, c.id, c.parent_id, c.frame_id FROM api_callsite a
                       JOIN api ON api.correlation = a.correlation JOIN strings n ON n.id = api.name_id
                       JOIN callsites c ON c.id = a.callsite_id WHERE n.value LIKE '%Synchronize%'
                       UNION ALL SELECT up.leaf, c.id, c.parent_id, c.frame_id FROM up
                       JOIN callsites c ON c.id = up.parent)
                     SELECT DISTINCT fi.value, fn.value, f.line FROM up JOIN frames f ON f.id = up.frame
                     LEFT JOIN strings fi ON fi.id = f.file_id LEFT JOIN strings fn ON fn.id = f.function_id
                     WHERE f.kind = 1""")
    mine = [l for l in lines if l[0] and os.path.basename(l[0]) == os.path.basename(__file__)]
    # torch.profiler names a frame by its function's first line (or the line it was at when
    # profiling started), not the executing line: the import keeps file and function only
    # (line 0), so the check is that the syncs sit in `loop` (whose body holds loss.item()).
    report("kineto_sync_line", any(l[1] == "loop" and l[2] == 0 for l in mine),
           f"loss.item() at line {ITEM_LINE} in loop(); Python frames of the syncs in this file: "
           f"{sorted(mine)[:6]}")
    p, _ = run([args.stepscope, "stats", "-r", "python_hotspots", db])
    open(os.path.join(args.out, "kineto_python_hotspots.txt"), "w").write(p.stdout + p.stderr)
    report("kineto_python_hotspots", p.returncode == 0 and "python_function spans" in p.stdout,
           "source python_function spans" if "python_function spans" in p.stdout else p.stdout[-200:])
    p, _ = run([args.stepscope, "analyze", "--all", "--format", "json", db])
    a = json.loads(p.stdout) if p.returncode == 0 else {}
    json.dump(a, open(os.path.join(args.out, "kineto_analyze.json"), "w"), indent=1)
    syncs = [f for f in a.get("findings", []) if f["rule"] in ("host_sync", "sync_memcpy")]
    named = [f for f in syncs if os.path.basename(__file__) in f.get("detail", "")]
    report("kineto_sync_finding_names_line", not syncs or bool(named),
           f"{len(syncs)} sync findings, {len(named)} naming {os.path.basename(__file__)}"
           + (f": {named[0]['detail'][-160:]}" if named else ""))


def find_nsys():
    for c in (shutil.which("nsys"), "/usr/local/cuda/bin/nsys", "/opt/nvidia/nsight-systems/bin/nsys"):
        if c and os.path.exists(c):
            return c
    return None


def part_nsys(args):
    nsys = find_nsys()
    if nsys is None:
        report("nsys_host", True, "SKIP: no nsys on this machine")
        return
    rep = os.path.join(args.out, "host_loop")
    for ext in (".nsys-rep", ".sqlite"):
        if os.path.exists(rep + ext):
            os.remove(rep + ext)
    p, _ = run([nsys, "profile", "--trace=cuda,osrt", "--sample=process-tree", "--cpuctxsw=process-tree",
                "--backtrace=dwarf", "-o", rep, sys.executable, os.path.abspath(__file__), "--loop-only"], timeout=240)
    open(os.path.join(args.out, "nsys_profile.log"), "w").write(p.stdout + p.stderr)
    if p.returncode != 0 or not os.path.exists(rep + ".nsys-rep"):
        report("nsys_profile", False, f"rc {p.returncode}: {p.stderr[-300:]}")
        return
    p, _ = run([nsys, "export", "--type", "sqlite", "-o", rep + ".sqlite", rep + ".nsys-rep"], timeout=240)
    if p.returncode != 0:
        report("nsys_export", False, p.stderr[-300:])
        return
    raw = rep + ".sqlite"
    tables = {t for (t,) in q(raw, "SELECT name FROM sqlite_master WHERE type='table'")}
    counts = {t: q(raw, f"SELECT count(*) FROM {t}")[0][0] for t in
              ("SCHED_EVENTS", "OSRT_API", "OSRT_CALLCHAINS", "COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS",
               "ThreadNames") if t in tables}
    schemas = {t: q(raw, f"SELECT sql FROM sqlite_master WHERE name = '{t}'")[0][0] for t in counts}
    json.dump({"counts": counts, "schemas": schemas}, open(os.path.join(args.out, "nsys_tables.json"), "w"),
              indent=1)
    report("nsys_tables", True, json.dumps(counts))
    db = os.path.join(args.out, "host_loop.stepscope.sqlite")
    if os.path.exists(db):
        os.remove(db)
    p, _ = run([args.stepscope, "import", raw, "-o", db])
    open(os.path.join(args.out, "nsys_import.log"), "w").write(p.stdout + p.stderr)
    report("nsys_import", p.returncode == 0, f"rc {p.returncode}")
    got = {t: q(db, f"SELECT count(*) FROM {t}")[0][0] for t in ("thread_sched", "osrt", "samples", "threads",
                                                                    "callsites")}
    for src, dst in (("SCHED_EVENTS", "thread_sched"), ("OSRT_API", "osrt"), ("COMPOSITE_EVENTS", "samples")):
        if counts.get(src, 0) > 0:
            report(f"nsys_{dst}", got[dst] > 0, f"{src} {counts[src]} rows -> {dst} {got[dst]}")
    p, _ = run([sys.executable, os.path.join(REPO, "tests", "corpus", "run_corpus.py"), "--stepscope", args.stepscope,
                raw])
    open(os.path.join(args.out, "nsys_corpus.log"), "w").write(p.stdout + p.stderr)
    report("nsys_reference", p.returncode == 0, p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr)
    for r in ("thread_states", "osrt_sum", "python_hotspots"):
        p, _ = run([args.stepscope, "stats", "-r", r, db])
        open(os.path.join(args.out, f"nsys_{r}.txt"), "w").write(p.stdout + p.stderr)
        report(f"nsys_stats_{r}", p.returncode == 0, f"{len(p.stdout.splitlines())} lines")


def main():
    if "--loop-only" in sys.argv:
        loop(20)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stepscope", default=staged_stepscope())
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    args.stepscope = os.path.abspath(args.stepscope)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    for name, fn in (("kineto_stack", part_kineto), ("nsys_host", part_nsys)):
        if args.only and name not in args.only.split(","):
            continue
        try:
            fn(args)
        except Exception as e:  # noqa: BLE001 - every part runs; the failure is reported
            traceback.print_exc()
            report(name, False, f"{type(e).__name__}: {e}")
    json.dump([{"check": n, "ok": ok, "detail": d} for n, ok, d in RESULTS],
              open(os.path.join(args.out, "results.json"), "w"), indent=1)
    print(f"\nhost_import_check: {time.time() - t0:.0f} s")
    print(f"{'check':34} {'result':6} detail")
    for n, ok, d in RESULTS:
        print(f"{n:34} {'PASS' if ok else 'FAIL':6} {d[:140]}")
    sys.exit(0 if all(ok for _, ok, _ in RESULTS) else 1)


if __name__ == "__main__":
    main()
