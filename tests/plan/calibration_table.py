#!/usr/bin/env python3
"""Predicted vs measured peak memory: `stepscope plan` against plan_calibration.py's measurements.

  python3 tests/plan/calibration_table.py --stepscope build/bin/stepscope \
      --peaks /path/to/plan_peaks.json [--peaks other.json] [--markdown]
  python3 tests/plan/calibration_table.py --stepscope build/bin/stepscope --predict-only

For every configuration of tests/gpu/plan_calibration.py it runs `stepscope plan` with the
same model and settings, and compares peak_allocated_bytes with the measured
torch.cuda.max_memory_allocated. Exit code 1 when any configuration is off by more than 10%.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PRESETS = {"tiny": (4, 128), "small": (8, 512), "medium": (8, 1024)}  # batch, seq of train_gpt.py


def load_configs():
    spec = importlib.util.spec_from_file_location("plan_calibration",
                                                  os.path.join(ROOT, "tests", "gpu", "plan_calibration.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CONFIGS


def plan_args(cfg, tmp):
    if cfg["kind"] == "train_gpt":
        b, s = PRESETS[cfg["preset"]]
        args = ["--model", os.path.join(HERE, "configs", f"train_gpt_{cfg['preset']}.json"),
                "--micro-batch", str(b), "--seq-len", str(s),
                "--dtype", "amp-bf16" if cfg["dtype"] == "bf16" else "fp32", "--optimizer", "adamw-fused"]
    else:
        path = os.path.join(tmp, cfg["name"] + ".json")
        with open(path, "w") as f:
            json.dump(cfg["config"], f)
        args = ["--model", path, "--micro-batch", str(cfg["batch"]), "--seq-len", str(cfg["seq"]),
                "--dtype", cfg["dtype"], "--optimizer", cfg["optimizer"]]
        if cfg.get("lora"):
            args += ["--lora-rank", str(cfg["lora"]["r"]), "--lora-targets", ",".join(cfg["lora"]["target_modules"])]
    if cfg.get("checkpoint"):
        args += ["--recompute", "full"]
    return args


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stepscope", required=True)
    p.add_argument("--peaks", action="append", default=[], help="plan_peaks.json (repeatable: one per GPU)")
    p.add_argument("--predict-only", action="store_true")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--detail", action="store_true",
                   help="per configuration: measured phases (MiB) beside the plan's parts")
    a = p.parse_args()
    measured = []
    for path in a.peaks:
        with open(path) as f:
            d = json.load(f)
        measured.append((d.get("device") or os.path.basename(os.path.dirname(path)),
                         {c["name"]: c for c in d["configs"]}))
    rows, worst, bad = [], 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for cfg in load_configs():
            r = subprocess.run([a.stepscope, "plan", "--format", "json"] + plan_args(cfg, tmp),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                print(f"{cfg['name']}: stepscope plan failed: {r.stderr.strip()}", file=sys.stderr)
                bad += 1
                continue
            j = json.loads(r.stdout)
            pred = j["peak_allocated_bytes"]
            row = [cfg["name"], f"{pred / 2**30:.3f}", j["peak_moment"]]
            if a.detail:
                mib = lambda v: f"{v / 2**20:.0f}"
                print(f"== {cfg['name']}: predicted {mib(pred)} MiB at {j['peak_moment']}")
                print("   plan: " + ", ".join(f"{x['name']} {mib(x['bytes'])}{'*' if x['at_peak'] else ''}"
                                          for x in j["parts"]))
                for dev, by_name in measured:
                    m = by_name.get(cfg["name"]) or {}
                    if not m.get("ok"):
                        print(f"   {dev}: failed {m.get('error', '')}")
                        continue
                    steps = m.get("steps", [])
                    last = steps[-1] if steps else {}
                    persistent = last.get("between_end", last.get("optimizer_end", 0))
                    print(f"   {dev}: max {mib(m['max_allocated'])} reserved {mib(m['max_reserved'])}; "
                          f"params {mib(m.get('param_bytes', 0))} grads {mib(m.get('grad_bytes', 0))} "
                          f"opt {mib(m.get('opt_state_bytes', 0))}; persistent-params-opt "
                          f"{mib(persistent - m.get('param_bytes', 0) - m.get('opt_state_bytes', 0))}")
                    for i, st in enumerate(steps):
                        print(f"     step {i}: " + " ".join(f"{k} {mib(v)}" for k, v in st.items()))
            for dev, by_name in measured:
                m = by_name.get(cfg["name"])
                if not m or not m.get("ok"):
                    row += ["failed", ""]
                    continue
                err = (pred - m["max_allocated"]) / m["max_allocated"]
                worst = max(worst, abs(err))
                bad += abs(err) > 0.10
                row += [f"{m['max_allocated'] / 2**30:.3f}", f"{100 * err:+.1f}%"]
            rows.append(row)
    head = ["config", "predicted GiB", "peak at"]
    for dev, _ in measured:
        head += [f"measured GiB ({dev})", "error"]
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(x[i]) for x in rows + [head]) for i in range(len(head))]
        for r in [head] + rows:
            print("  ".join(x.ljust(w[i]) for i, x in enumerate(r)))
    if measured:
        print(f"\n{len(rows)} configurations, worst error {100 * worst:.1f}%, {bad} over 10%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
