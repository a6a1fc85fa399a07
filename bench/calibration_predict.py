#!/usr/bin/env python3
"""Figure: what-if calibration, the predicted half (docs/whatif.md, docs/PERFORMANCE.md).

bench/calibration.py (on a GPU machine) records, per scenario, one or more traced runs of
the problem config (<scenario>.sqlite, <scenario>.2.sqlite, ...) and the realized saving of
its real fix from interleaved bare runs (realized.json). This script (no GPU needed) prices
the same fix from each trace alone, with `stepscope analyze` (the finding's replayed saving)
and `stepscope whatif` (the question the fix answers), and prints predicted next to realized.
With several traces the prediction is the median of their ratios (each trace's own
prediction is printed too): one traced run of these workloads can be 50% slower than the
next on the lent VMs (docs/PERFORMANCE.md), the same noise the bare pairs' medians damp.
Where the fix configs were traced too (--trace-fix), the last column is what those traced
runs measured, carried over the same way: what a replay that got each trace exactly right
would predict.

A traced run's host is slower than a bare one's (the tracer's per-call cost, and the VMs'
host speed from one process to the next), its GPU is not, so each trace is priced at the
untraced host speed: `analyze`/`whatif --untraced-step-ms` with the bare problem median
scale the replay's host time by bare / simulated step (docs/whatif.md), and
    predicted saving = simulated step - simulated step if fixed   (median over the traces).
Beside it: "(ratio)", the carry used before 2026-11-24i (bare problem median x (1 - fixed /
simulated) of the traced replay; wrong where the fix moves the bound to the GPU), and
"(traced)", the replayed saving in ms of the traced run.

Acceptance (issue "what-if"): replay within 3% of the measured median step; predicted
within 15% of realized, or within 1 ms where realized < 5 ms; where realized is ~0 (under analyze's
reporting threshold, 1% of the bare problem step) no finding above threshold names the
scenario's rule.

usage:
  python3 bench/calibration_predict.py --calib DIR [--stepscope build/bin/stepscope]
  DIR holds one folder per machine kind (h100/, h200/), each with the realized.json and the
  <scenario>.sqlite traces that bench/calibration.py --out wrote on that machine.
         [--kinds h100,h200] [--json OUT.json]
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_COST_PCT = 1.0  # analyze's default --min-cost: a finding below it is not reported

# scenario -> (rule of the finding that names the problem, whatif arguments, how the
# realized number compares: "saving" (ms/step) or "batch" (time per original batch))
SCENARIOS = {
    "tiny_sync": ("host_sync", ["--remove-sync", "all", "--in", "loss.item"], "saving"),
    "small_sync": ("host_sync", ["--remove-sync", "all", "--in", "loss.item"], "saving"),
    "loader": ("data_loading", ["--prefetch"], "saving"),
    "offload": ("offload_copies", ["--no-copies"], "saving"),
    "fp32": ("fp32_gemm", ["--tensor-cores"], "saving"),
    "checkpoint": ("recompute", ["--no-recompute"], "saving"),
    "hf_lora_batch": ("host_bound", ["--batch", "4"], "batch"),
    "hf_lora_workers": ("data_loading", ["--prefetch"], "saving"),
    "hf_lora_ckpt": ("recompute", ["--no-recompute"], "saving"),
    "hf_lora_ckpt_reentrant": ("recompute", ["--no-recompute"], "saving"),
    "compile_graphs": ("launch_bound", ["--graph", "steps"], "saving"),
}
# The same fixes with the realized saving measured inside one process (tests/gpu/train_gpt_ab.py).
for _n in ("small_sync", "tiny_sync", "checkpoint"):
    SCENARIOS[_n + "_ab"] = SCENARIOS[_n]
# ... and inside one Trainer run (tests/gpu/hf_lora_train.py --phases).
for _n in ("hf_lora_ckpt", "hf_lora_ckpt_reentrant", "hf_lora_workers"):
    SCENARIOS[_n + "_ab"] = SCENARIOS[_n]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()[:300]}")
    return p.stdout


def whatif(stepscope, trace, question, extra):
    """The last row of `whatif --format csv QUESTION` (the question's answer)."""
    q = list(csv.DictReader(io.StringIO(run([stepscope, "whatif", "--format", "csv", *extra, *question,
                                             trace]))))[-1]
    return {"question": q["question"], "simulated_ns": int(q["simulated_ns"]),
            "if_fixed_ns": int(q["if_fixed_ns"]), "note": q["note"]}


def predict(stepscope, trace, rule, question, untraced_ms):
    """One trace priced at the untraced host speed (analyze and whatif with --untraced-step-ms),
    and the same whatif as traced ("whatif_traced": the ratio and traced columns)."""
    out = {"finding": None}
    extra = ["--untraced-step-ms", f"{untraced_ms:.3f}"]
    a = json.loads(run([stepscope, "analyze", "--all", "--format", "json", *extra, trace]))
    summary = a["summary"][0]
    # The replay covers at most 64 steady steps (the middle ones): compare with those. The
    # simulated step is the unscaled replay's (its fidelity), the scaling aside.
    out["measured_ms"] = float(summary["replayed_measured_step_ns"]) / 1e6
    out["simulated_ms"] = float(summary["simulated_step_ns"]) / 1e6
    out["critical_path"] = summary.get("critical_path", "")
    out["host_scale"] = float(summary.get("host_scale") or 1.0)
    out["top"] = next((f["rule"] for f in a["findings"] if f["reported"] == "yes"), "(none)")
    for f in a["findings"]:
        if f["rule"] == rule:
            out["finding"] = {k: f[k] for k in ("rule", "reported", "cost_per_step_ns", "step_before_ns",
                                                 "step_after_ns", "title")}
            break
    if question:
        out["whatif"] = whatif(stepscope, trace, question, extra)
        out["whatif_traced"] = whatif(stepscope, trace, question, [])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calib", required=True, help="folder of per-kind calibration folders")
    ap.add_argument("--stepscope", default=os.path.join(HERE, "..", "build", "bin", "stepscope"))
    ap.add_argument("--kinds", default="", help="subfolders of --calib (default: every one with realized.json)")
    ap.add_argument("--json", help="write the table as JSON here")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k] or sorted(
        d for d in os.listdir(args.calib) if os.path.isfile(os.path.join(args.calib, d, "realized.json")))
    table, failures = [], 0
    for kind in kinds:
        folder = os.path.join(args.calib, kind)
        try:
            realized = json.load(open(os.path.join(folder, "realized.json")))
        except Exception as e:  # keep going: one machine's data may be missing
            print(f"{kind}: no realized.json ({e})", file=sys.stderr)
            continue
        for name, r in realized.items():
            if name.startswith("_") or not isinstance(r, dict) or "trace" not in r or "realized_saving_ms" not in r:
                continue
            rule, question, how = SCENARIOS.get(name, (None, None, "saving"))
            if question is None:
                print(f"{kind} {name}: no transformation prices this fix yet ({r.get('fix', '')}); skipped")
                continue
            if r.get("incomplete"):  # a deadline stopped it: the pairs and traces before that
                print(f"{kind} {name}: incomplete, {len(r['runs_ms']['problem'])} pairs and "
                      f"{len(r.get('traces', []))} traces")
            row = {"kind": kind, "scenario": name, "fix": r.get("fix", ""), "rule": rule,
                   "problem_ms": r["problem_median_ms"], "fix_ms": r["fix_median_ms"],
                   "realized_ms": r["realized_saving_ms"], "traced_ms": r.get("traced_ms_per_step")}
            traces = r.get("traces") or [r["trace"]]
            try:
                # Priced at the untraced host speed: --untraced-step-ms = the bare problem median.
                per = [predict(args.stepscope, os.path.join(folder, t), rule, question, r["problem_median_ms"])
                       for t in traces]
            except Exception as e:
                row["error"] = str(e)
                table.append(row)
                failures += 1
                continue
            # Several traces of the same config: the median trace's findings, the median saving.
            mid = sorted(range(len(per)), key=lambda i: per[i]["simulated_ms"])[len(per) // 2]
            row.update(per[mid])
            row["traces"] = len(per)
            checks = []
            fid = max(abs(q["simulated_ms"] - q["measured_ms"]) / q["measured_ms"] for q in per)
            checks.append(fid <= 0.03)
            row["replay_err_pct"] = 100 * fid
            scale = 1 / float(question[1]) if how == "batch" else 1.0  # time per original batch
            saving = [(q["whatif"]["simulated_ns"] - q["whatif"]["if_fixed_ns"] * scale) / 1e6 for q in per
                      if q.get("whatif") and q["whatif"]["simulated_ns"] > 0]
            ratios = [q["whatif_traced"]["if_fixed_ns"] / q["whatif_traced"]["simulated_ns"] for q in per
                      if q.get("whatif_traced") and q["whatif_traced"]["simulated_ns"] > 0]
            if saving:
                row["predicted_ms"] = statistics.median(saving)
                row["predicted_per_trace_ms"] = saving
                # The carry used before 2026-11-24i, for comparison: the traced speedup as a ratio.
                row["predicted_ratio_ms"] = r["problem_median_ms"] * (1 - statistics.median(ratios) * scale)
                row["predicted_traced_ms"] = statistics.median(
                    (q["whatif_traced"]["simulated_ns"] - q["whatif_traced"]["if_fixed_ns"] * scale) / 1e6
                    for q in per if q.get("whatif_traced"))
                row["host_scale"] = [q.get("host_scale") for q in per]
                real = r["realized_saving_ms"]
                tol = 1.0 if abs(real) < 5 else 0.15 * abs(real)
                checks.append(abs(row["predicted_ms"] - real) <= tol)
                row["tolerance_ms"] = tol
                # "Realized ~ 0": below the analyzer's own reporting threshold (--min-cost,
                # 1% of the step), i.e. a fix that should not be reported at all.
                if abs(real) < MIN_COST_PCT / 100 * r["problem_median_ms"] and rule:
                    f = per[mid]["finding"]
                    checks.append(not (f and f["reported"] == "yes"))
            # With traced fix runs: what the traced runs themselves measured, carried the same way
            # (the saving a perfect replay of these traces would predict).
            tp, tf = r.get("traced_ms_per_step_runs"), r.get("traced_fix_ms_per_step_runs")
            if tp and tf and len(tp) == len(tf):
                row["traced_measured_ms"] = r["problem_median_ms"] * (
                    1 - statistics.median(f_ * scale / p_ for p_, f_ in zip(tp, tf)))
            row["ok"] = all(checks) and "predicted_ms" in row
            failures += 0 if row["ok"] else 1
            table.append(row)
    print(f"{'kind':5} {'scenario':16} {'replay':>7} {'realized':>9} {'predicted':>9} {'(ratio)':>9} {'(traced)':>9} "
          f"{'limit':>6}  {'finding of the rule':32} ok   traces: predicted each (traced fix runs)")
    for row in table:
        if "error" in row:
            print(f"{row['kind']:5} {row['scenario']:16} error: {row['error']}")
            continue
        f = row.get("finding")
        ftxt = "-" if not row["rule"] else (
            "none" if not f else f"{f['rule']} {int(f['cost_per_step_ns']) / 1e6:.2f} ms"
                                 f"{'' if f['reported'] == 'yes' else ' (below)'}")
        pred = row.get("predicted_ms")
        ptxt = f"{pred:9.2f}" if pred is not None else "        -"
        ttxt = f"{row['predicted_traced_ms']:9.2f}" if pred is not None else "        -"
        ttxt = (f"{row['predicted_ratio_ms']:9.2f} " if pred is not None else "        - ") + ttxt
        print(f"{row['kind']:5} {row['scenario']:16} {row['replay_err_pct']:6.2f}% {row['realized_ms']:9.2f} "
              f"{ptxt} {ttxt} "
              f"{row.get('tolerance_ms', 0):6.2f}  {ftxt:32} {'yes' if row['ok'] else 'NO ':3}  "
              f"{row['traces']}: {' '.join(f'{x:.2f}' for x in row.get('predicted_per_trace_ms', []))}"
              + (f" ({row['traced_measured_ms']:.2f})" if "traced_measured_ms" in row else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    print(f"{len(table) - failures} of {len(table)} scenarios within the limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
