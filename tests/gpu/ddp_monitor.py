#!/usr/bin/env python3
"""Runs a training script under stepscope.torch.StragglerMonitor with no edit
to the script: the workload's own NVTX `step N` ranges mark the steps.

    torchrun --nproc-per-node 2 ddp_monitor.py train_gpt.py --ddp ...
Environment: MONITOR=0 runs the same wrapper without the monitor (the
baseline of the overhead measurement); MONITOR_COMM=1 also times NCCL
collectives (TORCH_NCCL_ENABLE_TIMING=1 and a completion hook; default off);
MONITOR_INTERVAL_S (default 2).
"""
import logging
import os
import runpy
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
os.environ.setdefault("STEPSCOPE_PYTORCH_MEMORY", "0")
comm_timing = os.environ.get("MONITOR_COMM", "0") == "1"
if os.environ.get("MONITOR", "1") != "0" and comm_timing:
    # Collective timing must be on before the process group exists (docs/ranks.md).
    os.environ["TORCH_NCCL_ENABLE_TIMING"] = "1"
logging.basicConfig(level=logging.INFO, format="%(name)s rank" + os.environ.get("RANK", "?") + ": %(message)s")

import torch  # noqa: E402

use_monitor = os.environ.get("MONITOR", "1") != "0"
monitor = None
stack = []
push0, pop0 = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop


def push(name):
    global monitor
    if use_monitor and name.startswith("step "):
        if monitor is None:
            from stepscope.torch import StragglerMonitor
            monitor = StragglerMonitor(interval_s=float(os.environ.get("MONITOR_INTERVAL_S", "2")), warmup_steps=3,
                                       comm_timing=comm_timing)
        monitor.step_begin()
    stack.append(name)
    return push0(name)


def pop():
    name = stack.pop() if stack else ""
    r = pop0()
    if monitor is not None and name.startswith("step "):
        monitor.step_end()
    return r


torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop = push, pop
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
