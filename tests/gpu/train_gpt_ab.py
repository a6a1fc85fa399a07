#!/usr/bin/env python3
"""The realized saving of a train_gpt fix measured inside ONE process (what-if calibration).

Why: on the lent VMs one bare `train_gpt.py` run differs from the next by 20-40% (CPU
placement, host load; docs/PERFORMANCE.md), so a saving of 1-3 ms out of 30 ms is not
resolved by a handful of process-level pairs (small_sync on an H100: pairs from -2.5 to
+6.8 ms). Here one train_gpt process runs the problem config and alternates phases with the
real fix switched off and on (A B A B ..., `--phase` steps each, the first `--skip` of each
phase dropped), so both arms share the process, its CPUs, GPU state and allocator.

The fix is applied for real, by switching what the config switches, not by a model of it:
  --toggle sync        the per-step `loss.item()` of `--sync-every 1`: in fix phases the call
                       made by train_gpt's step() returns at once (no sync, no copy)
  --toggle checkpoint  `--checkpoint`: the model's own flag (GPT.checkpoint) is cleared in fix
                       phases, so its blocks run un-checkpointed (train_gpt's forward reads it)

Timing: the host time between consecutive optimizer steps (a global optimizer step hook),
per phase the mean over its kept steps; a torch.cuda.synchronize() at every phase change
(both directions alike) so that no phase inherits the other's queue.

  python3 tests/gpu/train_gpt_ab.py --workload train_gpt.py --toggle sync --pairs 20 \
      -- --preset small --sync-every 1

Prints one JSON line: runs_ms {problem: [ms/step per phase], fix: [...]}, the medians, the
realized saving (difference of medians) and the median of the paired differences (each
problem phase against the mean of its fix neighbours) — the shape bench/calibration.py reads.
"""
import argparse
import gc
import json
import runpy
import sys
import time

from gpukit import ab_savings


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True, help="path of train_gpt.py")
    ap.add_argument("--toggle", required=True, choices=["sync", "checkpoint"])
    ap.add_argument("--pairs", type=int, default=20, help="problem/fix phase pairs")
    ap.add_argument("--phase", type=int, default=10, help="steps per phase")
    ap.add_argument("--skip", type=int, default=2, help="steps dropped at the start of each phase")
    ap.add_argument("--warmup", type=int, default=8, help="steps before the first phase")
    ap.add_argument("rest", nargs=argparse.REMAINDER, help="-- train_gpt arguments of the problem config")
    a = ap.parse_args()
    rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    if a.phase - a.skip < 3:
        ap.error("--phase must keep at least 3 steps after --skip")
    need = {"sync": "--sync-every", "checkpoint": "--checkpoint"}[a.toggle]
    if need not in rest:
        ap.error(f"--toggle {a.toggle} needs the problem config's {need} among the workload arguments")

    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook

    state = {"fix": False, "steps": 0, "model": None, "skipped_items": 0}
    ends = []  # step-end times; None marks a phase change

    real_item = torch.Tensor.item

    def item(self):
        # Only the per-step sync of train_gpt's step() is the problem; any other caller keeps it.
        if state["fix"] and sys._getframe(1).f_code.co_name == "step":
            state["skipped_items"] += 1
            return None
        return real_item(self)

    if a.toggle == "sync":
        torch.Tensor.item = item

    def find_model():
        for o in gc.get_objects():
            if isinstance(o, torch.nn.Module) and type(o).__name__ == "GPT" and hasattr(o, "checkpoint"):
                return o
        raise RuntimeError("no GPT module with a `checkpoint` flag found in the workload")

    def hook(opt, args, kwargs):
        ends.append(time.perf_counter())
        state["steps"] += 1
        n = state["steps"]
        if n < a.warmup or (n - a.warmup) % a.phase:
            return
        k = (n - a.warmup) // a.phase  # the phase about to start: even = problem, odd = fix
        torch.cuda.synchronize()
        state["fix"] = k % 2 == 1
        if a.toggle == "checkpoint":
            if state["model"] is None:
                state["model"] = find_model()
            state["model"].checkpoint = not state["fix"]
        ends.append(None)

    register_optimizer_step_post_hook(hook)
    total = a.warmup + 2 * a.phase * a.pairs + 1
    sys.argv = [a.workload] + rest + ["--steps", str(total), "--warmup", "0"]
    out = sys.stdout
    sys.stdout = sys.stderr  # the workload's own result line is not ours
    try:
        runpy.run_path(a.workload, run_name="__main__")
    except SystemExit:
        pass
    finally:
        sys.stdout = out
    res = ab_savings(ends, a.pairs, a.skip)
    if "error" in res:
        print(json.dumps(res))
        return 1
    fix = {"sync": "remove the per-step loss.item() sync (in-process phases)",
           "checkpoint": "no activation checkpointing (in-process phases)"}[a.toggle]
    print(json.dumps({"workload": "train_gpt", "problem_args": rest, "fix": fix, "toggle": a.toggle,
                      "phase_steps": a.phase, "skip": a.skip, **res,
                      "skipped_items": state["skipped_items"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
