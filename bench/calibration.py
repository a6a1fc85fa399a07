#!/usr/bin/env python3
"""Figure: what-if calibration, the measured half (docs/PERFORMANCE.md, "What-if calibration").

For each scenario (a problem config and its real fix) this runs the workload bare in
interleaved pairs (problem, fix, problem, fix, ...) and takes the realized saving as the
difference of the medians of the workload's own ms/step. It also records traced runs
of the problem config with `stepscope profile` (--traces K, default 1), the traces the
prediction is made from (bench/calibration_predict.py prints predicted next to realized:
with K > 1 the median over the K traces). The traced runs are spread among the bare pairs
(train_gpt: after pairs spaced evenly; in-process workloads: the pairs are split into K
blocks, a traced run after each), so that a drift of the host's speed over the minutes of
a scenario reaches the traced runs and the bare pairs alike.

Scenarios (names for --scenarios):
  tiny_sync      train_gpt --preset tiny --sync-every 1      vs  no sync
  small_sync     train_gpt --preset small --sync-every 1     vs  no sync
  loader         --workers 0 --cpu-work-ms 4                 vs  --workers 4 --cpu-work-ms 4
  offload        --offload                                   vs  none
  fp32           --dtype fp32                                vs  bf16
  checkpoint     --checkpoint                                vs  none
  hf_lora_batch  HF Trainer + PEFT LoRA, batch 8             vs  batch 32 (per 8 samples)
  hf_lora_workers HF Trainer + PEFT LoRA, 0 DataLoader workers vs 4
  hf_lora_ckpt   HF Trainer + PEFT LoRA, gradient checkpointing vs none
  hf_lora_ckpt_reentrant  the same, reentrant checkpointing (transformers' default) vs none
  compile_graphs torch.compile default                       vs  mode="reduce-overhead" (CUDA graphs)
  small_sync_ab, tiny_sync_ab, checkpoint_ab
                 the train_gpt scenarios of the same name without _ab, the realized saving
                 measured inside one process (tests/gpu/train_gpt_ab.py: problem and fix
                 phases alternated, the fix switched for real); --ab-pairs phase pairs in
                 --traces blocks, a traced run of the problem (and fix) config after each
  hf_lora_ckpt_ab, hf_lora_ckpt_reentrant_ab, hf_lora_workers_ab
                 hf_lora_ckpt(_reentrant) and hf_lora_workers with the realized saving measured inside ONE
                 Trainer run (tests/gpu/hf_lora_train.py --phases: gradient checkpointing
                 switched on the model, or the batches drawn from the Trainer's 0- or 4-worker
                 DataLoader, phase by phase); --ab-pairs phase pairs in --traces blocks
The hf_* and compile_* workloads (tests/gpu/hf_lora_train.py, tests/gpu/compile_graphs.py)
alternate both arms inside one process (A B A B blocks) to save GPU time; they are run
once bare for that and once under the tracer (problem arm only) for the trace.

usage (on the GPU machine):
  python3 bench/calibration.py --stepscope build/bin/stepscope --workload train_gpt.py \
      --out $OUT/calib [--pairs 4] [--scenarios tiny_sync,small_sync,...] [--budget-s 540]
Writes OUT/realized.json after every scenario (a timeout keeps what finished) and the
problem traces OUT/<scenario>.sqlite, OUT/<scenario>.2.sqlite, ... (with --trace-fix also the
fix's, OUT/<scenario>_fix.sqlite, OUT/<scenario>_fix.2.sqlite, ...); --tar packs them into
OUT/traces.tar.gz.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_DIR = os.path.join(HERE, "..", "tests", "gpu")

# name: (workload args of the problem, of the fix, steps, warm-up, what the fix is)
TRAIN_GPT = {
    "tiny_sync": (["--preset", "tiny", "--sync-every", "1"], ["--preset", "tiny"], 200, 20,
                  "remove the per-step loss.item() sync"),
    "small_sync": (["--preset", "small", "--sync-every", "1"], ["--preset", "small"], 30, 5,
                   "remove the per-step loss.item() sync"),
    "loader": (["--preset", "small", "--workers", "0", "--cpu-work-ms", "4"],
               ["--preset", "small", "--workers", "4", "--cpu-work-ms", "4"], 20, 5,
               "4 DataLoader workers"),
    "offload": (["--preset", "small", "--offload"], ["--preset", "small"], 12, 3,
                "no activation offload"),
    "fp32": (["--preset", "small", "--dtype", "fp32"], ["--preset", "small"], 20, 5,
             "bf16 autocast instead of fp32"),
    "checkpoint": (["--preset", "small", "--checkpoint"], ["--preset", "small"], 30, 5,
                   "no activation checkpointing"),
}
IN_PROCESS = {
    # name: (script, args, trace args of the problem, of the fix)
    "hf_lora_batch": ("hf_lora_train.py", ["--compare", "batch"], ["--batch", "8"], ["--batch", "32"]),
    "hf_lora_workers": ("hf_lora_train.py", ["--compare", "workers"], ["--batch", "8", "--workers", "0"],
                        ["--batch", "8", "--workers", "4"]),
    "hf_lora_ckpt": ("hf_lora_train.py", ["--compare", "checkpoint"], ["--batch", "8", "--gc"], ["--batch", "8"]),
    # The same with reentrant checkpointing (transformers' default when no kwargs are given).
    "hf_lora_ckpt_reentrant": ("hf_lora_train.py", ["--compare", "checkpoint", "--reentrant"],
                               ["--batch", "8", "--gc", "--reentrant"], ["--batch", "8"]),
    "compile_graphs": ("compile_graphs.py", ["--compare"], ["--mode", "default"],
                       ["--mode", "reduce-overhead"]),
}
# name: (the IN_PROCESS scenario it measures in phases of one Trainer run, hf_lora_train.py's args)
HF_AB = {
    "hf_lora_ckpt_ab": ("hf_lora_ckpt", ["--compare", "checkpoint", "--phases"]),
    "hf_lora_workers_ab": ("hf_lora_workers", ["--compare", "workers", "--phases"]),
    "hf_lora_ckpt_reentrant_ab": ("hf_lora_ckpt_reentrant", ["--compare", "checkpoint", "--reentrant", "--phases"]),
}
# name: (the train_gpt scenario it measures in-process, the switch train_gpt_ab.py flips)
TRAIN_GPT_AB = {
    "small_sync_ab": ("small_sync", "sync"),
    "tiny_sync_ab": ("tiny_sync", "sync"),
    "checkpoint_ab": ("checkpoint", "checkpoint"),
}


def run_json(cmd, env=None, timeout=300):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-1200:]}")
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def traced(a, name, cmd):
    path = os.path.join(a.out, name)
    prof = [a.stepscope, "profile", "-q", "-f", "-o", path, "--native-hz", str(a.native_hz), "--"] + cmd
    res = run_json(prof)
    return res, path + ".sqlite"


def trace_name(name, k):
    """The k-th trace (0-based) of a scenario: name, name.2, name.3, ..."""
    return name if k == 0 else f"{name}.{k + 1}"


def trace_positions(pairs, k):
    """After which bare pairs (0-based) the k traced runs go: spread evenly, the last after the last pair."""
    return [max(0, round((j + 1) * pairs / k) - 1) for j in range(k)]


def add_traced(r, a, name, k, cmd, fix_cmd):
    """One traced run of the problem config (and with --trace-fix of the fix config) into r."""
    res, trace = traced(a, trace_name(name, k), cmd)
    r.setdefault("traces", []).append(os.path.basename(trace))
    r.setdefault("traced_ms_per_step_runs", []).append(res["ms_per_step"])
    if a.trace_fix:
        res, trace = traced(a, trace_name(name + "_fix", k), fix_cmd)
        r.setdefault("traces_fix", []).append(os.path.basename(trace))
        r.setdefault("traced_fix_ms_per_step_runs", []).append(res["ms_per_step"])


def finish(r):
    """The medians and the realized saving from the bare runs so far, and the single-trace keys
    older readers use (the first trace, the median traced ms/step)."""
    times = r.get("runs_ms", {})
    if times.get("problem") and times.get("fix"):
        mp, mf = statistics.median(times["problem"]), statistics.median(times["fix"])
        r.update({"problem_median_ms": mp, "fix_median_ms": mf, "realized_saving_ms": mp - mf})
    if r.get("traces"):
        r["trace"] = r["traces"][0]
        r["traced_ms_per_step"] = statistics.median(r["traced_ms_per_step_runs"])
    if r.get("traces_fix"):
        r["trace_fix"] = r["traces_fix"][0]
        r["traced_fix_ms_per_step"] = statistics.median(r["traced_fix_ms_per_step_runs"])
    return r


def traced_cmd(a, steps, warm):
    """train_gpt's command line for a traced run: at most 20 steps (8 at least)."""
    return [sys.executable, a.workload, "--json", "--steps", str(max(8, min(steps, 20))), "--warmup", str(warm)]


def train_gpt_scenario(a, name, r):
    """Fills r as it goes (a deadline that stops the run keeps the pairs so far)."""
    prob, fix, steps, warm, what = TRAIN_GPT[name]
    base = [sys.executable, a.workload, "--json", "--steps", str(steps), "--warmup", str(warm)]
    tr_base = traced_cmd(a, steps, warm)
    times = {"problem": [], "fix": []}
    r.update({"problem_args": prob, "fix_args": fix, "fix": what, "runs_ms": times})
    at = trace_positions(a.pairs, a.traces)
    for i in range(a.pairs):
        times["problem"].append(run_json(base + prob)["ms_per_step"])
        times["fix"].append(run_json(base + fix)["ms_per_step"])
        print(f"  {name} pair {i}: problem {times['problem'][-1]:.3f} fix {times['fix'][-1]:.3f}", flush=True)
        for _ in range(at.count(i)):
            add_traced(r, a, name, len(r.get("traces", [])), tr_base + prob, tr_base + fix)


def blocks_and_traces(a, name, r, pairs, run_block, cmd, fix_cmd):
    """The pairs in a.traces blocks as even as can be (run_block(n): the JSON of one in-process
    run of n pairs), their runs merged into r["runs_ms"] as they come, a traced run of the
    problem (and with --trace-fix of the fix) after each block."""
    times = r.setdefault("runs_ms", {"problem": [], "fix": []})
    for k in range(a.traces):
        n = pairs // a.traces + (1 if k < pairs % a.traces else 0)
        if n > 0:
            for arm, vals in run_block(n)["runs_ms"].items():
                times.setdefault(arm, []).extend(vals)
        add_traced(r, a, name, k, cmd, fix_cmd)


RESULT_KEYS = ("runs_ms", "problem_median_ms", "fix_median_ms", "realized_saving_ms", "paired_saving_ms")


def keep_block(r, name, n, part):
    """One in-process block's JSON into r: the workload's description of the scenario (keys r
    does not have yet) and, from phase pairs, the block's paired saving (printed)."""
    for key, v in part.items():
        if key not in RESULT_KEYS:
            r.setdefault(key, v)
    if "paired_saving_ms" in part:
        r.setdefault("paired_saving_ms_blocks", []).append(part["paired_saving_ms"])
        print(f"  {name} block: {n} phase pairs, saving {part['realized_saving_ms']:.3f} ms "
              f"(paired {part['paired_saving_ms']})", flush=True)
    return part


def in_process_scenario(a, name, r):
    """Fills r as it goes (the workload alternates both arms in one process: whole runs, or
    for the HF_AB scenarios --ab-pairs phase pairs inside one Trainer run per block)."""
    if name in HF_AB:
        base, args = HF_AB[name]
        pairs = a.ab_pairs
    else:
        base, args, pairs = name, IN_PROCESS[name][1], a.pairs
    script, _, trace_args, fix_trace_args = IN_PROCESS[base]
    path = os.path.join(GPU_DIR, script)

    def run_block(n):
        return keep_block(r, name, n, run_json([sys.executable, path, "--pairs", str(n)] + args, timeout=400))

    blocks_and_traces(a, name, r, pairs, run_block, [sys.executable, path] + trace_args,
                      [sys.executable, path] + fix_trace_args)


def train_gpt_ab_scenario(a, name, r):
    """Like in_process_scenario, for train_gpt: phase pairs of tests/gpu/train_gpt_ab.py, a
    traced run of the plain problem (and fix) config after each block."""
    base, toggle = TRAIN_GPT_AB[name]
    prob, fix, steps, warm, what = TRAIN_GPT[base]
    ab = [sys.executable, os.path.join(GPU_DIR, "train_gpt_ab.py"), "--workload", a.workload, "--toggle", toggle]
    r.update({"problem_args": prob, "fix_args": fix, "fix": what + " (in-process phases)"})

    def run_block(n):
        return keep_block(r, name, n, run_json(ab + ["--pairs", str(n), "--"] + prob, timeout=400))

    tr = traced_cmd(a, steps, warm)
    blocks_and_traces(a, name, r, a.ab_pairs, run_block, tr + prob, tr + fix)


class Deadline(Exception):
    """SIGTERM (session_batch.sh's timeout): stop, keep what was measured."""


def on_term(signum, frame):
    raise Deadline()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--workload", required=True, help="path of train_gpt.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--native-hz", type=int, default=500,
                    help="native stack samples of the traced runs (profile --native-hz; 0 off): they "
                         "price the saved-tensor hooks of activation checkpointing")
    ap.add_argument("--traces", type=int, default=1,
                    help="traced runs of the problem config per scenario, spread among the pairs "
                         "(the prediction takes the median over them)")
    ap.add_argument("--scenarios", default=",".join(list(TRAIN_GPT) + list(IN_PROCESS)))
    ap.add_argument("--ab-pairs", type=int, default=24,
                    help="problem/fix phase pairs of the *_ab scenarios (10 steps a phase)")
    ap.add_argument("--budget-s", type=float, default=540, help="start no scenario after this many seconds")
    ap.add_argument("--tar", action="store_true", help="pack the traces into OUT/traces.tar.gz")
    ap.add_argument("--trace-fix", action="store_true",
                    help="also trace the fix config (OUT/<scenario>_fix.sqlite): what the fixed step "
                         "looks like, to check a transformation op by op")
    a = ap.parse_args()
    if a.pairs < 1 or a.traces < 1:
        ap.error("--pairs and --traces must be at least 1")
    os.makedirs(a.out, exist_ok=True)
    signal.signal(signal.SIGTERM, on_term)
    t0 = time.time()
    out_json = os.path.join(a.out, "realized.json")
    results = {}
    if os.path.exists(out_json):
        with open(out_json) as f:
            results = json.load(f)
    try:
        import torch
        results["_machine"] = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                               "date": time.strftime("%Y-%m-%d")}
    except Exception as e:  # noqa: BLE001 - the machine line is informational
        results["_machine"] = {"error": str(e)}
    for name in a.scenarios.split(","):
        if time.time() - t0 > a.budget_s:
            print(f"{name}: skipped (budget)", flush=True)
            continue
        ts = time.time()
        r = results[name] = {}
        stopped = False
        try:
            if name in TRAIN_GPT:
                train_gpt_scenario(a, name, r)
            elif name in TRAIN_GPT_AB:
                train_gpt_ab_scenario(a, name, r)
            else:
                in_process_scenario(a, name, r)
        except Deadline:
            r["incomplete"] = "stopped by SIGTERM (a deadline): the runs before it"
            stopped = True
        except Exception as e:  # noqa: BLE001 - one failed scenario must not lose the others
            results[name] = r = {"error": str(e)[-2000:]}
        if "error" not in r:
            finish(r)["seconds"] = round(time.time() - ts, 1)
        with open(out_json, "w") as f:
            json.dump(results, f, indent=1)
        print(f"{name}: {json.dumps({k: v for k, v in r.items() if k != 'runs_ms'})[:400]}", flush=True)
        if stopped:
            break
    if a.tar:
        with tarfile.open(os.path.join(a.out, "traces.tar.gz"), "w:gz") as t:
            for f in sorted(os.listdir(a.out)):
                if f.endswith((".sqlite", ".json")) and f != "realized.json":
                    t.add(os.path.join(a.out, f), arcname=f)
    print("\nscenario          problem ms  fix ms  realized saving ms")
    for name, r in results.items():
        if name.startswith("_"):
            continue
        if "error" in r:
            print(f"{name:16s}  ERROR {r['error'][:100]}")
        elif "realized_saving_ms" not in r:
            print(f"{name:16s}  no complete pair ({r.get('incomplete', '')})")
        else:
            print(f"{name:16s}  {r['problem_median_ms']:10.3f}  {r['fix_median_ms']:7.3f}  {r['realized_saving_ms']:10.3f}")


if __name__ == "__main__":
    main()
