#!/usr/bin/env python3
"""Integration tests of `stepscope roofline`'s survey pass without a GPU: the pass runs the
program under the `profile` tracer (libstepscope_inject.so through the collector), and NVTX
needs no GPU, so the whole path up to the kernel selection runs for real here: the trace it
leaves, what a failed run leaves (nothing), several processes, a tracer that cannot load.
The GPU half (kernels selected and profiled) is tests/gpu/roofline_check.py.

usage: roofline_survey_test.py BUILD_DIR
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
APP = os.path.join(BUILD, "tests", "nvtx_app")


def rows(path, sql):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


class RooflineSurveyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-survey-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def roofline(self, args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run([STEPSCOPE, "roofline"] + args, cwd=self.tmp, env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)

    def files(self):
        return sorted(os.listdir(self.tmp))

    def test_survey_writes_a_capture_trace_and_selects_from_it(self):
        p = self.roofline(["-o", "s.sqlite", "--", APP, "steps", "4", "5"])
        # No kernels without a GPU: the selection, reading the survey's trace, says so (exit 2,
        # one line, as every "nothing to do in this input" error).
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("roofline: survey run (kernels, launches, NVTX) -> s.sqlite", p.stdout)
        self.assertEqual(p.stderr.strip().splitlines()[-1],
                         "stepscope roofline: error: s.sqlite: no kernels in step 1")  # median of 0..3
        self.assertEqual(self.files(), ["s.sqlite"])  # no temporary name left beside it
        trace = os.path.join(self.tmp, "s.sqlite")
        meta = dict(rows(trace, "SELECT key, value FROM meta"))
        self.assertEqual(meta["source"], "capture")  # the profile tracer's trace, not a second recorder
        self.assertEqual(meta["finalized"], "1")
        self.assertEqual(meta["process_exit"], "exited")
        names = [r[0] for r in rows(trace, "SELECT s.value FROM nvtx n JOIN strings s ON s.id = n.name_id "
                                           "ORDER BY n.start_ns")]
        self.assertEqual(names, ["step 0", "step 1", "step 2", "step 3"])
        # The same trace read again with --from: the same selection.
        p = self.roofline(["--from", "s.sqlite", "--dry-run", "--step", "2"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("s.sqlite: no kernels in step 2", p.stderr)

    def test_survey_replaces_an_existing_trace_with_f(self):
        with open(os.path.join(self.tmp, "s.sqlite"), "w") as f:
            f.write("old")
        p = self.roofline(["-o", "s.sqlite", "--dry-run", "--", APP, "steps", "2", "1"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("s.sqlite exists; pass -f", p.stderr)
        p = self.roofline(["-f", "-o", "s.sqlite", "--dry-run", "--", APP, "steps", "2", "1"])
        self.assertIn("no kernels in step 0", p.stderr)
        self.assertEqual(rows(os.path.join(self.tmp, "s.sqlite"), "SELECT value FROM meta WHERE key = 'source'"),
                         [("capture",)])
        self.assertEqual(self.files(), ["s.sqlite"])

    def test_failed_program_leaves_the_old_file_and_no_temporary(self):
        with open(os.path.join(self.tmp, "s.sqlite"), "w") as f:
            f.write("old")
        p = self.roofline(["-f", "-o", "s.sqlite", "--", APP, "exit", "3"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("the command exited with code 3 during the survey run; fix it and retry", p.stderr)
        self.assertEqual(self.files(), ["s.sqlite"])
        with open(os.path.join(self.tmp, "s.sqlite")) as f:
            self.assertEqual(f.read(), "old")

    def test_program_without_cuda_or_nvtx_writes_no_trace(self):
        p = self.roofline(["-o", "s.sqlite", "--", "true"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("the survey run wrote no trace", p.stderr)
        self.assertEqual(self.files(), [])

    def test_several_processes_keep_the_trace_with_the_most_kernels(self):
        script = f"{APP} steps 3 1 >/dev/null && {APP} steps 5 1 >/dev/null"
        p = self.roofline(["-o", "s.sqlite", "--dry-run", "--", "sh", "-c", script])
        self.assertIn("stepscope roofline: note: 2 processes recorded; kernels are picked from the one with "
                      "the most", p.stderr)
        self.assertEqual(self.files(), ["s.sqlite"])
        # Both have 0 kernels: the first (3 steps, median step 1) is kept.
        self.assertIn("no kernels in step 1", p.stderr)
        self.assertEqual(rows(os.path.join(self.tmp, "s.sqlite"), "SELECT COUNT(*) FROM nvtx"), [(3,)])

    def test_tracer_that_cannot_load_is_an_error_before_the_program_runs(self):
        marker = os.path.join(self.tmp, "ran")
        p = self.roofline(["-o", "s.sqlite", "--", "sh", "-c", f"touch {marker}"],
                          env={"STEPSCOPE_INJECT_LIB": os.path.join(self.tmp, "missing.so")})
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot load the tracer", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(self.files(), [])

    def test_directory_that_does_not_exist_is_exit_2(self):
        p = self.roofline(["-o", "no/such/dir/s.sqlite", "--", APP, "steps", "1", "1"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot write in", p.stderr)


if __name__ == "__main__":
    unittest.main()
