"""Tests of python/stepscope (the PyTorch memory recorder) and the sitecustomize hook,
with a fake torch package (PyTorch is not installed on CI)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
HOOK_DIR = os.path.join(PYTHON_DIR, "stepscope_hook")
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, HERE)

from stepscope import _torch_memory as tm  # noqa: E402
import fake_torch  # noqa: E402

MiB = 1 << 20


def load(path):
    with open(path) as f:
        return json.load(f)


class CompactTest(unittest.TestCase):
    def test_compact_interns_frames_and_keeps_every_action(self):
        doc = tm.compact(fake_torch.fake_snapshot(), reason="exit", pid=7, max_entries=100,
                         counters={0: {"max_allocated": 5}}, now_ns=123)
        self.assertEqual(doc["format"], "stepscope-torch-memory")
        self.assertEqual(doc["version"], 1)
        self.assertEqual((doc["pid"], doc["max_entries"], doc["written_unix_ns"]), (7, 100, 123))
        # Three distinct frames, interned in order of appearance (segments first):
        # model.py, train.py (a block's stack), then linear.py (the history's).
        self.assertEqual(doc["frames"], [["/work/model.py", 42, "forward"],
                                         ["/work/train.py", 30, "main"],
                                         ["/usr/lib/python3/dist-packages/torch/nn/modules/linear.py",
                                          125, "forward"]])
        # Two distinct stacks, innermost frame first: [model, train] and [torch, model, train].
        self.assertEqual(doc["stacks"], [[0, 1], [2, 0, 1]])
        (dev,) = doc["devices"]
        self.assertEqual(dev["device"], 0)
        self.assertEqual(dev["counters"], {"max_allocated": 5})
        actions = [e[0] for e in dev["trace"]]
        self.assertEqual(actions, ["segment_alloc", "alloc", "alloc", "free_requested",
                                   "free_completed", "oom"])
        self.assertEqual(dev["trace"][0][5], -1)  # no frames
        self.assertEqual(dev["trace"][1], ["alloc", 1_700_000_000_015_000, fake_torch.SEG,
                                           9 * MiB + MiB // 2, 0, 1])
        # oom: the free device memory takes the address's place.
        self.assertEqual(dev["trace"][5][2], 1000000)
        self.assertEqual(dev["trace"][5][3], 64 * MiB)
        (seg,) = dev["segments"]
        self.assertEqual(seg["total_size"], 20 * MiB)
        self.assertEqual(seg["blocks"][1][3], "active_allocated")
        self.assertEqual(seg["blocks"][1][4], 0)
        # SIZE_MAX max_split_size means unlimited.
        self.assertEqual(doc["allocator"], {"expandable_segments": False, "max_split_size": -1})

    def test_output_path_contract(self):
        none = lambda name: None  # noqa: E731  (no tracer in this process)
        self.assertEqual(tm.output_path({"STEPSCOPE_OUTPUT": "/o/trace-%p.sqlite"}, pid=42,
                                        live_getenv=none),
                         "/o/trace-42.sqlite.torch-memory.json")
        # The tracer's pattern syntax: %q{VAR}, %%; ".sqlite" appended like the tracer does.
        self.assertEqual(tm.output_path({"STEPSCOPE_OUTPUT": "/o/r%q{RANK}-100%%", "RANK": "3"},
                                        pid=1, live_getenv=none),
                         "/o/r3-100%.sqlite.torch-memory.json")
        self.assertEqual(tm.output_path({"STEPSCOPE_TORCH_MEMORY_PATH": "/x/m-%p.json"}, pid=5,
                                        live_getenv=none), "/x/m-5.json")
        # %n (a sequence number only the tracer knows): fall back to the output directory.
        self.assertEqual(tm.output_path({"STEPSCOPE_OUTPUT": "/o/t-%n", "STEPSCOPE_OUTPUT_DIR": "/o"},
                                        pid=9, live_getenv=none), "/o/torch-memory-9.json")
        self.assertEqual(tm.output_path({"STEPSCOPE_OUTPUT_DIR": "/out"}, pid=9, live_getenv=none),
                         "/out/torch-memory-9.json")
        # The exact file named by the tracer inside the process wins over the pattern.
        self.assertEqual(tm.output_path({"STEPSCOPE_OUTPUT": "/o/t-%p"}, pid=9,
                                        live_getenv=lambda n: "/o/t-9-2.sqlite"),
                         "/o/t-9-2.sqlite.torch-memory.json")

    def test_write_file_is_atomic_and_valid_json(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "sub", "m.json")
            tm.write_file({"a": 1}, p)
            self.assertEqual(load(p), {"a": 1})
            self.assertEqual(os.listdir(os.path.join(d, "sub")), ["m.json"])


def run_python(code, env_extra, pythonpath):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("STEPSCOPE_"):
            del env[k]
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    return subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


class HookTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.fake = os.path.join(self.dir, "fake")
        fake_torch.write_fake_torch(self.fake)
        # A sitecustomize that ours shadows: it must still run.
        self.other = os.path.join(self.dir, "other")
        os.makedirs(self.other)
        with open(os.path.join(self.other, "sitecustomize.py"), "w") as f:
            f.write("import os\nOTHER_RAN = True\nos.environ['OTHER_SITECUSTOMIZE'] = '1'\n")
        self.path = [HOOK_DIR, self.other, self.fake]
        self.trace = os.path.join(self.dir, "out", "trace.sqlite")

    def tearDown(self):
        self.tmp.cleanup()

    def test_noop_without_the_switch_but_chains(self):
        code = ("import os, sitecustomize, torch\n"
                "print(os.environ.get('OTHER_SITECUSTOMIZE'), sitecustomize.OTHER_RAN,"
                " torch.cuda._lazy_init.__module__)\n"
                "torch.cuda._lazy_init()\n")
        p = run_python(code, {"STEPSCOPE_OUTPUT": self.trace}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["1", "True", "torch.cuda"])
        self.assertFalse(os.path.exists(self.trace + ".torch-memory.json"))

    def test_records_from_first_cuda_use_and_writes_at_exit(self):
        code = ("import torch\n"
                "assert torch.cuda.memory.history is None  # not before CUDA is used\n"
                "torch.cuda._lazy_init()\n"
                "h = torch.cuda.memory.history\n"
                "print(h['enabled'], h['context'], h['stacks'], h['max_entries'],"
                " len(torch._C.observers))\n")
        p = run_python(code, {"STEPSCOPE_PYTORCH_MEMORY": "1", "STEPSCOPE_OUTPUT": self.trace,
                              "STEPSCOPE_TORCH_MEMORY_MAX_ENTRIES": "5000"}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["all", "alloc", "python", "5000", "1"])
        doc = load(self.trace + ".torch-memory.json")
        self.assertEqual(doc["reason"], "exit")
        self.assertEqual(doc["max_entries"], 5000)
        (dev,) = doc["devices"]
        self.assertEqual(len(dev["trace"]), 6)
        self.assertEqual(dev["counters"]["max_allocated"], 20 * MiB)
        self.assertEqual(dev["counters"]["total"], 80 * (1 << 30))

    def test_oom_observer_writes_before_a_kill(self):
        # The process dies right after the OOM (os._exit: no atexit): the file is there.
        code = ("import os, torch\n"
                "torch.cuda._lazy_init()\n"
                "torch._C.observers[0](0, 64 << 20, 11010048, 1000000)\n"
                "os._exit(9)\n")
        p = run_python(code, {"STEPSCOPE_PYTORCH_MEMORY": "1", "STEPSCOPE_OUTPUT": self.trace},
                       self.path)
        self.assertEqual(p.returncode, 9, p.stderr)
        doc = load(self.trace + ".torch-memory.json")
        self.assertEqual(doc["reason"], "oom")
        (oom,) = doc["ooms"]
        self.assertEqual((oom["device"], oom["requested"], oom["device_free"], oom["total"]),
                         (0, 64 * MiB, 1000000, 80 * (1 << 30)))

    def test_no_file_when_cuda_is_never_used(self):
        p = run_python("import torch\n", {"STEPSCOPE_PYTORCH_MEMORY": "1",
                                          "STEPSCOPE_OUTPUT": self.trace}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(self.trace + ".torch-memory.json"))

    def test_explicit_import_enables(self):
        out = os.path.join(self.dir, "explicit.json")
        code = ("import stepscope.torch, torch\n"
                "torch.cuda._lazy_init()\n")
        p = run_python(code, {"STEPSCOPE_TORCH_MEMORY_PATH": out}, [PYTHON_DIR, self.fake])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(load(out)["format"], "stepscope-torch-memory")


class LoaderRangesTest(HookTest):
    """stepscope._loader_ranges through the sitecustomize hook (profile --loader-ranges)."""

    LOOP = ("import torch\n"
            "from torch.utils.data import dataloader as dl\n"
            "it = dl._SingleProcessDataLoaderIter([1, 2])\n"
            "print(list(it), dl._BaseDataLoaderIter.__next__.__doc__)\n"
            "print(torch.cuda.nvtx.events)\n")

    def test_a_range_around_every_next_even_the_last(self):
        p = run_python(self.LOOP, {"STEPSCOPE_LOADER_RANGES": "1"}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        batches, events = p.stdout.splitlines()
        self.assertEqual(batches, "[1, 2] The next batch.")  # StopIteration still ends the loop
        r = "('push', 'DataLoader.__next__'), ('pop',)"
        self.assertEqual(events, "[" + ", ".join([r] * 3) + "]")
        self.assertEqual(p.stderr, "")

    def test_off_without_the_switch(self):
        p = run_python(self.LOOP, {}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines()[1], "[]")

    def test_with_the_memory_recorder_both_install(self):
        code = self.LOOP + "torch.cuda._lazy_init()\nprint(torch.cuda.memory.history['enabled'])\n"
        p = run_python(code, {"STEPSCOPE_LOADER_RANGES": "1", "STEPSCOPE_PYTORCH_MEMORY": "1",
                              "STEPSCOPE_OUTPUT": self.trace}, self.path)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertIn("DataLoader.__next__", lines[1])
        self.assertEqual(lines[2], "all")

    def test_a_torch_without_nvtx_is_left_alone(self):
        # A CPU-only build has no torch._C._nvtx: nothing installed, nothing said.
        code = ("import torch\n"
                "del torch._C._nvtx\n"
                "from stepscope import _loader_ranges\n"
                "print(_loader_ranges.install(torch), torch.utils.data.dataloader._BaseDataLoaderIter.__next__.__name__,"
                " hasattr(torch.utils.data.dataloader._BaseDataLoaderIter.__next__, '_stepscope_loader_range'))\n")
        p = run_python(code, {}, [PYTHON_DIR, self.fake])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["False", "__next__", "False"])
        self.assertEqual(p.stderr, "")

    def test_a_failing_callback_warns_once_and_the_others_run(self):
        code = ("from stepscope import _torch_import\n"
                "def bad(t):\n"
                "    raise RuntimeError('moved')\n"
                "seen = []\n"
                "_torch_import.on_torch_import(bad, 'DataLoader ranges')\n"
                "_torch_import.on_torch_import(lambda t: seen.append(t.__name__), 'other')\n"
                "import torch\n"
                "_torch_import.on_torch_import(lambda t: seen.append('now'), 'late')  # torch already in\n"
                "print(seen)\n")
        p = run_python(code, {}, [PYTHON_DIR, self.fake])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "['torch', 'now']")
        self.assertEqual(p.stderr, "stepscope: DataLoader ranges disabled: RuntimeError('moved')\n")


class CppReaderTest(unittest.TestCase):
    """What the Python side writes, the C++ side reads: peaks from a compacted fake snapshot."""

    def test_stepscope_memory_reads_the_written_file(self):
        build = os.environ.get("STEPSCOPE_BUILD_DIR")
        if not build or not os.path.exists(os.path.join(build, "bin", "stepscope")):
            self.skipTest("STEPSCOPE_BUILD_DIR with bin/stepscope not set (run through ctest)")
        src = os.path.dirname(PYTHON_DIR)
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "t.sqlite")
            subprocess.run([os.path.join(build, "tests", "make_trace"), trace,
                            os.path.join(src, "tests", "diff", "fixtures", "memory", "torch_small.sql")],
                           check=True)
            doc = tm.compact(fake_torch.fake_snapshot(), counters={0: {"max_allocated": 20 * MiB,
                                                                       "max_reserved": 20 * MiB}})
            tm.write_file(doc, trace + ".torch-memory.json")
            p = subprocess.run([os.path.join(build, "bin", "stepscope"), "memory", "--section",
                                "pytorch", "--format", "json", trace],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = {r["series"]: r for r in json.loads(p.stdout)["pytorch"]}
            # 9.5 MiB + the whole 10.5 MiB remainder (1 MiB would remain: not split).
            self.assertEqual(rows["torch-allocated"]["peak_bytes"], 20 * MiB)
            self.assertEqual(rows["torch-allocated"]["diff_pct"], 0.0)
            self.assertEqual(rows["torch-allocated"]["at_dump"], 10 * MiB + MiB // 2)
            self.assertEqual(rows["torch-reserved"]["peak_bytes"], 20 * MiB)
            self.assertEqual(rows["torch-allocated"]["step"], 3)
            self.assertEqual(rows["torch-allocated"]["range"], "forward")


if __name__ == "__main__":
    unittest.main()
