"""stepscope's Python helpers, shipped with the profiler.

`import stepscope.torch` records PyTorch's caching-allocator history and writes
it beside the trace for `stepscope memory` (docs/memory.md).
"""
