#!/usr/bin/env python3
"""Readers bounded and honest (issue 36, docs/cli.md "Damaged and hostile traces"):

- call-site chains 20k and 200k deep: analyze, whatif and stats read them in
  linear time (each stack its outermost 255 frames and the leaf), and say so;
- `stats -r nvtx_pace` of a 1M-character range name on many ranges: memory
  does not grow with name length x ranges;
- negative or impossible times: counted and said in one stderr line;
- `ranks` refuses a summary file over its documented size, one line, exit 2;
- `-f` never replaces a file a running `stepscope profile` is writing (its
  collector's flock), in every command that writes an output.

usage: readers_bounded_test.py BUILD_DIR
"""
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.environ.get("STEPSCOPE_BIN", os.path.join(BUILD, "bin", "stepscope"))
MAKE_TRACE = os.path.join(BUILD, "tests", "make_trace")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(SRC, "tests", "diff", "fixtures", "safety", "base.sql")
KINETO = os.path.join(SRC, "tests", "diff", "fixtures", "import", "kineto_small.json")
# Generous for a loaded 2-core CI machine; each run takes well under a second alone.
TIME_BUDGET_S = float(os.environ.get("STEPSCOPE_READER_BUDGET_S", "10"))


def asan_build():
    with open(STEPSCOPE, "rb") as f:
        return b"__asan_init" in f.read()


def run(args, cwd):
    """(CompletedProcess, seconds, peak RSS of the command in MiB)."""
    # A child python that runs the command: its RUSAGE_CHILDREN is the command's alone.
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
             "sys.stderr.buffer.write(p.stderr)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(p.returncode)\n")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", probe, STEPSCOPE] + args, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    return p, time.monotonic() - t0, int(p.stdout.decode().strip() or 0) / 1024.0


def make_trace(tmp, name, extra_sql):
    fixture = os.path.join(tmp, name + ".sql")
    with open(BASE) as f, open(fixture, "w") as out:
        out.write(f.read() + extra_sql)
    trace = os.path.join(tmp, name + ".sqlite")
    subprocess.run([MAKE_TRACE, trace, fixture], check=True, stdout=subprocess.PIPE)
    return trace


def deep_chain_sql(depth, samples):
    """One chain of `depth` callsites (frame i under i - 1) and `samples`
    samples of the main thread spread along it, half blocked, inside step 1."""
    return f"""
INSERT INTO strings(id, value) VALUES (10, 'deep_fn'), (11, '/src/train.py'), (12, 'futex');
INSERT INTO meta VALUES ('sample_hz', '200');
INSERT INTO frames(id, kind, function_id, file_id, line)
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {depth})
  SELECT i, 1, 10, 11, i FROM c;
INSERT INTO callsites(id, parent_id, frame_id, depth)
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {depth})
  SELECT i, i - 1, i, (i - 1) % 65536 FROM c;
INSERT INTO samples(ts_ns, tid, state, wait_id, callsite_id, cpu_ns)
  WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < {samples})
  SELECT 1000 + i * 2, 100, CASE i % 2 WHEN 0 THEN 1 ELSE 4 END, CASE i % 2 WHEN 0 THEN 0 ELSE 12 END,
         {depth} - (i * {depth} / {samples}), 1 FROM c;
"""


class ReadersBoundedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-readers-")
        self.addCleanup(shutil.rmtree, self.tmp, True)  # thousands were left in /tmp

    def one_line_error(self, p, needle):
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(needle, err)

    def test_deep_callsite_chains_read_in_linear_time(self):
        for depth in (20000, 200000):
            trace = make_trace(self.tmp, f"deep{depth}", deep_chain_sql(depth, 2000))
            for args in (["analyze", trace], ["whatif", trace], ["stats", "-r", "python_hotspots", trace],
                         ["export", trace, "-o", os.path.join(self.tmp, f"deep{depth}.json"), "-f"]):
                p, secs, _ = run(args, self.tmp)
                err = p.stderr.decode()
                self.assertEqual(p.returncode, 0, err)
                print(f"  {args[0]} {depth} deep: {secs:.2f} s", file=sys.stderr)
                self.assertLess(secs, TIME_BUDGET_S, f"{args} on a {depth}-deep chain")
                if args[0] != "export":
                    self.assertIn(f"{depth - 256:,} call stacks deeper than 256 frames were read as their "
                                  "outermost 255 frames and the leaf", err)

    def test_nvtx_pace_memory_does_not_grow_with_name_length_times_ranges(self):
        if asan_build():
            self.skipTest("ASan's shadow memory makes RSS meaningless")
        ranges = 2000
        # No step ranges: nvtx_pace picks the most frequent range name, the long one.
        sql = f"""
DELETE FROM nvtx;
INSERT INTO strings(id, value) VALUES (20, printf('%.*c', 1000000, 'n'));
INSERT INTO nvtx(start_ns, end_ns, tid, end_tid, kind, depth, domain_id, name_id, category, color)
  WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < {ranges})
  SELECT 10000 + i * 100, 10050 + i * 100, 100, 100, 1, 0, 0, 20, 0, 0 FROM c;
"""
        trace = make_trace(self.tmp, "longname", sql)
        # 2,000 ranges x a 1 MB name: 2 GB if each row held its name.
        for args in (["stats", "-r", "nvtx_pace", trace], ["stats", "-r", "nvtx_pace,nvtx_sum", trace]):
            p, secs, rss = run(args, self.tmp)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            print(f"  nvtx_pace: {secs:.2f} s, {rss:.0f} MiB", file=sys.stderr)
            self.assertLess(rss, 200, args)
            self.assertLess(secs, TIME_BUDGET_S, args)

    def test_impossible_times_are_counted_and_said(self):
        sql = """
INSERT INTO kernels(start_ns, end_ns, device, context, stream, correlation, name_id, mangled_id, grid_x, grid_y,
                    grid_z, block_x, block_y, block_z, registers_per_thread, static_smem_bytes, dynamic_smem_bytes,
                    graph_id, graph_node_id) VALUES
  (-9223372036854775808, 3000, 0, 1, 7, 2, 3, 0, 8, 1, 1, 128, 1, 1, 32, 0, 1024, 0, 0),
  (3500, 3200, 0, 1, 7, 3, 3, 0, 8, 1, 1, 128, 1, 1, 32, 0, 1024, 0, 0);
"""
        trace = make_trace(self.tmp, "negative", sql)
        for args in (["stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", trace], ["steps", trace],
                     ["analyze", trace], ["summarize", trace, "-o", "-"]):
            p = subprocess.run([STEPSCOPE] + args, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=120)
            err = p.stderr.decode()
            self.assertEqual(p.returncode, 0, err)
            lines = [ln for ln in err.splitlines() if "negative or impossible times" in ln]
            self.assertEqual(lines, [f"stepscope: warning: {trace}: 2 records with negative or impossible times "
                                     "were clamped (zero-length, or cut to 4.9 hours)"], err)
            # No 2^44 ns (4.9-hour) kernel from an INT64_MIN start, no 1.8e18 ns of compute:
            # every time of this trace is under 10 us.
            self.assertIsNone(re.search(r"(?<![\d.])\d{13,}", p.stdout.decode()), p.stdout.decode())

    def test_ranks_refuses_an_oversized_summary(self):
        path = os.path.join(self.tmp, "big.summary.json")
        with open(path, "wb") as f:
            f.truncate((64 << 20) + 1)  # sparse: no disk used
        p, _, rss = run(["ranks", path], self.tmp)
        self.one_line_error(p, "larger than a rank summary can be")
        # Refused before reading: the file's 64 MB never reach memory. Against the same binary
        # refusing a file that does not exist (its own RSS: ~10 MB in release, 105 MB under ASan
        # on the CI machine, 2026-11-28), so the bound holds in every build.
        _, _, base = run(["ranks", os.path.join(self.tmp, "missing.json")], self.tmp)
        self.assertLess(rss, base + 32, f"{rss:.0f} MiB against {base:.0f} MiB refusing a missing file")

    def test_force_never_replaces_a_trace_being_written(self):
        trace = make_trace(self.tmp, "t", "")
        for out, args in (("live.sqlite", ["import", KINETO, "-o", "live.sqlite", "-f"]),
                          ("live.json", ["export", "t.sqlite", "-o", "live.json", "-f"]),
                          ("live.txt", ["stats", "t.sqlite", "-o", "live.txt", "-f"]),
                          ("live.summary.json", ["summarize", "t.sqlite", "-o", "live.summary.json", "-f"])):
            path = os.path.join(self.tmp, out)
            with open(path, "wb") as f:
                f.write(b"being written")
            # What a running collector holds until the trace is finalized.
            fd = os.open(path, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                p = subprocess.run([STEPSCOPE] + args, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=120)
                self.one_line_error(p, f"{out} is being written by a running stepscope profile")
            finally:
                os.close(fd)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), b"being written", args)
            # Unlocked, -f replaces it.
            p = subprocess.run([STEPSCOPE] + args, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertTrue(os.path.exists(trace))


if __name__ == "__main__":
    unittest.main(verbosity=2)
