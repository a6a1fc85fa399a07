#!/usr/bin/env python3
"""Runs a workload that uses torch.profiler with with_stack=True forced on (the
comparison arm of the host-capture cost figure, tests/gpu/host_check.py).

usage: torch_with_stack.py WORKLOAD.py [ARGS...]   (e.g. train_gpt.py --torch-profiler t.json)
"""
import runpy
import sys

import torch.profiler as tp

_Profile = tp.profile


class _WithStack(_Profile):
    def __init__(self, *args, **kwargs):
        kwargs["with_stack"] = True
        super().__init__(*args, **kwargs)


tp.profile = _WithStack
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
