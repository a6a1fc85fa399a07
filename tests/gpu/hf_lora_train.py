#!/usr/bin/env python3
"""A workload nobody on this project wrote: Hugging Face Trainer + PEFT LoRA fine-tune.

A random-init Llama built from a config (no download): 8 layers x 1024 hidden, 16 heads,
vocab 32000, sequences of 512 tokens, bf16 autocast (TrainingArguments(bf16=True)), LoRA
r=16 on q_proj,v_proj. The step is host-bound on a lent GPU (the Trainer and PEFT's Python
per step outweigh the small GPU work), which is what the what-if calibration needs.

Modes:
  --batch 8 [--workers 0] [--steps 20]     one Trainer run; prints {"ms_per_step": ...} (JSON)
  --compare batch  --pairs 4               alternates batch 8 and batch 32 runs in this process
  --compare workers --pairs 4              alternates dataloader workers 0 and 4 (batch 8)
  --compare checkpoint --pairs 4           alternates gradient checkpointing on and off (batch 8;
                                           torch.utils.checkpoint, use_reentrant=False, per layer;
                                           --reentrant: use_reentrant=True, transformers' default)
  --gc [--reentrant]                       one run with gradient checkpointing on
  --compare checkpoint|workers --phases --pairs 24 [--phase 10 --skip 2 --warmup 8]
                                           both arms inside ONE Trainer run: phases of --phase
                                           steps alternate the problem and the fix (A B A B ...;
                                           the first --skip steps of each phase dropped, a
                                           torch.cuda.synchronize() at each change): gradient
                                           checkpointing switched on the model between steps, or
                                           the batches drawn from the Trainer's own 0-worker or
                                           4-worker DataLoader. Whole-run pairs differ by 10-40%
                                           on the lent VMs (H200: pairs -11..+3 ms for workers),
                                           phases of one run share its process, CPUs and GPU.
ms/step is the median interval between consecutive on_step_end callbacks after 3 warm-up
steps. For --compare batch the fix's time is per 8 samples (batch-32 step / 4), so the saving
is what the same samples cost less. NVTX ranges "step N" (contiguous, from one step's end to
the next, so data loading is inside them) are emitted by a callback unless --no-nvtx.
"""
import argparse
import json
import statistics
import sys
import time

import torch


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        self.n, self.seq, self.vocab = n, seq, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(0, self.vocab, (self.seq,), generator=g)
        return {"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones_like(ids)}


def build_model():
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=1024)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"],
                                             lora_dropout=0.0, task_type="CAUSAL_LM"))
    return model.cuda()


def set_checkpointing(model, on, reentrant=False):
    """Gradient checkpointing switched on the model itself (the Trainer's own flag would only ever
    switch it on), so that one process can alternate both arms, between runs or between steps."""
    if on:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
        # Reentrant checkpointing backpropagates into a layer only through inputs that require
        # grad; the embeddings are frozen under LoRA (what the Trainer's own flag does too).
        if reentrant and not getattr(model, "_stepscope_grads_hook", None):
            model._stepscope_grads_hook = model.get_input_embeddings().register_forward_hook(
                lambda mod, inp, out: out.requires_grad_(True))
    else:
        model.gradient_checkpointing_disable()
    if not (on and reentrant) and getattr(model, "_stepscope_grads_hook", None):
        model._stepscope_grads_hook.remove()
        model._stepscope_grads_hook = None


def training_args(batch, steps, workers=0, out_dir="/tmp/hf_lora_out"):
    """The Trainer's arguments of every run here: bf16 autocast, no logging, no checkpoints."""
    from transformers import TrainingArguments
    return TrainingArguments(output_dir=out_dir, per_device_train_batch_size=batch, max_steps=steps,
                             learning_rate=1e-4, bf16=True, logging_steps=10**6, save_strategy="no",
                             report_to="none", dataloader_num_workers=workers, disable_tqdm=True,
                             dataloader_pin_memory=True, seed=0)


class LoaderCycle:
    """Batches drawn from one of several DataLoaders, the one `pick()` names at each batch; each
    keeps its own iterator (a worker loader's workers stay warm). `on_fetch(seconds)`, if given,
    gets the time the caller spent in each next()."""

    def __init__(self, loaders, pick, on_fetch=None):
        self.loaders, self.pick, self.on_fetch = loaders, pick, on_fetch

    def __getattr__(self, name):  # dataset, batch_size, sampler, ... as the Trainer reads them
        return getattr(self.loaders[0], name)

    def __len__(self):
        return len(self.loaders[0])

    def set_epoch(self, epoch):
        for d in self.loaders:
            if hasattr(d, "set_epoch"):
                d.set_epoch(epoch)

    def __iter__(self):
        its = [iter(d) for d in self.loaders]
        while True:
            t = time.perf_counter()
            try:
                b = next(its[self.pick()])
            except StopIteration:
                return
            if self.on_fetch:
                self.on_fetch(time.perf_counter() - t)
            yield b


def trainer_with_loaders(arms, pick, on_fetch=None):
    """A Trainer class whose training batches come from one DataLoader per arm (workers,
    pin_memory), each built by the Trainer's own get_train_dataloader, through LoaderCycle."""
    from transformers import Trainer

    class CycleTrainer(Trainer):
        def get_train_dataloader(self):
            def use(workers, pin):  # TrainingArguments may be frozen: set the fields directly
                object.__setattr__(self.args, "dataloader_num_workers", workers)
                object.__setattr__(self.args, "dataloader_pin_memory", pin)

            saved = (self.args.dataloader_num_workers, self.args.dataloader_pin_memory)
            loaders = []
            for workers, pin in arms:
                use(workers, pin)
                loaders.append(super().get_train_dataloader())
            use(*saved)
            return LoaderCycle(loaders, pick, on_fetch)
    return CycleTrainer


def run(model, batch, workers, steps, nvtx, out_dir="/tmp/hf_lora_out", gc=False, reentrant=False):
    from transformers import Trainer, TrainerCallback

    set_checkpointing(model, gc, reentrant)
    ends = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            if nvtx and state.global_step == 0 and not ends:
                torch.cuda.nvtx.range_push("step 0")

        def on_step_end(self, args, state, control, **kw):
            ends.append(time.perf_counter())
            if nvtx:
                torch.cuda.nvtx.range_pop()
                if state.global_step < steps:
                    torch.cuda.nvtx.range_push(f"step {state.global_step}")

    tr = Trainer(model=model, args=training_args(batch, steps, workers, out_dir),
                 train_dataset=Tokens(batch * steps, 512, 32000), callbacks=[Timer()])
    tr.train()
    torch.cuda.synchronize()
    gaps = [b - a for a, b in zip(ends[3:], ends[4:])]
    return statistics.median(gaps) * 1e3


def run_phases(model, compare, pairs, phase, skip, warmup, reentrant=False):
    """Problem and fix phases inside one Trainer run (see --phases): JSON-ready dict."""
    from transformers import Trainer, TrainerCallback

    from gpukit import ab_savings

    total = warmup + 2 * phase * pairs + 1
    state = {"fix": False, "steps": 0, "fix_batches": 0}
    ends = []  # step-end times; None marks a phase change

    class Phases(TrainerCallback):
        def on_step_end(self, args, state_, control, **kw):
            ends.append(time.perf_counter())
            state["steps"] += 1
            n = state["steps"]
            if n < warmup or (n - warmup) % phase:
                return
            torch.cuda.synchronize()
            state["fix"] = ((n - warmup) // phase) % 2 == 1  # the phase about to start
            if compare == "checkpoint":
                set_checkpointing(model, not state["fix"], reentrant)
            ends.append(None)

    def pick():  # the 4-worker loader (index 1) in fix phases
        state["fix_batches"] += state["fix"]
        return int(state["fix"])

    trainer = trainer_with_loaders([(0, True), (4, True)], pick) if compare == "workers" else Trainer
    set_checkpointing(model, compare == "checkpoint", reentrant)
    tr = trainer(model=model, args=training_args(8, total), train_dataset=Tokens(8 * (total + 8), 512, 32000),
                 callbacks=[Phases()])
    tr.train()
    torch.cuda.synchronize()
    res = ab_savings(ends, pairs, skip)
    if "error" in res:
        return res
    if compare == "workers" and state["fix_batches"] == 0:
        return {"error": "the fix phases drew no batch from the 4-worker loader"}
    return {**res, "phase_steps": phase, "skip": skip, "fix_batches": state["fix_batches"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--compare", choices=["batch", "workers", "checkpoint"])
    ap.add_argument("--gc", action="store_true", help="gradient checkpointing on (one run)")
    ap.add_argument("--reentrant", action="store_true",
                    help="reentrant gradient checkpointing (use_reentrant=True, transformers' default)")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--nvtx", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--phases", action="store_true",
                    help="with --compare checkpoint|workers: both arms in one Trainer run, --pairs phase pairs")
    ap.add_argument("--phase", type=int, default=10, help="steps per phase (--phases)")
    ap.add_argument("--skip", type=int, default=2, help="steps dropped at the start of each phase (--phases)")
    ap.add_argument("--warmup", type=int, default=8, help="steps before the first phase (--phases)")
    a = ap.parse_args()
    if a.phases and a.compare not in ("checkpoint", "workers"):
        ap.error("--phases needs --compare checkpoint or --compare workers")
    if a.phases and a.phase - a.skip < 3:
        ap.error("--phase must keep at least 3 steps after --skip")
    model = build_model()
    if a.phases:
        run(model, 8, 0, 8, False)  # warm-up: kernels, allocator, autotuning
        res = run_phases(model, a.compare, a.pairs, a.phase, a.skip, a.warmup, reentrant=a.reentrant)
        fix = {"workers": "4 DataLoader workers", "checkpoint": "no gradient checkpointing"}[a.compare]
        problem = ["--batch", "8", "--workers", "0"] + (["--gc"] if a.compare == "checkpoint" else [])
        problem += ["--reentrant"] if a.compare == "checkpoint" and a.reentrant else []
        print(json.dumps({"workload": "hf_lora", "problem_args": problem, "fix": fix + " (in-process phases)",
                          **res}))
        return 1 if "error" in res else 0
    if not a.compare:
        ms = run(model, a.batch, a.workers, a.steps, a.nvtx, gc=a.gc, reentrant=a.reentrant)
        print(json.dumps({"workload": "hf_lora", "batch": a.batch, "workers": a.workers, "gc": a.gc,
                          "ms_per_step": ms}))
        return
    run(model, 8, 0, 8, False)  # warm-up: kernels, allocator, autotuning
    times = {"problem": [], "fix": [], "fix_raw": []}
    for _ in range(a.pairs):
        if a.compare == "batch":
            times["problem"].append(run(model, 8, 0, a.steps, False))
            raw = run(model, 32, 0, a.steps, False)
            times["fix_raw"].append(raw)
            times["fix"].append(raw / 4)
        elif a.compare == "checkpoint":
            times["problem"].append(run(model, 8, 0, a.steps, False, gc=True, reentrant=a.reentrant))
            times["fix"].append(run(model, 8, 0, a.steps, False, gc=False))
        else:
            times["problem"].append(run(model, 8, 0, a.steps, False))
            times["fix"].append(run(model, 8, 4, a.steps, False))
    mp, mf = statistics.median(times["problem"]), statistics.median(times["fix"])
    fix = {"batch": "batch 32 (time per 8 samples)", "workers": "4 DataLoader workers",
           "checkpoint": "no gradient checkpointing"}[a.compare]
    problem = ["--batch", "8", "--workers", "0"] + (["--gc"] if a.compare == "checkpoint" else [])
    problem += ["--reentrant"] if a.compare == "checkpoint" and a.reentrant else []
    print(json.dumps({"workload": "hf_lora", "problem_args": problem, "fix": fix,
                      "runs_ms": times, "problem_median_ms": mp, "fix_median_ms": mf,
                      "realized_saving_ms": mp - mf}))


if __name__ == "__main__":
    sys.exit(main())
