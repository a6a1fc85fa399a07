#!/usr/bin/env python3
"""What the DataLoader worker path costs a training step, inside ONE Trainer run.

The HF LoRA calibration (docs/PERFORMANCE.md, "Where it stands") found 4 DataLoader workers
making the step slower, not faster, measured in phases of one Trainer run; a worker-fed batch
costs the training thread 0.17-0.20 ms when measured alone (bench/worker_fetch.py). This probe
says where the rest goes: one Trainer run (tests/gpu/hf_lora_train.py's model and data) cycles
through loader arms phase by phase (A B C ... A B C ...), each arm a DataLoader the Trainer
itself builds (get_train_dataloader with that arm's num_workers / pin_memory), each keeping
its own iterator. Per step it records the wall time between step ends, the main thread's CPU
time over it (time.thread_time: a thread waiting for the GIL or a lock spends wall time, not
CPU time), and the time the main thread spent inside the loader's next().

  python3 tests/gpu/worker_path_probe.py [--arms 0,4,4:nopin,1,0:nopin] [--rounds 8]

Arms: WORKERS[:nopin]. Prints one JSON line: per arm the medians over its phases of ms/step,
main-thread CPU ms/step and fetch ms/step, and the per-phase values.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpukit import split_phases  # noqa: E402
from hf_lora_train import Tokens, build_model, run, trainer_with_loaders, training_args  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arms", default="0,4,4:nopin,1,0:nopin")
    ap.add_argument("--rounds", type=int, default=8, help="phases per arm")
    ap.add_argument("--phase", type=int, default=10)
    ap.add_argument("--skip", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=8)
    a = ap.parse_args()
    arms = []
    for x in a.arms.split(","):
        w, _, opt = x.partition(":")
        arms.append((int(w), opt != "nopin", x))
    from transformers import TrainerCallback

    model = build_model()
    run(model, 8, 0, 8, False)  # warm-up: kernels, allocator, autotuning
    n_arms = len(arms)
    total = a.warmup + a.rounds * n_arms * a.phase + 1
    st = {"arm": 0, "steps": 0, "fetch": 0.0}
    rec = []  # (arm or None at a change, wall, cpu, fetch)

    class Phases(TrainerCallback):
        def on_step_end(self, args, state_, control, **kw):
            rec.append((st["arm"], time.perf_counter(), time.thread_time(), st["fetch"]))
            st["steps"] += 1
            n = st["steps"]
            if n < a.warmup or (n - a.warmup) % a.phase:
                return
            torch.cuda.synchronize()
            st["arm"] = ((n - a.warmup) // a.phase) % n_arms
            rec.append(None)

    def on_fetch(seconds):
        st["fetch"] += seconds

    trainer = trainer_with_loaders([(w, pin) for w, pin, _ in arms], lambda: st["arm"], on_fetch)
    model.gradient_checkpointing_disable()
    trainer(model=model, args=training_args(8, total), train_dataset=Tokens(8 * (total + 8), 512, 32000),
            callbacks=[Phases()]).train()
    torch.cuda.synchronize()
    per = {name: {"ms": [], "cpu_ms": [], "fetch_ms": []} for _, _, name in arms}
    for ph in split_phases(rec):  # the records between two change marks, the warm-up dropped
        ph = ph[a.skip:]
        if len(ph) < 3:
            continue
        name = arms[ph[-1][0]][2]
        k = len(ph) - 1
        per[name]["ms"].append(round((ph[-1][1] - ph[0][1]) * 1e3 / k, 3))
        per[name]["cpu_ms"].append(round((ph[-1][2] - ph[0][2]) * 1e3 / k, 3))
        per[name]["fetch_ms"].append(round((ph[-1][3] - ph[0][3]) * 1e3 / k, 3))
    out = {"arms": {}, "phase_steps": a.phase, "skip": a.skip, "gpu": torch.cuda.get_device_name(0)}
    for name, v in per.items():
        out["arms"][name] = {key + "_median": round(statistics.median(x), 3) if x else None for key, x in v.items()}
        out["arms"][name]["phases"] = v
    print(json.dumps(out))


if __name__ == "__main__":
    main()
