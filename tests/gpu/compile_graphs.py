#!/usr/bin/env python3
"""A launch-bound training step under torch.compile, with and without CUDA graphs.

A small GPT-style decoder (4 layers x 256, seq 128, batch 4, bf16 autocast, fused AdamW)
whose forward+backward is compiled with torch.compile: mode "default" (Inductor fusion, one
launch per fused kernel) vs mode "reduce-overhead" (the same kernels replayed as CUDA graphs).
The fix for a launch-bound step is the graphs; the what-if calibration checks the predicted
saving of "graph this range" against this.

  --mode default|reduce-overhead [--steps 100]   one run; prints {"ms_per_step": ...}
  --compare --pairs 4                            both modes in this process, alternating blocks
NVTX "step N" ranges around each step unless --no-nvtx.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d // self.h).unbind(2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Net(nn.Module):
    def __init__(self, layers=4, d=256, h=4, vocab=8192, seq=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, seq, d))
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.vocab = vocab

    def forward(self, idx, tgt):
        x = self.tok(idx) + self.pos[:, : idx.shape[1]]
        for b in self.blocks:
            x = b(x)
        return F.cross_entropy(self.head(self.ln(x)).float().view(-1, self.vocab), tgt.reshape(-1))


class Trainer:
    def __init__(self, mode):
        torch.manual_seed(0)
        self.mode = mode
        self.net = Net().cuda()
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=1e-4, fused=True)
        self.fwd = torch.compile(self.net, mode=mode)
        g = torch.Generator(device="cuda").manual_seed(0)
        self.data = [torch.randint(0, 8192, (4, 129), device="cuda", generator=g) for _ in range(8)]
        self.i = 0

    def step(self, nvtx):
        if nvtx:
            torch.cuda.nvtx.range_push(f"step {self.i}")
        if self.mode == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        t = self.data[self.i % len(self.data)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = self.fwd(t[:, :-1], t[:, 1:])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        if nvtx:
            torch.cuda.nvtx.range_pop()
        self.i += 1

    def block(self, n, nvtx=False):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            self.step(nvtx)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="default", choices=["default", "reduce-overhead"])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--nvtx", action=argparse.BooleanOptionalAction, default=True)
    a = ap.parse_args()
    if not a.compare:
        t = Trainer(a.mode)
        t.block(10)  # compile + warm-up
        print(json.dumps({"workload": "compile_graphs", "mode": a.mode, "ms_per_step": t.block(a.steps, a.nvtx)}))
        return
    p, f = Trainer("default"), Trainer("reduce-overhead")
    p.block(10)
    f.block(10)
    times = {"problem": [], "fix": []}
    for _ in range(a.pairs):
        times["problem"].append(p.block(a.steps))
        times["fix"].append(f.block(a.steps))
    mp, mf = statistics.median(times["problem"]), statistics.median(times["fix"])
    print(json.dumps({"workload": "compile_graphs", "problem_args": ["--mode", "default"],
                      "fix": 'torch.compile(mode="reduce-overhead") (CUDA graphs)', "runs_ms": times,
                      "problem_median_ms": mp, "fix_median_ms": mf, "realized_saving_ms": mp - mf}))


if __name__ == "__main__":
    main()
