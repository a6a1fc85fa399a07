"""NVTX ranges "iteration N" between the program's optimizer steps: training steps on any
loop, with no code change.

Most training loops mark nothing: no "step N" range, no torch.profiler schedule. What every
one of them does once per training step is call its optimizer's step() (a Hugging Face
Trainer, accelerate, Lightning and a hand-written loop alike; with gradient accumulation,
once per accumulated step). `stepscope profile` (`--iteration-ranges on`, the default) sets
STEPSCOPE_ITERATION_RANGES=1 and puts the sitecustomize hook on PYTHONPATH; once the
program imports torch, a global optimizer step post-hook
(torch.optim.optimizer.register_optimizer_step_post_hook) ends the open range and starts
the next one each time optimizer.step() returns:

    iteration N  =  from the return of the (N-1)-th optimizer step to the return of the N-th

so the ranges tile the training loop: forward, backward, optimizer and whatever the loop
does between steps (loading the next batch, logging) fall in one iteration. Iteration 1 has
no range (its start is not known); the range open when the program ends is written as
unclosed, so it is an incomplete step. They are NVTX start/end ranges (not push/pop), so
they never interleave with the program's own push/pop ranges. The analysis takes them as
the steps of a trace that has no "step N" or ProfilerStep#N ranges (src/common/step_names.h).

Each step() of that optimizer also runs inside an NVTX push/pop range naming it and how it
runs, "optimizer.step AdamW(foreach=False, fused=None)" (its `foreach` and `fused` defaults
as the program set them): the rule per_param_optimizer reads which optimizer ran the
per-parameter (for-loop) way and where its time went.

Gradient clipping the same way: each call of torch.nn.utils.clip_grad_norm_ (a hand-written loop,
the Trainer and accelerate all call it through that name) runs inside an NVTX push/pop range
"clip_grad_norm_(foreach=False)" (the `foreach` the program passed; None when it passed none):
per_param_optimizer prices a clipping that runs one tensor at a time as it does the optimizer.

With `stepscope profile --steps N` (STEPSCOPE_WINDOW_STEPS="W:N", W the warm-up steps), the
same boundaries open and close the recording window: cudaProfilerStart (torch.cuda.profiler.start)
when the W-th optimizer step returns, just before "iteration W+1" starts, and cudaProfilerStop when
the (W+N)-th returns, just after "iteration W+N" ends; the launcher records only between them
(--capture-range cudaProfilerApi). The trace then holds iterations W+1 to W+N, whole.
With the tracer's default STEPSCOPE_DETACH=on (`--detach-outside-window on`), CUPTI is not in
the process outside the window: the hook calls the tracer's exported stepscope_attach() (found
through CUDA_INJECTION64_PATH, ctypes) just before cudaProfilerStart, and torch.cuda.synchronize()
just after cudaProfilerStop, whose return is where the tracer detaches CUPTI (docs/capture.md,
"Recording windows"); the steps after the window run as without the tracer's CUPTI.
The hook also times the iterations before the window (CUPTI not attached, nothing recorded)
and, right after the window opens, hands their durations to the trace in one NVTX mark,
"stepscope.untraced_steps_ns D2,...,DW" (UNTRACED_MARK): `analyze` and `whatif` price at that
host speed (src/analysis/whatif/untraced.h).

Where profile's DataLoader ranges are installed (stepscope._loader_ranges), the hook says so
in the trace with one NVTX mark, LOADER_MARK, at the first optimizer step's return and again
when a `--steps` window opens: a trace with the mark and no DataLoader range comes from a
program that took no batch from a DataLoader, whose waits at step starts are not data loading
(the rule data_loading).

Only one optimizer counts: the first one that steps (a GAN's second optimizer, or an
optimizer wrapped in another that steps the inner one, would otherwise add boundaries);
when it is garbage-collected, the next one to step takes its place. Cost: one Python call
and one NVTX start/end pair per training step. Nothing is installed where torch has no NVTX
binding (a CPU-only build) or no global optimizer hooks (torch < 2.0).
"""
import time
import weakref

PREFIX = "iteration "  # src/common/step_names.h kIterationPrefix
STEP_RANGE = "optimizer.step"  # the rule per_param_optimizer reads it
CLIP_RANGE = "clip_grad_norm_"  # and this one (src/analysis/rules/per_param_optimizer.cc)
UNTRACED_MARK = "stepscope.untraced_steps_ns "  # src/common/step_names.h kUntracedStepsMark
LOADER_MARK = "stepscope.loader_ranges on"  # src/common/step_names.h kLoaderRangesOnMark


class _Boundaries:
    """The optimizer step post-hook: one NVTX start/end range per training iteration."""

    def __init__(self, nvtx, window=None, profiler=None, cuda_ready=None, attach=None,
                 synchronize=None, loader_ranges=None):
        self._start, self._end = nvtx.range_start, nvtx.range_end
        # (first, last): record from the return of step `first` to that of step `last`.
        self._window, self._profiler = window, profiler
        # STEPSCOPE_DETACH=on: the tracer's stepscope_attach before the window's start, a
        # synchronize after its stop (the tracer detaches CUPTI at that call's return).
        self._attach, self._synchronize = attach, synchronize
        self._cuda_ready = cuda_ready or (lambda: True)
        self._push, self._pop = nvtx.range_push, nvtx.range_pop
        self._mark = getattr(nvtx, "mark", None)
        self._loader_ranges = loader_ranges or (lambda: False)  # DataLoader ranges installed?
        self._returns = []  # perf_counter_ns of each step's return before the window opens
        self._pushed = False
        self._anchor = None  # weakref to the optimizer whose steps are the boundaries
        self._steps = 0
        self._open = None

    def _counts(self, optimizer):
        if self._anchor is not None and self._anchor() is optimizer:
            return True
        if self._anchor is not None and self._anchor() is not None:
            return False  # another optimizer's step: not a boundary
        try:
            self._anchor = weakref.ref(optimizer)
        except TypeError:
            self._anchor = lambda o=optimizer: o
        return True

    def before(self, optimizer, args, kwargs):
        if self._counts(optimizer):
            self._push(step_range_name(optimizer))
            self._pushed = True

    def __call__(self, optimizer, args, kwargs):
        if not self._counts(optimizer):
            return
        if self._pushed:
            self._pop()
            self._pushed = False
        if self._open is not None:
            self._end(self._open)
        self._steps += 1
        if self._window and self._steps <= self._window[0]:
            self._returns.append(time.perf_counter_ns())
        opened = False
        if self._window and self._steps in self._window:
            opens = self._steps == self._window[0]
            if self._toggle(opens) and opens:
                self._mark_untraced()
                opened = True
        if self._steps == 1 or opened:
            self._mark_loader_ranges()
        self._open = self._start(PREFIX + str(self._steps + 1))

    def _mark_loader_ranges(self):
        try:
            if self._mark is not None and self._loader_ranges():
                self._mark(LOADER_MARK)
        except Exception:  # noqa: BLE001 - the traced program must never see it
            pass

    def _mark_untraced(self):
        # Iterations 2..W, from one return to the next: what the loop takes with nothing recorded.
        durations = [b - a for a, b in zip(self._returns, self._returns[1:])]
        if durations and self._mark is not None:
            self._mark(UNTRACED_MARK + ",".join(str(d) for d in durations))

    def _toggle(self, on):
        # Only where the program already uses CUDA (cudaProfilerStart would create a context
        # in a CPU loop); a failure leaves the window as it is, never the program's concern.
        try:
            if self._cuda_ready():
                if on and self._attach is not None:
                    self._attach()
                (self._profiler.start if on else self._profiler.stop)()
                if not on and self._synchronize is not None:
                    self._synchronize()
                return True
        except Exception:  # noqa: BLE001 - the traced program must never see it
            pass
        return False


def step_range_name(optimizer):
    """ "optimizer.step AdamW(foreach=False, fused=None)": the class and how it was asked to run."""
    defaults = getattr(optimizer, "defaults", None) or {}
    how = ", ".join("%s=%s" % (k, defaults[k]) for k in ("foreach", "fused") if k in defaults)
    return "%s %s(%s)" % (STEP_RANGE, type(optimizer).__name__, how)


def clip_range_name(args, kwargs):
    """ "clip_grad_norm_(foreach=False)": how the program asked it to run (the 5th argument)."""
    foreach = kwargs.get("foreach", args[4] if len(args) > 4 else None)
    return "%s(foreach=%s)" % (CLIP_RANGE, foreach)


def wrap_clipping(nvtx, utils):
    """torch.nn.utils.clip_grad_norm_ inside a range naming how it runs; False where absent."""
    import functools
    original = getattr(utils, "clip_grad_norm_", None)
    if original is None:
        return False
    if getattr(original, "_stepscope_clip_range", False):
        return True
    push, pop = nvtx.range_push, nvtx.range_pop

    @functools.wraps(original)
    def clip_grad_norm_(*args, **kwargs):
        try:
            push(clip_range_name(args, kwargs))
        except Exception:  # noqa: BLE001 - the traced program must never see it
            return original(*args, **kwargs)
        try:
            return original(*args, **kwargs)
        finally:
            pop()

    clip_grad_norm_._stepscope_clip_range = True
    utils.clip_grad_norm_ = clip_grad_norm_
    return True


def loader_ranges_installed(torch):
    """stepscope._loader_ranges wraps DataLoader iterators' __next__ (its flag on the wrapper)."""
    try:
        from torch.utils.data import dataloader
        return bool(getattr(dataloader._BaseDataLoaderIter.__next__, "_stepscope_loader_range", False))
    except Exception:  # noqa: BLE001 - an unusual torch: say nothing
        return False


def window_from_env(value):
    """STEPSCOPE_WINDOW_STEPS "W:N" -> (W, W + N): the optimizer steps whose returns open and
    close the recording window; None when unset or malformed (the launcher checks it)."""
    try:
        warmup, steps = (int(x) for x in (value or "").split(":"))
    except ValueError:
        return None
    return (warmup, warmup + steps) if warmup >= 0 and steps > 0 else None


def tracer_attach(environ):
    """STEPSCOPE_DETACH=on: the injected tracer's stepscope_attach (ctypes, the library the
    driver loaded, CUDA_INJECTION64_PATH); None when off, absent or not loadable."""
    path = environ.get("CUDA_INJECTION64_PATH")
    if environ.get("STEPSCOPE_DETACH") != "on" or not path:
        return None
    try:
        import ctypes
        return ctypes.CDLL(path).stepscope_attach
    except (OSError, AttributeError):
        return None


def install(torch):
    import os
    if not hasattr(torch._C, "_nvtx"):
        return False  # a CPU-only build: no NVTX to emit into
    from torch.optim import optimizer as optimizer_module
    register = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    register_pre = getattr(optimizer_module, "register_optimizer_step_pre_hook", None)
    if register is None or register_pre is None:
        return False
    if getattr(optimizer_module, "_stepscope_iteration_ranges", False):
        return True
    window = window_from_env(os.environ.get("STEPSCOPE_WINDOW_STEPS"))
    profiler = attach = synchronize = None
    if window:
        from torch.cuda import profiler
        attach = tracer_attach(os.environ)
        if os.environ.get("STEPSCOPE_DETACH") == "on":
            synchronize = torch.cuda.synchronize
    boundaries = _Boundaries(torch.cuda.nvtx, window, profiler,
                             getattr(torch.cuda, "is_initialized", None), attach, synchronize,
                             lambda: loader_ranges_installed(torch))
    register_pre(boundaries.before)
    register(boundaries)
    try:
        wrap_clipping(torch.cuda.nvtx, torch.nn.utils)
    except Exception:  # noqa: BLE001 - an unusual torch: the steps still work
        pass
    optimizer_module._stepscope_iteration_ranges = True
    return True


def install_on_import():
    """For the sitecustomize hook: install when (and if) the program imports torch."""
    from ._torch_import import on_torch_import
    on_torch_import(install, "iteration ranges")
