#!/usr/bin/env python3
"""GPU check of the Kineto import on fresh torch.profiler traces (PyTorch of the GPU machine).

How to run (on the GPU machine, from the repository root, with a built stepscope):

  python3 tests/gpu/kineto_import_check.py --stepscope build/bin/stepscope --out /tmp/kic

Three small training loops, each recorded by torch.profiler (schedule wait=1, warmup=1, active=3,
so 3 ProfilerStep#N ranges) and exported as Chrome JSON, then imported, analyzed and checked
against tests/corpus/reference.py (run_corpus.py):
  async    pinned inputs copied with non_blocking=True, loss read every 10 steps: every copy is
           issued by cudaMemcpyAsync -> import_copies_sync 0, no sync_memcpy finding;
  itemsync loss.item() every step: a host sync each step -> host_sync may fire, sync_memcpy must not
           (torch's .item() copies with cudaMemcpyAsync + cudaStreamSynchronize);
  query    torch.cuda.Event.query() polled every step: never a host_sync on cudaEventQuery.
Each trace must also agree with the reference (counts, kernel time, busy time, is_async, 3 NVTX
steps; steps and analyze agree on steady steps). Every part runs in try/except; logs and JSON under
--out; a summary table is printed last. Finishes in well under a minute on an H100.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def record(kind, path):
    import torch
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    host = [torch.randn(256, 512).pin_memory() for _ in range(4)]
    ev = torch.cuda.Event()
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched) as prof:
        for step in range(6):
            x = host[step % 4].to(dev, non_blocking=True)
            loss = model(x).square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if kind == "itemsync":
                loss.item()
            elif kind == "query":
                ev.record()
                while not ev.query():
                    pass
            prof.step()
    torch.cuda.synchronize()
    prof.export_chrome_trace(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for kind in ("async", "itemsync", "query"):
        t0 = time.time()
        res = {"kind": kind, "ok": False, "notes": ""}
        try:
            trace = os.path.join(a.out, f"{kind}.json")
            record(kind, trace)
            db = os.path.join(a.out, f"{kind}.sqlite")
            imp = subprocess.run([a.stepscope, "import", trace, "-f", "-o", db, "--format", "json"],
                                 capture_output=True, text=True)
            open(os.path.join(a.out, f"{kind}.import.txt"), "w").write(imp.stdout + imp.stderr)
            corpus = subprocess.run([sys.executable, os.path.join(REPO, "tests", "corpus", "run_corpus.py"),
                                     "--stepscope", a.stepscope, trace], capture_output=True, text=True)
            open(os.path.join(a.out, f"{kind}.corpus.txt"), "w").write(corpus.stdout + corpus.stderr)
            an = subprocess.run([a.stepscope, "analyze", "--all", "--format", "json", db], capture_output=True,
                                text=True)
            open(os.path.join(a.out, f"{kind}.analyze.json"), "w").write(an.stdout)
            findings = json.loads(an.stdout)["findings"] if an.returncode == 0 else []
            rules = [f["rule"] for f in findings]
            problems = []
            if imp.returncode != 0:
                problems.append("import failed")
            if corpus.returncode != 0:
                problems.append("reference mismatch (see %s.corpus.txt)" % kind)
            if "sync_memcpy" in rules:
                problems.append("sync_memcpy fired")
            if any(f["rule"] == "host_sync" and "cudaEventQuery" in f["title"] for f in findings):
                problems.append("host_sync on cudaEventQuery")
            res["ok"] = not problems
            res["notes"] = "; ".join(problems) or "rules: " + (", ".join(sorted(set(rules))) or "-")
        except Exception as e:  # keep going: one part failing must not hide the others
            res["notes"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        res["s"] = round(time.time() - t0, 1)
        rows.append(res)
    json.dump(rows, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    print(f"{'loop':10} {'ok':4} {'s':>6}  notes")
    for r in rows:
        print(f"{r['kind']:10} {'yes' if r['ok'] else 'NO':4} {r['s']:6.1f}  {r['notes']}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
