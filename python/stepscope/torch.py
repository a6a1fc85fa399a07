"""stepscope's PyTorch helpers.

`import stepscope.torch` turns on PyTorch memory recording for `stepscope memory`:
it records the CUDA caching allocator's history (torch.cuda.memory._record_memory_history)
from the first CUDA use on, and writes the compact PyTorch memory file (docs/memory.md) at
exit, on an out-of-memory error and on SIGTERM. `stepscope profile --pytorch-memory` does
the same without any change to the script. Set STEPSCOPE_PYTORCH_MEMORY=0 to import this
module only for StragglerMonitor (recording the allocator history costs step time:
docs/PERFORMANCE.md).

`stepscope.torch.StragglerMonitor` scores the job's ranks live (docs/ranks.md).
"""
import os

from stepscope._torch_memory import dump, enable  # noqa: F401
from stepscope.straggler import StragglerMonitor  # noqa: F401

if os.environ.get("STEPSCOPE_PYTORCH_MEMORY", "1") != "0":
    enable()
