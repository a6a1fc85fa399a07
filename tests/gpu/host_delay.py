#!/usr/bin/env python3
"""Runs a training script with a pure host-side delay on one rank: before the
`optimizer` NVTX range of every step, rank DELAY_RANK sleeps DELAY_MS on the
host (no GPU work), the straggler that `train_gpt.py --slow-ms` does not make
(its loop launches GPU matmuls). No edit to the script.

    DELAY_RANK=1 DELAY_MS=5 torchrun --nproc-per-node 2 host_delay.py train_gpt.py --ddp ...
"""
import os
import runpy
import sys
import time

import torch

rank = int(os.environ.get("RANK", "0"))
delay_s = float(os.environ.get("DELAY_MS", "5")) / 1e3 if rank == int(os.environ.get("DELAY_RANK", "1")) else 0.0
push0 = torch.cuda.nvtx.range_push


def push(name):
    if delay_s and name == "optimizer":
        time.sleep(delay_s)
    return push0(name)


torch.cuda.nvtx.range_push = push
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
