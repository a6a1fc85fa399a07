"""stepscope's sitecustomize hook (`stepscope profile --pytorch-memory`).

`stepscope profile` puts this directory first on PYTHONPATH so that Python
imports this file at startup. It always runs the sitecustomize it shadows (the
next one on sys.path, e.g. a distribution's or a virtualenv's), and does
nothing else unless STEPSCOPE_PYTORCH_MEMORY=1 (then it arranges for the
PyTorch memory recorder, stepscope._torch_memory, to be installed when the
program imports torch; docs/memory.md) or STEPSCOPE_LOADER_RANGES=1 (NVTX
ranges around each DataLoader batch, stepscope._loader_ranges; docs/capture.md).
"""
import os
import sys


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


def _enable(variable, module, what):
    if os.environ.get(variable) != "1":
        return
    python_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if python_dir not in sys.path:
        sys.path.append(python_dir)
    try:
        import importlib
        importlib.import_module("stepscope." + module).install_on_import()
    except Exception as e:
        sys.stderr.write("stepscope: %s disabled: %r\n" % (what, e))


_chain_to_shadowed()
_enable("STEPSCOPE_PYTORCH_MEMORY", "_torch_memory", "PyTorch memory recording")
_enable("STEPSCOPE_LOADER_RANGES", "_loader_ranges", "DataLoader ranges")
