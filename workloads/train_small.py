#!/usr/bin/env python3
"""stepscope's bundled demo workload: a small decoder-only transformer trained
for a few steps on random tokens, with NVTX ranges per step and phase (what
`make demo` profiles when a GPU is present). No download, no dataset.

    python3 workloads/train_small.py [--steps 20] [--batch 8] [--seq 512]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class DecoderBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--vocab", type=int, default=16384)
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    emb = nn.Embedding(a.vocab, a.dim)
    blocks = nn.Sequential(*[DecoderBlock(a.dim, 8) for _ in range(a.layers)])
    head = nn.Linear(a.dim, a.vocab, bias=False)
    model = nn.Sequential(emb, blocks, nn.LayerNorm(a.dim), head).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    nvtx = torch.cuda.nvtx
    t0 = None
    for step in range(a.steps):
        if step == 3:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        nvtx.range_push(f"step {step}")
        nvtx.range_push("data")
        tokens = torch.randint(0, a.vocab, (a.batch, a.seq + 1)).pin_memory().to(dev, non_blocking=True)
        nvtx.range_pop()
        nvtx.range_push("forward")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, a.vocab), tokens[:, 1:].reshape(-1))
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        nvtx.range_pop()
    torch.cuda.synchronize()
    timed = a.steps - 3
    ms = (time.perf_counter() - t0) / timed * 1e3 if timed > 0 else float("nan")
    print(f"train_small: {a.steps} steps, {ms:.2f} ms/step over the last {timed}, loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
