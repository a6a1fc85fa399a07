#!/usr/bin/env python3
"""Runs a training script and then prints PyTorch's own peak counters, the
independent reference for `stepscope memory`:

    python3 torch_peaks.py train_gpt.py [args...]
    -> ... the script's output ...
    -> TORCH_PEAKS {"max_reserved": N, "max_allocated": N}
"""
import json
import runpy
import sys

import torch

script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    if e.code not in (None, 0):
        raise
print("TORCH_PEAKS " + json.dumps({"max_reserved": torch.cuda.max_memory_reserved(),
                                   "max_allocated": torch.cuda.max_memory_allocated()}), flush=True)
