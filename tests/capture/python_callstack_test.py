#!/usr/bin/env python3
"""The tracer's in-process Python stack at a CUDA call, without a GPU: Python
calls, through ctypes, the same code the API callback runs
(tests/capture/pystack_probe.cc), and the stack that comes out of the ring
must name this file's functions and lines, root first. Also prints the cost
of one stack read (docs/host.md quotes it).

usage: python_callstack_test.py BUILD_DIR
"""
import ctypes
import gc
import os
import sys
import threading
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
PROBE = os.path.join(BUILD, "tests", "libpystack_probe.so")
SUPPORTED = sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))


def load():
    lib = ctypes.CDLL(PROBE)
    lib.probe_stack.restype = ctypes.c_char_p
    lib.probe_cost_ns.restype = ctypes.c_double
    lib.probe_cost_ns.argtypes = [ctypes.c_int]
    lib.probe_own_walks_agree.restype = ctypes.c_int
    lib.probe_own_walks_agree.argtypes = [ctypes.POINTER(ctypes.c_int)]
    return lib


def frames(lib):
    text = lib.probe_stack().decode()
    return [tuple(line.split("|")) for line in text.splitlines()]


class Model:
    def training_step(self, lib):
        return self.sync(lib)

    def sync(self, lib):
        return frames(lib)  # the "loss.item()" line


def depth_n(lib, n):
    if n == 0:
        return lib.probe_cost_ns(2000)
    return depth_n(lib, n - 1)


class Layer:
    """A level entered through __call__, as an nn.Module is: a C call between two Python frames
    (on 3.12 a shim frame on the C stack)."""

    def __call__(self, lib, n, leaf):
        return depth_call(lib, n, leaf)


def depth_call(lib, n, leaf=None):
    if n == 0:
        return leaf(lib) if leaf else lib.probe_cost_ns(2000)
    return Layer()(lib, n - 1, leaf)


@unittest.skipUnless(SUPPORTED and os.path.exists(PROBE), "needs CPython 3.11-3.13 and the probe library")
class PythonCallstackTest(unittest.TestCase):
    def test_stack_names_the_caller(self):
        lib = load()
        got = Model().training_step(lib)
        names = [f[0] for f in got]
        self.assertEqual(names[-3:], ["Model.training_step", "Model.sync", "frames"], got)
        self.assertEqual(names[0], "<module>")
        me = os.path.abspath(__file__)
        self.assertTrue(all(os.path.abspath(f[1]) == me for f in got[-3:]), got)
        lines = {f[0]: int(f[2]) for f in got}
        src = open(__file__).read().splitlines()
        self.assertIn("frames(lib)", src[lines["Model.sync"] - 1])
        self.assertIn("self.sync(lib)", src[lines["Model.training_step"] - 1])
        self.assertIn("lib.probe_stack()", src[lines["frames"] - 1])

    def test_other_thread(self):
        lib = load()
        out = {}

        def worker():
            out["frames"] = Model().training_step(lib)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        names = [f[0] for f in out["frames"]]
        self.assertTrue(names[-4].endswith("<locals>.worker"), names)
        self.assertEqual(names[-3:], ["Model.training_step", "Model.sync", "frames"], names)
        self.assertNotIn("<module>", names)  # a thread's stack starts at its bootstrap

    def test_reused_code_address(self):
        # A code object freed and another allocated at its address (same
        # size): the stack names the new one, not the names the tracer sent
        # for the old one (issue 36: code objects were keyed by address only).
        lib = load()
        template = "def {name}(lib, frames):\n    return frames(lib)\n"

        def make(name, filename):
            ns = {}
            exec(compile(template.format(name=name), filename, "exec"), ns)
            return ns[name]

        keep = []
        for _ in range(50):
            decoy = make("decoy", "decoy.py")
            address = id(decoy.__code__)
            self.assertEqual([f[0] for f in decoy(lib, frames)][-2:], ["decoy", "frames"])
            del decoy
            gc.collect()
            fresh = make("fresh", "fresh.py")
            if id(fresh.__code__) == address:
                break
            keep.append(fresh)
        else:
            self.skipTest("the allocator did not reuse the code object's address")
        got = fresh(lib, frames)
        self.assertEqual(got[-2][:2], ("fresh", "fresh.py"), got)
        self.assertEqual(got[-1][0], "frames", got)
        self.assertEqual(int(got[-2][2]), 2, got)

    def test_windowed_walk_is_the_reference(self):
        # Through __call__ levels (3.12/3.13: shim frames on this thread's C stack, which the
        # windowed walk copies directly) the frames, stamps and lines equal the per-frame walk's,
        # and the walk reads no page window for those shims: the thread state, the leaf's
        # window and the stamps (in page windows through the C stack it took 7 or more).
        lib = load()
        reads = ctypes.c_int(-1)
        got = depth_call(lib, 30, lambda lib: lib.probe_own_walks_agree(ctypes.byref(reads)))
        self.assertGreater(got, 30)
        self.assertLessEqual(reads.value, 4, "process_vm_readv calls of one walk")

    def test_cost(self):
        lib = load()
        ns = depth_n(lib, 30)
        print(f"\nin-process Python stack, ~35 frames deep: {ns / 1000:.1f} us per CUDA call", file=sys.stderr)
        self.assertLess(ns, 1_000_000)  # a sanity bound, not a benchmark
        ns = depth_call(lib, 30)
        print(f"in-process Python stack, 30 levels through __call__ (~65 frames): {ns / 1000:.1f} us per CUDA call",
              file=sys.stderr)
        self.assertLess(ns, 1_000_000)


if __name__ == "__main__":
    unittest.main()
