"""stepscope's Python side, shipped with the profiler.

* `stepscope.open(trace)` returns a `Trace` whose methods give the trace as pandas
  DataFrames: kernels(), memcpy(), api(), nvtx(), gpu_ops(), steps(), stats(recipe),
  findings(), memory(), sql(query) (docs/python.md; needs pandas).
* `import stepscope.torch` records PyTorch's caching-allocator history and writes
  it beside the trace for `stepscope memory` (docs/memory.md).
* `stepscope.straggler` holds the runtime straggler monitor (docs/ranks.md).

Importing the package itself imports neither pandas nor torch: the runtime hooks
work in a training environment that has no pandas.
"""

__version__ = "0.1.0"


def open(path):  # noqa: A001 - the package's entry point, like io.open
    """Opens a stepscope trace (.sqlite) read-only and returns a stepscope.Trace."""
    from .trace import Trace
    return Trace(path)


def __getattr__(name):
    if name in ("Trace", "StepscopeError", "TraceNotFoundError"):
        from . import trace
        return getattr(trace, name)
    raise AttributeError(f"module 'stepscope' has no attribute {name!r}")
