"""Records PyTorch's CUDA caching-allocator history and writes it for `stepscope memory`.

The contract (environment variables, file name, file format) is in docs/memory.md.
Nothing here imports torch at module level: the recorder is installed when the
program imports torch itself (see install_on_import), and recording starts at
the first CUDA use, so a process that never touches CUDA is left alone and no
CUDA context is created early on the wrong device.

Every entry point swallows its own errors (a profiler must never take the
training job down); problems are reported on stderr with a "stepscope:" prefix.
"""
import atexit
import json
import os
import signal
import sys
import threading
import time

FORMAT = "stepscope-torch-memory"
VERSION = 1
DEFAULT_MAX_ENTRIES = 1_000_000
MAX_FRAMES = 64  # innermost Python frames kept per stack

_lock = threading.RLock()
_state = {
    "installed": False,  # hooks in place
    "recording": False,  # _record_memory_history called
    "torch": None,
    "pid": None,
    "path": None,
    "max_entries": DEFAULT_MAX_ENTRIES,
    "ooms": [],
}


def _warn(msg):
    try:
        sys.stderr.write("stepscope: " + msg + "\n")
    except Exception:
        pass


def _expand(template, pid, environ):
    """The tokens of `stepscope profile -o`: %p pid, %h host, %q{VAR} env, %% ('%').

    Returns None for a pattern this side cannot expand (%n, a sequence number
    only the tracer knows)."""
    out, i = [], 0
    while i < len(template):
        c = template[i]
        if c != "%" or i + 1 >= len(template):
            out.append(c)
            i += 1
            continue
        n = template[i + 1]
        if n == "p":
            out.append(str(pid))
        elif n == "h":
            import socket
            out.append(socket.gethostname())
        elif n == "%":
            out.append("%")
        elif n == "q" and template[i + 2:i + 3] == "{" and "}" in template[i + 3:]:
            end = template.index("}", i + 3)
            out.append(environ.get(template[i + 3:end], ""))
            i = end + 1
            continue
        else:
            return None
        i += 2
    return "".join(out)


def _live_getenv(name):
    """getenv() of the C environment: the tracer may set variables after Python started."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.getenv.restype = ctypes.c_char_p
        v = libc.getenv(name.encode())
        return v.decode() if v else None
    except Exception:
        return None


def output_path(environ=None, pid=None, live_getenv=_live_getenv):
    """Where this process writes its PyTorch memory file (docs/memory.md, "Where")."""
    env = os.environ if environ is None else environ
    pid = os.getpid() if pid is None else pid
    explicit = env.get("STEPSCOPE_TORCH_MEMORY_PATH")
    if explicit and _expand(explicit, pid, env):
        return _expand(explicit, pid, env)
    exact = live_getenv("STEPSCOPE_TRACE_FILE") if live_getenv else None
    if exact:
        return exact + ".torch-memory.json"
    trace = env.get("STEPSCOPE_OUTPUT")
    if trace and _expand(trace, pid, env):
        t = _expand(trace, pid, env)
        if not t.endswith(".sqlite"):
            t += ".sqlite"
        return t + ".torch-memory.json"
    directory = env.get("STEPSCOPE_OUTPUT_DIR") or os.getcwd()
    return os.path.join(directory, "torch-memory-%d.json" % pid)


class _Interner:
    """Frames and stacks stored once; entries refer to stacks by index."""

    def __init__(self):
        self.frames, self.stacks = [], []
        self._frame_ids, self._stack_ids = {}, {}

    def stack(self, frames):
        if not frames:
            return -1
        ids = []
        for f in frames[:MAX_FRAMES]:
            key = (str(f.get("filename", "")), int(f.get("line", 0) or 0), str(f.get("name", "")))
            i = self._frame_ids.get(key)
            if i is None:
                i = self._frame_ids[key] = len(self.frames)
                self.frames.append(list(key))
            ids.append(i)
        key = tuple(ids)
        j = self._stack_ids.get(key)
        if j is None:
            j = self._stack_ids[key] = len(self.stacks)
            self.stacks.append(ids)
        return j


def compact(snapshot, reason="exit", pid=None, max_entries=0, counters=None, ooms=(),
            allocator=None, now_ns=None):
    """Re-encodes torch.cuda.memory._snapshot() as the PyTorch memory file (a dict).

    snapshot: {"segments": [...], "device_traces": [[...], ...], "allocator_settings": {...}}
    counters: {device: {"allocated", "reserved", "max_allocated", "max_reserved", "total"}}
    """
    intern = _Interner()
    devices = {}

    def device(d):
        d = int(d)
        if d not in devices:
            devices[d] = {"device": d, "segments": [], "trace": []}
        return devices[d]

    for seg in snapshot.get("segments", []) or []:
        blocks = []
        for b in seg.get("blocks", []) or []:
            size = int(b.get("size", 0))
            blocks.append([int(b.get("address", 0)), size, int(b.get("requested_size", size)),
                           str(b.get("state", "inactive")), intern.stack(b.get("frames"))])
        device(seg.get("device", 0))["segments"].append({
            "address": int(seg.get("address", 0)),
            "total_size": int(seg.get("total_size", 0)),
            "stream": int(seg.get("stream", 0) or 0),
            "segment_type": str(seg.get("segment_type", "large")),
            "is_expandable": bool(seg.get("is_expandable", False)),
            "stack": intern.stack(seg.get("frames")),
            "blocks": blocks,
        })
    for d, entries in enumerate(snapshot.get("device_traces", []) or []):
        if not entries:
            continue
        trace = device(d)["trace"]
        for e in entries:
            action = str(e.get("action", ""))
            # PyTorch stores the free device memory in place of the address for "oom".
            addr = e.get("device_free", 0) if action == "oom" else e.get("addr", 0)
            trace.append([action, int(e.get("time_us", 0) or 0), int(addr or 0),
                          int(e.get("size", 0) or 0), int(e.get("stream", 0) or 0),
                          intern.stack(e.get("frames"))])
    for d, c in (counters or {}).items():
        device(d)["counters"] = dict(c)
    settings = snapshot.get("allocator_settings") or {}
    alloc = dict(allocator or {})
    alloc.setdefault("expandable_segments", bool(settings.get("expandable_segments", False)))
    mss = settings.get("max_split_size", -1)
    # PyTorch reports "unlimited" as SIZE_MAX.
    alloc.setdefault("max_split_size", -1 if mss is None or mss < 0 or mss >= 2**63 - 1 else int(mss))
    return {
        "format": FORMAT,
        "version": VERSION,
        "reason": reason,
        "pid": os.getpid() if pid is None else pid,
        "written_unix_ns": time.time_ns() if now_ns is None else now_ns,
        "max_entries": int(max_entries or 0),
        "allocator": alloc,
        "frames": intern.frames,
        "stacks": intern.stacks,
        "devices": [devices[d] for d in sorted(devices)],
        "ooms": list(ooms),
    }


def write_file(doc, path):
    """Writes atomically (temp file + rename): a kill never leaves half a file."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)


def _counters(torch, devices):
    out = {}
    for d in devices:
        c = {}
        for key, fn in (("allocated", "memory_allocated"), ("reserved", "memory_reserved"),
                        ("max_allocated", "max_memory_allocated"),
                        ("max_reserved", "max_memory_reserved")):
            try:
                c[key] = int(getattr(torch.cuda, fn)(d))
            except Exception:
                pass
        try:
            c["total"] = int(torch.cuda.get_device_properties(d).total_memory)
        except Exception:
            pass
        out[d] = c
    return out


def dump(reason="explicit", path=None):
    """Writes the PyTorch memory file now; returns its path, or None when not recording."""
    with _lock:
        torch = _state["torch"]
        if not _state["recording"] or torch is None or _state["pid"] != os.getpid():
            return None
        try:
            snap = torch.cuda.memory._snapshot()
            devices = set()
            for seg in snap.get("segments", []) or []:
                devices.add(int(seg.get("device", 0)))
            for d, entries in enumerate(snap.get("device_traces", []) or []):
                if entries:
                    devices.add(d)
            doc = compact(snap, reason=reason, max_entries=_state["max_entries"],
                          counters=_counters(torch, sorted(devices)), ooms=_state["ooms"])
            path = path or _state["path"] or output_path()
            write_file(doc, path)
            return path
        except Exception as e:  # never take the job down
            _warn("could not write the PyTorch memory file: %r" % (e,))
            return None


def _on_oom(device, alloc, device_allocated, device_free):
    try:
        total = -1
        torch = _state["torch"]
        try:
            total = int(torch.cuda.get_device_properties(device).total_memory)
        except Exception:
            pass
        _state["ooms"].append({"device": int(device), "time_unix_ns": time.time_ns(),
                               "requested": int(alloc), "device_allocated": int(device_allocated),
                               "device_free": int(device_free), "total": total})
        dump("oom")
    except Exception as e:
        _warn("OOM observer failed: %r" % (e,))


def _start_recording():
    """Called once, right after CUDA is initialized."""
    with _lock:
        if _state["recording"]:
            return
        _state["recording"] = True
        torch = _state["torch"]
        mem = torch.cuda.memory
        n = _state["max_entries"]
        try:
            mem._record_memory_history(enabled="all", context="alloc", stacks="python",
                                       max_entries=n)
        except TypeError:  # PyTorch < 2.1: the legacy signature
            mem._record_memory_history(True, trace_alloc_max_entries=n,
                                       trace_alloc_record_context=True)
        attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
        if attach is not None:
            attach(_on_oom)


def _excepthook_chain(previous):
    def hook(etype, value, tb):
        try:
            if "OutOfMemory" in getattr(etype, "__name__", ""):
                dump("exception")
        finally:
            previous(etype, value, tb)
    return hook


def _install_sigterm():
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        return  # the program handles SIGTERM itself; its exit runs atexit

    def on_term(signum, frame):
        dump("signal")
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    signal.signal(signal.SIGTERM, on_term)


def install(torch, max_entries=None, path=None):
    """Hooks `torch` so that recording starts at the first CUDA use. Idempotent."""
    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
        _state["torch"] = torch
        _state["pid"] = os.getpid()
        _state["path"] = path
        env_n = os.environ.get("STEPSCOPE_TORCH_MEMORY_MAX_ENTRIES")
        _state["max_entries"] = int(max_entries or env_n or DEFAULT_MAX_ENTRIES)
        cuda = torch.cuda
        if cuda.is_initialized():
            _start_recording()
        else:
            original = cuda._lazy_init

            def _lazy_init():
                original()
                if not _state["recording"]:
                    cuda._lazy_init = original  # once is enough
                    _start_recording()
            cuda._lazy_init = _lazy_init
        atexit.register(dump, "exit")
        sys.excepthook = _excepthook_chain(sys.excepthook)
        _install_sigterm()


def enable(max_entries=None, path=None):
    """`import stepscope.torch`: imports torch and installs the recorder."""
    try:
        import torch
        install(torch, max_entries, path)
    except Exception as e:
        _warn("PyTorch memory recording disabled: %r" % (e,))


def install_on_import():
    """For the sitecustomize hook: install when (and if) the program imports torch."""
    from ._torch_import import on_torch_import
    on_torch_import(install, "PyTorch memory recording")
