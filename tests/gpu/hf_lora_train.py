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
ms/step is the median interval between consecutive on_step_end callbacks after 3 warm-up
steps. For --compare batch the fix's time is per 8 samples (batch-32 step / 4), so the saving
is what the same samples cost less. NVTX ranges "step N" (contiguous, from one step's end to
the next, so data loading is inside them) are emitted by a callback unless --no-nvtx.
"""
import argparse
import json
import statistics
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


def run(model, batch, workers, steps, nvtx, out_dir="/tmp/hf_lora_out", gc=False, reentrant=False):
    from transformers import Trainer, TrainerCallback, TrainingArguments

    # Gradient checkpointing is switched on the model itself (the Trainer's own flag would only
    # ever switch it on), so that one process can alternate both arms.
    if gc:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
        # Reentrant checkpointing backpropagates into a layer only through inputs that require
        # grad; the embeddings are frozen under LoRA (what the Trainer's own flag does too).
        if reentrant and not getattr(model, "_stepscope_grads_hook", None):
            model._stepscope_grads_hook = model.get_input_embeddings().register_forward_hook(
                lambda mod, inp, out: out.requires_grad_(True))
    else:
        model.gradient_checkpointing_disable()
    if not (gc and reentrant) and getattr(model, "_stepscope_grads_hook", None):
        model._stepscope_grads_hook.remove()
        model._stepscope_grads_hook = None
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

    args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=batch, max_steps=steps,
                             learning_rate=1e-4, bf16=True, logging_steps=10**6, save_strategy="no",
                             report_to="none", dataloader_num_workers=workers, disable_tqdm=True,
                             dataloader_pin_memory=True, seed=0)
    tr = Trainer(model=model, args=args, train_dataset=Tokens(batch * steps, 512, 32000), callbacks=[Timer()])
    tr.train()
    torch.cuda.synchronize()
    gaps = [b - a for a, b in zip(ends[3:], ends[4:])]
    return statistics.median(gaps) * 1e3


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
    a = ap.parse_args()
    model = build_model()
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
    main()
