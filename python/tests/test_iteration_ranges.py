"""stepscope._iteration_ranges through the sitecustomize hook (profile --iteration-ranges), on
a fake torch; and the hook next to a program's own `stepscope` module."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_torch_memory import HookTest, run_python  # noqa: E402


class IterationRangesTest(HookTest):
    LOOP = ("import torch\n"
            "a, b = torch.optim.AdamW(foreach=False, fused=None), torch.optim.Optimizer()\n"
            "for i in range(3):\n"
            "    a.step()\n"
            "    b.step()  # a second optimizer: not a boundary\n"
            "print(torch.cuda.nvtx.events)\n")

    def test_one_range_between_consecutive_steps_of_the_first_optimizer(self):
        p = run_python(self.LOOP, {"STEPSCOPE_ITERATION_RANGES": "1"}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        # Iteration 1 has no range (its start is unknown); the last one stays open.
        # Each step of the first optimizer in a push/pop range naming it and how it runs.
        step = [("push", "optimizer.step AdamW(foreach=False, fused=None)"), ("pop",)]
        self.assertEqual(p.stdout.strip(), str(
            step + [("start", "iteration 2", 2)] +
            step + [("end", 2), ("start", "iteration 3", 6)] +
            step + [("end", 6), ("start", "iteration 4", 10)]))

    def test_clipping_runs_in_a_range_naming_its_foreach(self):
        code = ("import torch\n"
                "torch.optim.AdamW().step()\n"
                "f = torch.nn.utils.clip_grad_norm_\n"
                "print(f([], 1.0, foreach=False), f([], 1.0, 2.0, False, True), f([], 1.0), f.__name__)\n"
                "print([e for e in torch.cuda.nvtx.events if e[0] in ('push', 'pop', 'clip')][2:])\n")
        p = run_python(code, {"STEPSCOPE_ITERATION_RANGES": "1"}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        first, events = p.stdout.strip().splitlines()
        self.assertEqual(first, "1.0 1.0 1.0 clip_grad_norm_")
        self.assertEqual(eval(events), [
            ("push", "clip_grad_norm_(foreach=False)"), ("clip", False), ("pop",),
            ("push", "clip_grad_norm_(foreach=True)"), ("clip", True), ("pop",),
            ("push", "clip_grad_norm_(foreach=None)"), ("clip", None), ("pop",)])

    def test_a_new_optimizer_takes_over_when_the_first_is_gone(self):
        code = ("import gc, torch\n"
                "a = torch.optim.Optimizer()\n"
                "a.step()\n"
                "del a; gc.collect()\n"
                "b = torch.optim.Optimizer()\n"
                "b.step()\n"
                "print([e[1] for e in torch.cuda.nvtx.events if e[0] == 'start'])\n")
        p = run_python(code, {"STEPSCOPE_ITERATION_RANGES": "1"}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "['iteration 2', 'iteration 3']")

    def test_steps_window_opens_and_closes_on_the_boundaries(self):
        # profile --steps 2 --warmup-steps 1: recording from the return of step 1 to that of
        # step 3, so the trace holds iterations 2 and 3 whole.
        code = ("import torch\n"
                "torch.cuda._lazy_init()\n"
                "a = torch.optim.AdamW()\n"
                "for i in range(4):\n"
                "    a.step()\n"
                "print([e[0] if e[0].startswith('profiler') else e[1] for e in torch.cuda.nvtx.events\n"
                "       if e[0] in ('start', 'end', 'profiler_start', 'profiler_stop')])\n")
        env = {"STEPSCOPE_ITERATION_RANGES": "1", "STEPSCOPE_WINDOW_STEPS": "1:2"}
        p = run_python(code, env, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = eval(p.stdout.strip())  # names of the starts, ids of the ends, profiler calls
        starts = [x for x in got if isinstance(x, str)]
        self.assertEqual(starts, ["profiler_start", "iteration 2", "iteration 3", "profiler_stop",
                                  "iteration 4", "iteration 5"], got)
        # The stop comes after iteration 3's end, before iteration 4's start.
        self.assertEqual(got.index("profiler_stop"), got.index("iteration 4") - 1)
        self.assertIsInstance(got[got.index("profiler_stop") - 1], int)

    def test_steps_window_attaches_before_and_synchronizes_after(self):
        # STEPSCOPE_DETACH=on (the launcher's default with --steps): the tracer's
        # stepscope_attach right before cudaProfilerStart, a synchronize right after
        # cudaProfilerStop (where the tracer detaches CUPTI); off: neither, as before.
        code = ("import ctypes\n"
                "class Lib:\n"
                "    def stepscope_attach(self):\n"
                "        import torch\n"
                "        torch.cuda.nvtx.events.append(('attach',))\n"
                "        return 1\n"
                "ctypes.CDLL = lambda path: Lib()\n"
                "import torch\n"
                "torch.cuda._lazy_init()\n"
                "a = torch.optim.AdamW()\n"
                "for i in range(4):\n"
                "    a.step()\n"
                "print([e[0] for e in torch.cuda.nvtx.events if e[0] not in ('push', 'pop')])\n")
        env = {"STEPSCOPE_ITERATION_RANGES": "1", "STEPSCOPE_WINDOW_STEPS": "1:2",
               "CUDA_INJECTION64_PATH": "/the/tracer.so", "STEPSCOPE_DETACH": "on"}
        p = run_python(code, env, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(eval(p.stdout.strip()),
                         ["attach", "profiler_start", "start", "end", "start", "end", "profiler_stop",
                          "synchronize", "start", "end", "start"])
        p = run_python(code, dict(env, STEPSCOPE_DETACH="off"), self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(eval(p.stdout.strip()),
                         ["profiler_start", "start", "end", "start", "end", "profiler_stop", "start",
                          "end", "start"])
        # No tracer library to load (or none exporting it): the window opens all the same.
        p = run_python(code.replace("ctypes.CDLL = lambda path: Lib()\n", ""), env, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(eval(p.stdout.strip())[:2], ["profiler_start", "start"])

    def test_steps_window_hands_over_the_untraced_iterations(self):
        # profile --steps 2 --warmup-steps 3: iterations 2 and 3 ran before the window, timed
        # from one step's return to the next; one mark with their durations right after the
        # window opens (the trace records it), none later.
        code = ("import torch, time\n"
                "torch.cuda._lazy_init()\n"
                "a = torch.optim.AdamW()\n"
                "for i in range(6):\n"
                "    time.sleep(0.01)\n"
                "    a.step()\n"
                "print([e for e in torch.cuda.nvtx.events if e[0] in ('mark', 'profiler_start')])\n")
        env = {"STEPSCOPE_ITERATION_RANGES": "1", "STEPSCOPE_WINDOW_STEPS": "3:2"}
        p = run_python(code, env, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = eval(p.stdout.strip())
        self.assertEqual([e[0] for e in got], ["profiler_start", "mark"], got)
        prefix, durations = got[1][1].split(" ")
        self.assertEqual(prefix, "stepscope.untraced_steps_ns")
        ns = [int(d) for d in durations.split(",")]
        self.assertEqual(len(ns), 2)
        self.assertTrue(all(9_000_000 <= d < 2_000_000_000 for d in ns), ns)

    def test_marks_that_dataloader_ranges_are_on(self):
        # With profile's DataLoader ranges installed (STEPSCOPE_LOADER_RANGES=1), one mark at the
        # first step's return says so; without them, none. A --steps window repeats it when it
        # opens (the steps before are not recorded).
        code = ("import torch\n"
                "a = torch.optim.AdamW()\n"
                "for i in range(3):\n"
                "    a.step()\n"
                "print([e for e in torch.cuda.nvtx.events if e[0] == 'mark'])\n")
        on = {"STEPSCOPE_ITERATION_RANGES": "1", "STEPSCOPE_LOADER_RANGES": "1"}
        p = run_python(code, on, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(eval(p.stdout.strip()), [("mark", "stepscope.loader_ranges on")])
        p = run_python(code, {"STEPSCOPE_ITERATION_RANGES": "1"}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(eval(p.stdout.strip()), [])
        window = ("import torch\n"
                  "torch.cuda._lazy_init()\n"
                  "a = torch.optim.AdamW()\n"
                  "for i in range(4):\n"
                  "    a.step()\n"
                  "print([e[0] if e[0].startswith('profiler') else e[1] for e in torch.cuda.nvtx.events\n"
                  "       if e[0] in ('mark', 'profiler_start')])\n")
        p = run_python(window, dict(on, STEPSCOPE_WINDOW_STEPS="2:1"), self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = eval(p.stdout.strip())
        self.assertEqual([g for g in got if not g.startswith("stepscope.untraced")],
                         ["stepscope.loader_ranges on", "profiler_start", "stepscope.loader_ranges on"])

    def test_steps_window_never_starts_cuda(self):
        # A loop that never used CUDA: no cudaProfilerStart (it would create a context).
        code = ("import torch\n"
                "a = torch.optim.AdamW()\n"
                "for i in range(4):\n"
                "    a.step()\n"
                "print([e for e in torch.cuda.nvtx.events if e[0].startswith('profiler')])\n")
        env = {"STEPSCOPE_ITERATION_RANGES": "1", "STEPSCOPE_WINDOW_STEPS": "1:2"}
        p = run_python(code, env, self.path)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "[]"), p.stderr)
        # Nor a mark: there is no window to hand the durations to.
        p = run_python(code.replace("e[0].startswith('profiler')", "e[0] == 'mark'"), env, self.path)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "[]"), p.stderr)

    def test_off_without_the_switch(self):
        p = run_python(self.LOOP, {}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "[]")

    def test_a_program_with_its_own_stepscope_module(self):
        # The hook loads its modules under a private name: the program's own
        # `stepscope` is the one `import stepscope` finds, and the hooks still work.
        own = os.path.join(self.dir, "own")
        os.makedirs(own)
        with open(os.path.join(own, "stepscope.py"), "w") as f:
            f.write("VALUE = 42\n")
        code = ("import stepscope, torch\n"
                "torch.optim.Optimizer().step()\n"
                "from torch.utils.data import dataloader as dl\n"
                "list(dl._SingleProcessDataLoaderIter([1]))\n"
                "print(stepscope.VALUE, stepscope.__file__.endswith('own/stepscope.py'),"
                " len(torch.cuda.nvtx.events))\n")
        env = {"STEPSCOPE_ITERATION_RANGES": "1", "STEPSCOPE_LOADER_RANGES": "1"}
        p = run_python(code, env, self.path + [own])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        # 1 step range (push, pop), the DataLoader ranges' mark, 1 iteration start, 2 DataLoader
        # push/pop pairs
        self.assertEqual(p.stdout.split(), ["42", "True", "8"])


if __name__ == "__main__":
    unittest.main()
