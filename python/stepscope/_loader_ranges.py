"""NVTX ranges around each batch a PyTorch DataLoader hands the training loop.

`stepscope profile` (`--loader-ranges on`, the default) sets STEPSCOPE_LOADER_RANGES=1 and
puts the sitecustomize hook on PYTHONPATH; once the program imports torch, every
`next()` on a DataLoader iterator (torch.utils.data.dataloader._BaseDataLoaderIter.__next__,
which the single- and multi-process iterators share) runs inside an NVTX range named
RANGE on the calling thread. The trace then holds how long the training thread spent
getting each batch — loading it (0 workers) or taking it from the workers — which the
`data_loading` rule prices instead of the whole host-wait gap before the step's first GPU
work (in a Hugging Face Trainer most of that gap is the Trainer's own work between steps:
docs/PERFORMANCE.md, "Where it stands"). Cost: one NVTX push and pop per batch (not measured on its own).
Nothing is installed where torch has no NVTX binding (a CPU-only build).
"""
import functools

RANGE = "DataLoader.__next__"


def install(torch):
    nvtx = torch.cuda.nvtx
    if not hasattr(torch._C, "_nvtx"):
        return False  # a CPU-only build: no NVTX to emit into
    from torch.utils.data import dataloader
    it = dataloader._BaseDataLoaderIter
    original = it.__next__
    if getattr(original, "_stepscope_loader_range", False):
        return True
    push, pop = nvtx.range_push, nvtx.range_pop

    @functools.wraps(original)
    def __next__(self):
        push(RANGE)
        try:
            return original(self)
        finally:
            pop()

    __next__._stepscope_loader_range = True
    it.__next__ = __next__
    return True


def install_on_import():
    """For the sitecustomize hook: install when (and if) the program imports torch."""
    from ._torch_import import on_torch_import
    on_torch_import(install, "DataLoader ranges")
