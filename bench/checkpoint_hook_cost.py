#!/usr/bin/env python3
"""Figure: what activation checkpointing costs the host in the FORWARD (docs/PERFORMANCE.md, what-if).

Why: a checkpointed forward (torch.utils.checkpoint, use_reentrant=False) runs every op that saves a
tensor through the saved-tensor pack hook. In traces of `train_gpt.py --preset small --checkpoint` the
host gap per CUDA call in the forward is 2.5-3x the un-checkpointed one (H200: 37-51 us vs 13.6 us),
yet the host samples put almost none of it in Python hook frames: the cost sits under the op's own
Python line. This measures it directly on the machine, without a tracer, so the `recompute` rule's
price for the forward can be checked against the real thing.

What it runs: the 12 blocks of train_gpt's `small` preset (its Block class, imported from the
workload), a batch small enough that the GPU never holds the host back (1 x 128 tokens, 240 launches
per forward, below the launch queue), host time of one forward (no sync inside; a sync after), in
interleaved rounds of these variants:
  plain          grad enabled, as an un-checkpointed training forward
  checkpoint     torch.utils.checkpoint(block, use_reentrant=False) per block (train_gpt --checkpoint)
  ckpt_nodet     the same with determinism_check="none" (no per-tensor metadata)
  hooks_identity saved_tensors_hooks(pack=lambda x: x, unpack=lambda x: x) around plain blocks
  reentrant      torch.utils.checkpoint(block, use_reentrant=True)
  no_grad        torch.no_grad(): nothing saved
each under bf16 autocast (train_gpt's default) and without it. Prints per variant the median host
ms per forward and us per block, its difference to `plain` per block, and under bf16 per kernel
launch: a Block launches 20 kernels there (the calibration traces of `--preset small`: 251 kernel
launches per forward, 20 in each of the 12 blocks, plus 2 memsets per block). Without autocast the
weight casts go, so the per-launch figure is given under bf16 only.

  python3 bench/checkpoint_hook_cost.py --workload train_gpt.py [--rounds 15] [--json OUT.json]

--model llama measures the same on a workload not written here: the Hugging Face Llama + PEFT LoRA
model of tests/gpu/hf_lora_train.py (8 decoder layers, whole model forward, 1 x 128 tokens), with
transformers' own switch (gradient_checkpointing_enable, use_reentrant False / True) for the
checkpoint variants; per-launch figures are not printed there (launches per layer differ).
--backward times the backward instead (host time of loss.backward(), the GPU never the bottleneck at
this size): identity hooks minus plain there is what unpacking every saved tensor through a Python
hook costs, the backward half of the hook mechanism.
"""
import argparse
import contextlib
import importlib.util
import json
import statistics
import time

BF16_LAUNCHES_PER_BLOCK = 20  # kernel launches of one train_gpt Block under bf16 autocast (see above)


def hooks_ctx(torch, kind):
    """The context a variant's pass runs in."""
    if kind == "hooks_identity":
        return torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    if kind == "no_grad":
        return torch.no_grad()
    return contextlib.nullcontext()


def time_variants(torch, a, variants, run_pass, amp=True, setup=lambda v: None):
    """Interleaved rounds (the first two warm up): per variant, the median over rounds of each
    round's median host ms of one pass: the forward, or with --backward loss.backward()."""
    times = {v: [] for v in variants}
    for r in range(a.rounds + 2):
        for v in variants:
            setup(v)
            per = []
            for _ in range(a.reps):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                with hooks_ctx(torch, v), torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                    out = run_pass(v)
                t1 = time.perf_counter()
                if a.backward:
                    out.float().sum().backward()
                    t0, t1 = t1, time.perf_counter()
                del out
                per.append(t1 - t0)
            if r >= 2:
                times[v].append(statistics.median(per) * 1e3)
    return times


def write_json(torch, a, res):
    """--json: the results with the machine and which pass ms_per_forward timed."""
    res["_machine"] = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "date": time.strftime("%Y-%m-%d"),
                       "pass": "backward" if a.backward else "forward"}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True, help="path of train_gpt.py (its Block class is used)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=10, help="forwards per variant per round (median taken)")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--json")
    ap.add_argument("--model", choices=["train_gpt", "llama"], default="train_gpt")
    ap.add_argument("--backward", action="store_true",
                    help="time the backward's host time instead (from loss.backward() to its return; "
                         "checkpoint's includes its recompute, hooks_identity's the unpack hooks)")
    a = ap.parse_args()

    import torch
    from torch.utils.checkpoint import checkpoint

    if a.model == "llama":
        return llama(a)

    spec = importlib.util.spec_from_file_location("train_gpt_mod", a.workload)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    layers, d, h = 12, 768, 12
    blocks = torch.nn.ModuleList(mod.Block(d, h) for _ in range(layers)).cuda()
    x0 = torch.randn(1, a.tokens, d, device="cuda", requires_grad=True)

    def fwd(kind):
        x = x0
        for b in blocks:
            if kind == "checkpoint":
                x = checkpoint(b, x, use_reentrant=False)
            elif kind == "ckpt_nodet":
                x = checkpoint(b, x, use_reentrant=False, determinism_check="none")
            elif kind == "reentrant":
                x = checkpoint(b, x, use_reentrant=True)
            else:
                x = b(x)
        return x

    variants = ["plain", "checkpoint", "ckpt_nodet", "hooks_identity", "reentrant"] + ([] if a.backward else ["no_grad"])
    res = {}
    for amp in (True, False):
        times = time_variants(torch, a, variants, fwd, amp=amp)
        tag = "bf16" if amp else "fp32"
        base = statistics.median(times["plain"])
        res[tag] = {}
        for v in variants:
            m = statistics.median(times[v])
            over = (m - base) * 1e3 / layers  # us per block over plain
            res[tag][v] = {"ms_per_forward": m, "us_per_block": m * 1e3 / layers,
                           "us_per_block_over_plain": over, "rounds_ms": times[v]}
            res[tag][v]["ratio_to_plain"] = m / base
            line = (f"{tag} {'bwd' if a.backward else 'fwd'} {v:15s} {m:7.3f} ms/pass  {m * 1e3 / layers:7.1f} us/block  {over:+7.1f} us/block"
                    f"  x{m / base:.3f}")
            if amp:
                res[tag][v]["us_per_launch_over_plain"] = over / BF16_LAUNCHES_PER_BLOCK
                line += f"  {over / BF16_LAUNCHES_PER_BLOCK:+6.2f} us/launch"
            print(line + " over plain", flush=True)
    write_json(torch, a, res)


def llama(a):
    import os
    import sys

    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
    from hf_lora_train import build_model

    model = build_model()
    model.train()
    layers = 8
    ids = torch.randint(0, 32000, (1, a.tokens), device="cuda")
    emb = model.get_input_embeddings()
    hook = None

    def setup(v):
        nonlocal hook
        if hook is not None:
            hook.remove()
            hook = None
        if v in ("checkpoint", "reentrant"):
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": v == "reentrant"})
            if v == "reentrant":  # as hf_lora_train.py: inputs that require grad (frozen embeddings)
                hook = emb.register_forward_hook(lambda mod, inp, out: out.requires_grad_(True))
        else:
            model.gradient_checkpointing_disable()

    variants = ["plain", "checkpoint", "hooks_identity", "reentrant"] + ([] if a.backward else ["no_grad"])
    times = time_variants(torch, a, variants, lambda v: model(input_ids=ids).logits, setup=setup)
    setup("plain")
    base = statistics.median(times["plain"])
    res = {"llama_bf16": {}}
    for v in variants:
        m = statistics.median(times[v])
        over = (m - base) * 1e3 / layers
        res["llama_bf16"][v] = {"ms_per_forward": m, "us_per_layer_over_plain": over, "ratio_to_plain": m / base,
                                "rounds_ms": times[v]}
        print(f"llama bf16 {'bwd' if a.backward else 'fwd'} {v:15s} {m:7.3f} ms/pass  {over:+8.1f} us/layer over plain  x{m / base:.3f}",
              flush=True)
    write_json(torch, a, res)


if __name__ == "__main__":
    main()
