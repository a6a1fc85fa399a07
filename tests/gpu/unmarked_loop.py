#!/usr/bin/env python3
"""A training loop written the usual way, with no NVTX of ours: a Hugging Face model built
from its config (no download), random tokens, bf16 autocast, AdamW. For checking that
`stepscope profile` finds the steps of a loop that marks none (the iteration ranges) and
that every command agrees on them (tests/gpu/unmarked_steps_check.sh).

usage: unmarked_loop.py [--model gpt2|llama] [--optim fused|foreach|forloop] [--steps N]
                        [--batch B] [--seq S] [--layers L] [--accumulate K]
                        [--loader-work-ms W] [--torch-profiler]
--loader-work-ms: batches come from a DataLoader (0 workers) whose batches cost W ms of
Python each (a tokenising loader); --torch-profiler: the loop runs under torch.profiler
(CPU and CUDA activities, no export), the peer arm of bench/peer_overhead.py.
Prints one line: model=... optim=... steps=N ms_per_step=M (the mean over the steps after
the first 5, timed inside the loop: one synchronize before step 5 and one at the end, none in
between, as a user's loop has none).
"""
import argparse
import time

import torch


def build(model, layers):
    import transformers
    if model == "gpt2":
        cfg = transformers.GPT2Config(n_layer=layers, n_embd=768, n_head=12, vocab_size=50257,
                                      n_positions=1024)
        return transformers.GPT2LMHeadModel(cfg)
    cfg = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=1024, intermediate_size=2816,
                                   num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                                   max_position_embeddings=2048)
    return transformers.LlamaForCausalLM(cfg)


def optimizer(params, kind):
    if kind == "fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if kind == "foreach":
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)
    return torch.optim.AdamW(params, lr=1e-4, foreach=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="gpt2", choices=["gpt2", "llama"])
    ap.add_argument("--optim", default="fused", choices=["fused", "foreach", "forloop"])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--accumulate", type=int, default=1)
    ap.add_argument("--loader-work-ms", type=float, default=0)
    ap.add_argument("--torch-profiler", action="store_true")
    a = ap.parse_args()
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            train(a)
    else:
        train(a)


class TokenisingDataset(torch.utils.data.Dataset):
    """Samples that cost `work_ms` of Python each, as a tokeniser in __getitem__ does."""

    def __init__(self, vocab, seq, work_ms):
        self.vocab, self.seq, self.work_s = vocab, seq, work_ms / 1e3

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        end = time.perf_counter() + self.work_s
        x = i
        while time.perf_counter() < end:
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        return torch.randint(0, self.vocab, (self.seq,))


def train(a):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = build(a.model, a.layers).to(dev)
    opt = optimizer(model.parameters(), a.optim)
    vocab = model.config.vocab_size
    loader = None
    if a.loader_work_ms > 0:
        ds = TokenisingDataset(vocab, a.seq, a.loader_work_ms / a.batch)
        loader = iter(torch.utils.data.DataLoader(ds, batch_size=a.batch, num_workers=0))
    warm = 5 if a.steps > 6 else 0
    t0 = time.perf_counter()
    for step in range(a.steps):
        if step == warm:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        for _ in range(a.accumulate):
            if loader is not None:
                x = next(loader).to(dev)
            else:
                x = torch.randint(0, vocab, (a.batch, a.seq), device=dev)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=x, labels=x).loss / a.accumulate
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / (a.steps - warm)
    print("model=%s optim=%s steps=%d ms_per_step=%.3f" % (a.model, a.optim, a.steps, ms), flush=True)


if __name__ == "__main__":
    main()
