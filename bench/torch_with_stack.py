#!/usr/bin/env python3
"""Runs a workload that uses torch.profiler with with_stack=True forced on (the
comparison arm of the host-capture cost figure, tests/gpu/host_check.py).

usage: torch_with_stack.py WORKLOAD.py [ARGS...]   (e.g. train_gpt.py --torch-profiler t.json)
With STEPSCOPE_BENCH_NO_EXPORT=1 the Chrome-trace export is skipped (a timing arm needs the
recording, not the file: 100 steps with stacks take tens of seconds to write).
"""
import os
import runpy
import sys

import torch.profiler as tp

_Profile = tp.profile


class _WithStack(_Profile):
    def __init__(self, *args, **kwargs):
        kwargs["with_stack"] = True
        super().__init__(*args, **kwargs)


if os.environ.get("STEPSCOPE_BENCH_NO_EXPORT") == "1":
    _WithStack.export_chrome_trace = lambda self, path: None

tp.profile = _WithStack
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
