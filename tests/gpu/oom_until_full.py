#!/usr/bin/env python3
"""Allocates 2 GiB tensors from a named function until CUDA runs out of memory.

    python3 oom_until_full.py [--kill]   # --kill: SIGKILL itself right after the OOM
"""
import os
import signal
import sys

import torch


def grab_activation_buffers(chunks):
    # One line the OOM evidence must point at.
    chunks.append(torch.empty(2 << 30, dtype=torch.uint8, device="cuda"))


def main():
    chunks = []
    torch.cuda.nvtx.range_push("fill memory")
    try:
        while True:
            grab_activation_buffers(chunks)
    except torch.OutOfMemoryError as e:
        print(f"OOM after {len(chunks)} x 2 GiB: {str(e).splitlines()[0]}", flush=True)
        if "--kill" in sys.argv:
            os.kill(os.getpid(), signal.SIGKILL)
        torch.cuda.nvtx.range_pop()
        sys.exit(1)


if __name__ == "__main__":
    main()
