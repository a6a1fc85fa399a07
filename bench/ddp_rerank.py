#!/usr/bin/env python3
"""Re-runs `stepscope ranks` on a tests/gpu/ddp_stragglers.py driver's output with this build, so a
change to summarize or ranks is checked on the GPU run without a new run (docs/ranks.md):

  python3 bench/ddp_rerank.py --stepscope build/bin/stepscope --out NEW.jsonl DEVICE_OUT_DIR

DEVICE_OUT_DIR holds the driver's results.jsonl, summaries*.tgz and traces_N.tar. Each kind's
traces, where packed, are summarized again (`summarize -f`); the other kinds use the summaries the
device wrote. The run records are copied; the ranks records are replaced by this build's (B phases
and A phases with in-process phases, as the driver runs them). Then:
  python3 tests/gpu/ddp_stragglers.py --evaluate NEW.jsonl
"""
import argparse
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
import ddp_stragglers  # noqa: E402  (iterations(): the phase steps the driver selects)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--warmup", type=int, default=12)
    ap.add_argument("--phase-steps", type=int, default=8)
    ap.add_argument("--phases", type=int, default=8)
    ap.add_argument("device_out")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ddp_rerank_")
    try:
        for t in glob.glob(os.path.join(a.device_out, "summaries*.tgz")):
            with tarfile.open(t) as tar:
                tar.extractall(work, filter="data")
        traced = os.path.join(work, "traces")
        for t in glob.glob(os.path.join(a.device_out, "traces_*.tar")):
            with tarfile.open(t) as tar:
                tar.extractall(traced, filter="data")
        for gz in glob.glob(os.path.join(traced, "*", "*.sqlite.gz")):
            with gzip.open(gz) as src, open(gz[:-3], "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(gz)
        phased = argparse.Namespace(warmup=a.warmup, phase_steps=a.phase_steps, phases=a.phases)
        sel = {"ranks": ddp_stragglers.iterations(phased, True),
               "ranks_a": ddp_stragglers.iterations(phased, False)}
        kinds = sorted({os.path.basename(p).rsplit("_r", 1)[0]
                        for p in glob.glob(os.path.join(work, "summaries", "*.summary.json"))})
        out = [json.loads(l) for l in open(os.path.join(a.device_out, "results.jsonl"))
               if json.loads(l).get("what") == "run"]
        for kind in kinds:
            d = os.path.join(traced, kind)
            if os.path.isdir(d):
                subprocess.run([a.stepscope, "summarize", "-f"] + sorted(glob.glob(d + "/*.sqlite")),
                               check=True, capture_output=True)
                inputs = sorted(glob.glob(d + "/*.summary.json"))
                source = "traces summarized again"
            else:
                inputs = sorted(glob.glob(os.path.join(work, "summaries", kind + "_r*.summary.json")))
                source = "the device's summaries"
            for what, steps in sel.items():
                p = subprocess.run([a.stepscope, "ranks", "--format", "json", "--steps",
                                    ",".join(map(str, steps))] + inputs, capture_output=True, text=True)
                rec = {"what": what, "kind": kind, "source": source,
                       "json": json.loads(p.stdout) if p.returncode == 0 else None}
                out.append(rec)
            print("%-14s %s" % (kind, source))
        with open(a.out, "w") as f:
            for r in out:
                f.write(json.dumps(r) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
