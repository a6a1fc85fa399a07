#!/usr/bin/env python3
"""CLI file safety that diff tests cannot express (docs/cli.md, "Output files"):

- `profile -o` patterns that cannot work are refused (exit 2, one line)
  before the program starts: the program must not have run;
- an -o that is a hard or symbolic link to the input is refused like the
  input itself;
- an unexpected exception (here: out of memory under a small RLIMIT_AS) is
  one line and exit 2, and the output's temporary file is gone.

usage: cli_safety_test.py BUILD_DIR
"""
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
MAKE_TRACE = os.path.join(BUILD, "tests", "make_trace")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(SRC, "tests", "diff", "fixtures", "safety", "base.sql")
ENV = dict(os.environ, STEPSCOPE_INJECT_LIB="/nonexistent/libstepscope_inject.so")
ENV.pop("STEPSCOPE_TEST_UNSET", None)


def run(args, cwd, preexec=None):
    return subprocess.run([STEPSCOPE] + args, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120, preexec_fn=preexec)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def asan_build():
    return b"__asan_init" in read(STEPSCOPE)


class CliSafetyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-cli-safety-")
        self.addCleanup(shutil.rmtree, self.tmp, True)  # thousands were left in /tmp

    def one_line_error(self, p, needle):
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(needle, err)

    def test_bad_output_patterns_are_refused_before_the_program_runs(self):
        for pattern, needle in [("%q{STEPSCOPE_TEST_UNSET}", "expands to an empty name"),
                                ("no/such/dir/t_%p", "directory no/such/dir does not exist"),
                                ("a%z", "unknown token %z"),
                                ("x%", "lone '%'"),
                                ("x%q{RANK", "unterminated %q{")]:
            p = run(["profile", "-o", pattern, "--", "touch", "ran"], self.tmp)
            self.one_line_error(p, needle)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "ran")), pattern)
        # Names the kernel or SQLite cannot create (issue 36: these ran the job untraced, exit 0):
        # a component over 255 bytes (also once SQLite appends "-journal"), a directory named
        # per process that cannot exist yet, a directory no file can be created in.
        for pattern, needle in [("a" * 300, "longer than 255 bytes"),
                                ("b" * 245, "longer than 255 bytes"),
                                ("c" * 300 + "/t", "longer than 255 bytes"),
                                ("%p/%p", "a directory named per process"),
                                ("run_%n/t", "a directory named per process"),
                                ("/proc/x", "no file can be created in /proc"),
                                ("/proc/self/x_%p", "directory /proc/self")]:
            p = run(["profile", "-o", pattern, "--", "touch", "ran"], self.tmp)
            self.one_line_error(p, needle)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "ran")), pattern)
            self.assertEqual(os.listdir(self.tmp), [], pattern)  # nothing left behind
        os.mkdir(os.path.join(self.tmp, "ro"))
        os.chmod(os.path.join(self.tmp, "ro"), 0o555)
        if os.access(os.path.join(self.tmp, "ro"), os.W_OK):
            return  # root writes anyway: nothing to refuse
        p = run(["profile", "-o", "ro/t", "--", "touch", "ran"], self.tmp)
        self.one_line_error(p, "is not writable")

    def test_patterns_that_can_work_still_run(self):
        # An unset variable next to other text, or inside a per-process directory.
        for pattern in ["x_%q{STEPSCOPE_TEST_UNSET}", "%q{STEPSCOPE_TEST_UNSET}/t", "./t_%p_%h", "d" * 200]:
            p = run(["profile", "-o", pattern, "--", "touch", "ran"], self.tmp)
            self.assertEqual(p.returncode, 0, (pattern, p.stderr))
            self.assertTrue(os.path.exists(os.path.join(self.tmp, "ran")), pattern)
            os.unlink(os.path.join(self.tmp, "ran"))

    def test_output_linked_to_the_input_is_refused(self):
        trace = os.path.join(self.tmp, "t.sqlite")
        subprocess.run([MAKE_TRACE, trace, BASE], check=True, stdout=subprocess.PIPE)
        before = read(trace)
        os.link(trace, os.path.join(self.tmp, "hard.sqlite"))
        os.symlink(trace, os.path.join(self.tmp, "soft.json"))
        for args in (["export", "t.sqlite", "-o", "hard.sqlite"], ["summarize", "t.sqlite", "-o", "soft.json"],
                     ["report", "soft.json", "-o", "t.sqlite"], ["memory", "t.sqlite", "-o", "hard.sqlite"],
                     ["roofline", "--from", "t.sqlite", "--svg", "soft.json"],
                     ["memory", "t.sqlite", "--torch-memory", "soft.json", "-o", "hard.sqlite"]):
            self.one_line_error(run(args, self.tmp), "is the input")
        self.assertEqual(read(trace), before)
        p = run(["export", "t.sqlite", "-o", "other.pftrace"], self.tmp)  # a different name is fine
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_out_of_memory_is_one_line_and_leaves_no_temporary_file(self):
        if asan_build():
            self.skipTest("RLIMIT_AS cannot be used with ASan's shadow memory")
        # Kernels over 49 ms with 1 ns utilization buckets: a 392 MB vector,
        # more than the address-space limit below allows.
        fixture = os.path.join(self.tmp, "long.sql")
        with open(BASE) as f, open(fixture, "w") as out:
            out.write(f.read() + "UPDATE kernels SET end_ns = 49000000;\n")
        trace = os.path.join(self.tmp, "long.sqlite")
        subprocess.run([MAKE_TRACE, trace, fixture], check=True, stdout=subprocess.PIPE)
        limit = 256 << 20

        def small_address_space():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        p = run(["export", "--util-bucket", "1ns", "long.sqlite", "-o", "out.pftrace"], self.tmp,
                preexec=small_address_space)
        self.one_line_error(p, "out of memory")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["long.sql", "long.sqlite"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
