"""stepscope's sitecustomize hook (`stepscope profile --pytorch-memory`).

`stepscope profile` puts this directory first on PYTHONPATH so that Python
imports this file at startup. It always runs the sitecustomize it shadows (the
next one on sys.path, e.g. a distribution's or a virtualenv's), and does
nothing else unless STEPSCOPE_PYTORCH_MEMORY=1 (then it arranges for the
PyTorch memory recorder, stepscope._torch_memory, to be installed when the
program imports torch; docs/memory.md), STEPSCOPE_LOADER_RANGES=1 (NVTX
ranges around each DataLoader batch, stepscope._loader_ranges; docs/capture.md)
or STEPSCOPE_ITERATION_RANGES=1 (an NVTX range per training iteration, between
optimizer steps, stepscope._iteration_ranges).

The modules are loaded from the stepscope package directory under a private
name (_stepscope_runtime), never as `stepscope`: a program may have a module
or package of its own called stepscope, and `import stepscope` must find it.
"""
import os
import sys

_PRIVATE = "_stepscope_runtime"


def _chain_to_shadowed():
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin is None:
        return
    if os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # what site.py itself does with a failing sitecustomize
        sys.stderr.write("Error in sitecustomize (%s); set PYTHONVERBOSE for traceback:\n%s: %s\n"
                         % (spec.origin, type(e).__name__, e))
        return
    # Code that does `import sitecustomize` still finds the shadowed module's names.
    g = globals()
    for k, v in vars(module).items():
        if not k.startswith("__"):
            g.setdefault(k, v)


def _runtime_package():
    """The stepscope package directory as the package _PRIVATE, without running its
    __init__ and without touching sys.path."""
    package = sys.modules.get(_PRIVATE)
    if package is None:
        import types
        python_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        package = types.ModuleType(_PRIVATE)
        package.__path__ = [os.path.join(python_dir, "stepscope")]
        package.__package__ = _PRIVATE
        sys.modules[_PRIVATE] = package
    return package


def _enable(variable, module, what):
    if os.environ.get(variable) != "1":
        return
    try:
        import importlib
        _runtime_package()
        importlib.import_module(_PRIVATE + "." + module).install_on_import()
    except Exception as e:
        sys.stderr.write("stepscope: %s disabled: %r\n" % (what, e))


_chain_to_shadowed()
_enable("STEPSCOPE_PYTORCH_MEMORY", "_torch_memory", "PyTorch memory recording")
_enable("STEPSCOPE_LOADER_RANGES", "_loader_ranges", "DataLoader ranges")
_enable("STEPSCOPE_ITERATION_RANGES", "_iteration_ranges", "iteration ranges")
