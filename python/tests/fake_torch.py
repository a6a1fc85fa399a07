"""Writes a fake `torch` package (just what stepscope._torch_memory and _loader_ranges touch) into a
directory, for tests on machines without PyTorch. Its _snapshot() has the documented
shape of torch.cuda.memory._snapshot(): segments with blocks, device_traces with
alloc/free_requested/free_completed/segment_alloc/oom actions, frames."""
import os

MiB = 1 << 20
SEG = 0x7F0000000000


def fake_snapshot(recording=True):
    """A small allocator state: one 20 MiB segment, two tensors, one free, one OOM."""
    fr_model = {"filename": "/work/model.py", "line": 42, "name": "forward"}
    fr_torch = {"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py",
                "line": 125, "name": "forward"}
    fr_train = {"filename": "/work/train.py", "line": 30, "name": "main"}
    stack = [fr_torch, fr_model, fr_train]
    big = 9 * MiB + MiB // 2
    t0 = 1_700_000_000_000_000
    traces = [[
        {"action": "segment_alloc", "addr": SEG, "size": 20 * MiB, "stream": 0, "time_us": t0 + 5000, "frames": []},
        {"action": "alloc", "addr": SEG, "size": big, "stream": 0, "time_us": t0 + 15000, "frames": stack},
        {"action": "alloc", "addr": SEG + big, "size": big, "stream": 0, "time_us": t0 + 20000,
         "frames": [fr_model, fr_train]},
        {"action": "free_requested", "addr": SEG, "size": big, "stream": 0, "time_us": t0 + 65000, "frames": stack},
        {"action": "free_completed", "addr": SEG, "size": big, "stream": 0, "time_us": t0 + 66000, "frames": stack},
        {"action": "oom", "device_free": 1000000, "size": 64 * MiB, "stream": 0, "time_us": t0 + 80000,
         "frames": stack},
    ]] if recording else [[]]
    segments = [{
        "device": 0, "address": SEG, "total_size": 20 * MiB, "allocated_size": 10 * MiB + MiB // 2,
        "active_size": 10 * MiB + MiB // 2, "requested_size": big, "stream": 0, "segment_type": "large",
        "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
        "blocks": [
            {"address": SEG, "size": big, "requested_size": 0, "state": "inactive", "frames": []},
            {"address": SEG + big, "size": 10 * MiB + MiB // 2, "requested_size": big,
             "state": "active_allocated", "frames": [fr_model, fr_train]},
        ],
    }]
    return {"segments": segments, "device_traces": traces,
            "allocator_settings": {"expandable_segments": False, "max_split_size": 2**64 - 1}}


_CUDA = '''
import types
_initialized = False
lazy_init_calls = 0
def is_initialized():
    return _initialized
def synchronize(d=None):
    nvtx.events.append(("synchronize",))
def _lazy_init():
    global _initialized, lazy_init_calls
    lazy_init_calls += 1
    _initialized = True
def memory_allocated(d=None): return 10 * (1 << 20) + (1 << 19)
def memory_reserved(d=None): return 20 * (1 << 20)
def max_memory_allocated(d=None): return 20 * (1 << 20)
def max_memory_reserved(d=None): return 20 * (1 << 20)
def get_device_properties(d):
    return types.SimpleNamespace(total_memory=80 * (1 << 30))
from . import memory
from . import nvtx
from . import profiler
'''

_PROFILER = '''
from . import nvtx
def start():
    nvtx.events.append(("profiler_start",))
def stop():
    nvtx.events.append(("profiler_stop",))
'''

_NVTX = '''
events = []  # ("push", name) / ("pop",) / ("start", name, id) / ("end", id) / ("mark", msg) in call order
def mark(msg):
    events.append(("mark", msg))
def range_push(msg):
    events.append(("push", msg))
def range_pop():
    events.append(("pop",))
def range_start(msg):
    events.append(("start", msg, len(events)))
    return len(events) - 1
def range_end(range_id):
    events.append(("end", range_id))
'''

_OPTIMIZER = '''
_pre_hooks, _post_hooks = [], []
def register_optimizer_step_pre_hook(hook):
    _pre_hooks.append(hook)
def register_optimizer_step_post_hook(hook):
    _post_hooks.append(hook)
class Optimizer:
    def __init__(self, **defaults):
        self.defaults = defaults
    def step(self):
        for hook in _pre_hooks:
            hook(self, (), {})
        for hook in _post_hooks:
            hook(self, (), {})
class AdamW(Optimizer):
    pass
'''

_DATALOADER = '''
class _BaseDataLoaderIter:
    def __init__(self, items):
        self.items = list(items)
    def __iter__(self):
        return self
    def __next__(self):
        """The next batch."""
        if not self.items:
            raise StopIteration
        return self.items.pop(0)
class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    pass
'''

_NN_UTILS = '''
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradient norm."""
    from torch.cuda import nvtx
    nvtx.events.append(("clip", foreach))
    return 1.0
'''

_MEMORY = '''
import fake_torch_data
history = None
def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0):
    global history
    history = dict(enabled=enabled, context=context, stacks=stacks, max_entries=max_entries)
def _snapshot():
    return fake_torch_data.fake_snapshot(recording=history is not None)
'''

_C = '''
_nvtx = object()
observers = []
def _cuda_attach_out_of_memory_observer(f):
    observers.append(f)
'''


def write_fake_torch(root):
    os.makedirs(os.path.join(root, "torch", "cuda"), exist_ok=True)
    os.makedirs(os.path.join(root, "torch", "utils", "data"), exist_ok=True)
    os.makedirs(os.path.join(root, "torch", "optim"), exist_ok=True)
    os.makedirs(os.path.join(root, "torch", "nn", "utils"), exist_ok=True)
    files = {
        "torch/__init__.py": ("from . import _C\nfrom . import cuda\nfrom .utils.data import dataloader\n"
                              "from . import optim\nfrom . import nn\nimport torch.nn.utils\n"),
        "torch/nn/__init__.py": "",
        "torch/nn/utils/__init__.py": _NN_UTILS,
        "torch/optim/__init__.py": "from . import optimizer\nfrom .optimizer import Optimizer, AdamW\n",
        "torch/optim/optimizer.py": _OPTIMIZER,
        "torch/cuda/nvtx.py": _NVTX,
        "torch/cuda/profiler.py": _PROFILER,
        "torch/utils/__init__.py": "",
        "torch/utils/data/__init__.py": "",
        "torch/utils/data/dataloader.py": _DATALOADER,
        "torch/_C.py": _C,
        "torch/cuda/__init__.py": _CUDA,
        "torch/cuda/memory.py": _MEMORY,
    }
    for rel, text in files.items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    with open(__file__) as src, open(os.path.join(root, "fake_torch_data.py"), "w") as dst:
        dst.write(src.read())
