"""`import stepscope.torch` turns on PyTorch memory recording for `stepscope memory`.

It records the CUDA caching allocator's history (torch.cuda.memory._record_memory_history)
from the first CUDA use on, and writes the compact PyTorch memory file (docs/memory.md) at
exit, on an out-of-memory error and on SIGTERM. `stepscope profile --pytorch-memory` does
the same without any change to the script.
"""
from stepscope._torch_memory import dump, enable  # noqa: F401

enable()
