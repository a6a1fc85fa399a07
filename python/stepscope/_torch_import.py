"""Run callbacks once the program has imported torch (for the sitecustomize hook).

`on_torch_import(fn, what)` calls fn(torch) at once if torch is imported already, else
right after `import torch` finishes, through one meta-path finder shared by every
caller (two finders for the same module would see only the first one run). A callback
that raises is reported in one line ("stepscope: WHAT disabled: ...") and the program
goes on; the others still run.
"""
import sys

_pending = []  # (fn, what) waiting for `import torch`
_finder = None


def _warn(what, e):
    try:
        sys.stderr.write("stepscope: %s disabled: %r\n" % (what, e))
    except Exception:
        pass


def _call(fn, what, torch):
    try:
        fn(torch)
    except Exception as e:
        _warn(what, e)


class _TorchImportFinder:
    """A one-shot meta-path finder: lets torch import normally, then runs the callbacks."""

    def find_spec(self, name, path=None, target=None):
        global _finder
        if name != "torch":
            return None
        import importlib.util
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        _finder = None
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_call(module):
            exec_module(module)
            todo = list(_pending)
            del _pending[:]
            for fn, what in todo:
                _call(fn, what, module)
        spec.loader.exec_module = exec_then_call
        return spec


def on_torch_import(fn, what):
    global _finder
    if "torch" in sys.modules:
        _call(fn, what, sys.modules["torch"])
        return
    _pending.append((fn, what))
    if _finder is None:
        _finder = _TorchImportFinder()
        sys.meta_path.insert(0, _finder)
