#!/usr/bin/env python3
"""Integration tests of `stepscope profile` and the injected tracer's NVTX path,
run for real on a machine without a GPU (NVTX needs none): naming patterns,
exit codes, signals, fork()ed children, crash durability, symbol hygiene.

usage: launcher_test.py BUILD_DIR
"""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

from proc_groups import kill_groups

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
APP = os.path.join(BUILD, "tests", "nvtx_app")
LIB = os.path.join(BUILD, "lib", "libstepscope_inject.so")


def profile(args, cwd, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([STEPSCOPE, "profile"] + args, cwd=cwd, env=e, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60, **kw)


def copy_alone(path):
    """The .sqlite file alone (no -wal, -journal) in a fresh directory beside it (removed with
    the test's directory)."""
    d = tempfile.mkdtemp(prefix="stepscope-alone-", dir=os.path.dirname(path))
    dst = os.path.join(d, os.path.basename(path))
    shutil.copyfile(path, dst)
    return dst


def rows(path, sql):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


NVTX_SQL = ("SELECT s.value, n.depth, n.tid, n.end_tid, n.kind, COALESCE(d.value, ''), n.category, n.color, "
            "n.end_ns - n.start_ns FROM nvtx n JOIN strings s ON s.id = n.name_id "
            "LEFT JOIN strings d ON d.id = n.domain_id ORDER BY n.start_ns")


class LauncherTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-launcher-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def traces(self):
        return sorted(f for f in os.listdir(self.tmp) if f.endswith(".sqlite"))

    def test_a_command_without_double_dash_as_nsys_takes_it(self):
        # The first word that is not an option starts the command; its own options
        # (here the app's argument, and -c of a shell) are its, not profile's.
        p = profile(["-o", "t", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        with_dash = profile(["-o", "u", "--", APP, "ranges"], self.tmp)
        self.assertEqual(with_dash.returncode, 0, with_dash.stderr)
        names = lambda f: sorted(r[0] for r in rows(os.path.join(self.tmp, f), NVTX_SQL))
        self.assertEqual(names("t.sqlite"), names("u.sqlite"))
        p = profile(["-q", "sh", "-c", "exit 3"], self.tmp)
        self.assertEqual(p.returncode, 3, p.stderr)

    def settings_seen(self, args, name):
        """What the traced program is told (the STEPSCOPE_* environment, less the per-run
        collector socket, token and start time) and the NVTX range names its trace holds."""
        env_file = os.path.join(self.tmp, name + ".env")
        script = ("env | grep ^STEPSCOPE_ | grep -v -e COLLECTOR -e OVERWRITE_BEFORE -e STEPSCOPE_OUTPUT= | sort > %s; "
                  "exec %s ranges" % (env_file, APP))
        p = profile(["-q"] + args + ["-o", name, "--", "sh", "-c", script], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        trace = os.path.join(self.tmp, name + ".sqlite")
        names = sorted(r[0] for r in rows(trace, NVTX_SQL)) if os.path.exists(trace) else []
        with open(env_file) as f:
            return f.read(), names, p

    def test_nsys_spellings_mean_what_the_long_options_mean(self):
        # Each nsys spelling against the long options it stands for: the tracer gets the
        # same settings and the trace the same ranges.
        pairs = [
            (["-t", "cuda,nvtx,osrt,cublas", "-y", "0", "-d", "60", "-s", "cpu"],
             ["--trace", "cuda,nvtx,host", "--delay", "0", "--duration", "60"]),
            (["-c", "nvtx", "-p", "step 1@mydomain"], ["--capture-range", "nvtx:step 1"]),
            (["--capture-range=nvtx", "--nvtx-capture=step 1"], ["--capture-range", "nvtx:step 1"]),
            (["-c", "cudaProfilerApi", "-s", "none"],
             ["--capture-range", "cudaProfilerApi", "--sample-hz", "0"]),
            (["-t", "none", "-t", "nvtx"], ["--trace", "nvtx"]),
        ]
        for k, (nsys, ours) in enumerate(pairs):
            a_env, a_names, _ = self.settings_seen(nsys, "nsys%d" % k)
            b_env, b_names, _ = self.settings_seen(ours, "ours%d" % k)
            self.assertEqual(a_env, b_env, nsys)
            self.assertEqual(a_names, b_names, nsys)
        self.assertIn("STEPSCOPE_CAPTURE_RANGE=nvtx:step 1", self.settings_seen(pairs[1][0], "r")[0])

    def test_steps_window(self):
        # --steps N: a cudaProfilerApi window the iteration hook opens after --warmup-steps
        # optimizer steps and closes N later (python/tests/test_iteration_ranges.py runs the hook).
        env, _, _ = self.settings_seen(["--steps", "3", "--warmup-steps", "2"], "win")
        for line in ("STEPSCOPE_CAPTURE_RANGE=cudaProfilerApi", "STEPSCOPE_WINDOW_STEPS=2:3",
                     "STEPSCOPE_ITERATION_RANGES=1", "STEPSCOPE_DETACH=on"):
            self.assertIn(line, env.splitlines())
        for bad, what in ((["--steps", "0"], b"--steps"),
                          (["--steps", "3", "--warmup-steps", "0"], b"--warmup-steps"),
                          (["--steps", "3", "-c", "cudaProfilerApi"], b"both choose"),
                          (["--steps", "3", "--iteration-ranges", "off"], b"iteration hook")):
            p = profile(["-q"] + bad + ["-o", "bad", APP, "ranges"], self.tmp)
            self.assertEqual(p.returncode, 2, bad)
            self.assertIn(what, p.stderr)
            self.assertEqual(p.stderr.count(b"\n"), 1, p.stderr)

    def test_windows_detach_cupti_outside_them_by_default(self):
        # Every kind of window carries the detach (STEPSCOPE_DETACH=on: CUPTI out of the process
        # outside the window); --detach-outside-window off keeps the old behaviour; without a
        # window nothing is said (whole-run tracing as before).
        windows = [["--steps", "4"], ["--delay", "30"], ["--duration", "30"], ["-y", "1", "-d", "2"],
                   ["--capture-range", "cudaProfilerApi"], ["-c", "nvtx", "-p", "step 1"]]
        for k, w in enumerate(windows):
            env, _, _ = self.settings_seen(w, "det%d" % k)
            self.assertIn("STEPSCOPE_DETACH=on", env.splitlines(), w)
            env, _, _ = self.settings_seen(w + ["--detach-outside-window", "off"], "att%d" % k)
            self.assertIn("STEPSCOPE_DETACH=off", env.splitlines(), w)
        for k, args in enumerate(([], ["--detach-outside-window", "off"], ["--detach-outside-window", "on"])):
            env, _, _ = self.settings_seen(args, "whole%d" % k)
            self.assertNotIn("STEPSCOPE_DETACH", env, args)
        p = profile(["-q", "--steps", "2", "--detach-outside-window", "no", "-o", "bad", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.decode().strip().splitlines(),
                         ["stepscope profile: error: --detach-outside-window: use on or off, not 'no'"])
        # The NVTX capture range records the same either way (no GPU here: the window's attach
        # finds no CUDA and says nothing).
        on = profile(["-o", "nv_on", "-c", "nvtx:step 1", "--", APP, "ranges"], self.tmp)
        off = profile(["-o", "nv_off", "-c", "nvtx:step 1", "--detach-outside-window", "off", "--", APP, "ranges"],
                      self.tmp)
        self.assertEqual((on.returncode, off.returncode), (0, 0), on.stderr + off.stderr)
        self.assertNotIn(b"warning", on.stderr)
        names = lambda f: [r[0] for r in rows(os.path.join(self.tmp, f), NVTX_SQL)]
        self.assertEqual(names("nv_on.sqlite"), ["step 1", "forward", "backward"])
        self.assertEqual(names("nv_on.sqlite"), names("nv_off.sqlite"))

    def test_nsys_force_overwrite_and_stats_words(self):
        p = profile(["-q", "-o", "t", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        # -f false (and --force-overwrite=false) keep the refusal; -f true replaces.
        for off in (["-f", "false"], ["--force-overwrite=false"]):
            p = profile(off + ["-o", "t", APP, "ranges"], self.tmp)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(b"exists", p.stderr)
        p = profile(["-q", "-f", "true", "--stats=true", "-o", "t", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"==> stepscope stats", p.stdout)
        self.assertIn(b"t.sqlite", p.stdout)
        # A word after a boolean that is not true/false starts the command, as before.
        p = profile(["-q", "-f", "-o", "t", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = profile(["-q", "--stats=maybe", "-o", "t", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"takes true or false", p.stderr)
        p = profile(["-q", "-c", "nvtx", "-o", "u", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"--nvtx-capture NAME", p.stderr)

    def test_nvtx_ranges_recorded_on_the_right_thread(self):
        p = profile(["-o", "t", "--", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.traces(), ["t.sqlite"])
        path = os.path.join(self.tmp, "t.sqlite")
        got = rows(path, NVTX_SQL)
        names = [r[0] for r in got]
        for step in range(3):
            self.assertIn(f"step {step}", names)
        self.assertEqual(names.count("forward"), 3)
        self.assertEqual(names.count("backward"), 3)
        by_name = {r[0]: r for r in got}
        main_tid = by_name["step 0"][2]
        self.assertEqual(by_name["step 0"][1], 0)       # depth
        self.assertEqual(by_name["forward"][1], 1)
        self.assertEqual(by_name["forward"][2], main_tid)
        self.assertGreaterEqual(by_name["backward"][8], 3_000_000)  # busy 3 ms
        self.assertEqual(by_name["checkpoint saved"][4], 3)          # mark
        self.assertEqual(by_name["checkpoint saved"][8], 0)
        reg = by_name["registered op"]
        self.assertEqual(reg[5], "my_library")
        self.assertEqual(reg[6], 7)
        self.assertEqual(reg[7] & 0xFFFFFFFF, 0xFF00FF00)
        self.assertIn("wide \u00e9t\u00e9", names)
        cross = by_name["cross-thread"]
        self.assertEqual(cross[4], 2)                    # start/end
        self.assertEqual(cross[2], main_tid)
        self.assertNotEqual(cross[3], main_tid)          # ended on the worker thread
        self.assertEqual(by_name["worker range"][2], cross[3])
        meta = dict(rows(path, "SELECT key, value FROM meta"))
        self.assertEqual(meta["finalized"], "1")
        self.assertEqual(meta["source"], "capture")
        self.assertEqual(int(meta["pid"]), main_tid)
        self.assertIn("nvtx_app ranges", meta["command_line"])
        threads = dict(rows(path, "SELECT t.tid, s.value FROM threads t JOIN strings s ON s.id = t.name_id"))
        self.assertEqual(threads[main_tid], "trainer-main")
        self.assertIn("1 trace written", p.stderr.decode())
        self.assertEqual(rows(path, "PRAGMA integrity_check"), [("ok",)])

    def test_forked_child_never_writes_into_parent_trace(self):
        p = profile(["-o", "f_%p", "--", APP, "fork"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = self.traces()
        self.assertEqual(len(files), 1, files)
        path = os.path.join(self.tmp, files[0])
        names = [r[0] for r in rows(path, NVTX_SQL)]
        self.assertEqual(names, ["parent before fork", "parent after fork"])
        self.assertEqual(rows(path, "PRAGMA integrity_check"), [("ok",)])
        self.assertEqual(dict(rows(path, "SELECT key, value FROM meta"))["finalized"], "1")

    def test_nvtx_handles_never_issued_are_ignored(self):
        # Domains, registered strings and range ids the tracer never handed out,
        # NULL and short attributes: the program runs as it does bare (issue 36:
        # it segfaulted), the ranges it made with them are kept without that
        # domain or name, and the real range after them is whole, at depth 0.
        bare = subprocess.run([APP, "bogus"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual((bare.returncode, bare.stdout), (0, b"ok\n"), bare.stderr)
        p = profile(["-q", "-o", "bogus", "--", APP, "bogus"], self.tmp)
        self.assertEqual((p.returncode, p.stdout), (bare.returncode, bare.stdout), p.stderr)
        path = os.path.join(self.tmp, "bogus.sqlite")
        got = rows(path, NVTX_SQL)
        after = [r for r in got if r[0] == "after bogus"]
        self.assertEqual(len(after), 1, got)
        self.assertEqual(after[0][1], 0)
        domains = {r[5] for r in got}
        self.assertEqual(domains, {"", "bogus_test"}, got)
        self.assertEqual({r[0] for r in got}, {"", "after bogus"}, got)
        self.assertEqual(rows(path, "PRAGMA integrity_check"), [("ok",)])

    def test_nvtx_handles_are_addresses_a_library_may_read(self):
        # NCCL's NVTX path reads through the handles it gets: with tagged indices
        # every DDP job died with SIGSEGV at its first collective (lent H200,
        # 2026-11-27). The handles are the addresses of the tracer's objects.
        p = profile(["-q", "-o", "handles", "--", APP, "handles"], self.tmp)
        self.assertEqual((p.returncode, p.stdout), (0, b"ok\n"), p.stderr)
        got = rows(os.path.join(self.tmp, "handles.sqlite"), NVTX_SQL)
        self.assertEqual([(r[0], r[5]) for r in got], [("registered", "handles_test")], got)

    def test_finalization_memory_does_not_grow_with_the_rows(self):
        # Building the indexes sorted every row in memory (temp_store=MEMORY): 3.4M NVTX
        # rows took the launcher to 273 MB, 60 s at full rate to 4.86 GB (issue 36). The
        # sorter spills to temp files now: 77 MB at 3.4M rows on the 2-core VM.
        code = ("import resource, subprocess, sys\n"
                "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
        p = subprocess.run([sys.executable, "-c", code, STEPSCOPE, "profile", "-q", "-o", "big", "--",
                            APP, "many", "40000000"], cwd=self.tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        rss_mb = int(p.stdout.split()[-1]) / 1024
        n = rows(os.path.join(self.tmp, "big.sqlite"), "SELECT COUNT(*) FROM nvtx")[0][0]
        if n < 2_000_000:
            self.skipTest("only %d rows recorded on this machine (the collector fell behind)" % n)
        self.assertLess(rss_mb, 160, "%d rows: %.0f MB" % (n, rss_mb))

    def test_exit_code_and_output_unchanged(self):
        p = profile(["-o", "e", "--", APP, "exit", "7"], self.tmp)
        self.assertEqual(p.returncode, 7)
        self.assertEqual(p.stdout, b"")
        p = profile(["-q", "-o", "e2", "--", "sh", "-c", "echo hello; exit 3"], self.tmp)
        self.assertEqual(p.returncode, 3)
        self.assertEqual(p.stdout, b"hello\n")
        self.assertEqual(p.stderr, b"")

    def test_child_killed_by_signal_is_reported_the_same_way(self):
        p = profile(["-o", "s", "--", APP, "signal"], self.tmp)
        self.assertEqual(p.returncode, -signal.SIGTERM)

    def test_signals_to_launcher_are_forwarded(self):
        e = dict(os.environ)
        proc = subprocess.Popen([STEPSCOPE, "profile", "-o", "fw", "--", APP, "sleep", "30"], cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
        self.assertEqual(proc.stdout.readline(), b"ready\n")
        t0 = time.time()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        proc.stdout.close()
        proc.stderr.close()
        self.assertEqual(proc.returncode, -signal.SIGTERM)
        self.assertLess(time.time() - t0, 10)

    def test_output_patterns(self):
        p = profile(["-o", "run_%q{RANK}_%h", "--", APP, "exit", "0"], self.tmp, env={"RANK": "3"})
        self.assertEqual(p.returncode, 0, p.stderr)
        host = os.uname().nodename
        self.assertEqual(self.traces(), [f"run_3_{host}.sqlite"])
        meta = dict(rows(os.path.join(self.tmp, f"run_3_{host}.sqlite"), "SELECT key, value FROM meta"))
        self.assertEqual(meta["rank"], "3")

    def test_existing_file_needs_force_overwrite(self):
        with open(os.path.join(self.tmp, "old.sqlite"), "w") as f:
            f.write("stale")
        p = profile(["-o", "old", "--", APP, "exit", "0"], self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn("old.sqlite exists; pass --force-overwrite", p.stderr.decode())
        self.assertEqual(len(p.stderr.decode().strip().splitlines()), 1)
        p = profile(["-f", "-o", "old", "--", APP, "exit", "0"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.traces(), ["old.sqlite"])
        self.assertEqual(dict(rows(os.path.join(self.tmp, "old.sqlite"), "SELECT key, value FROM meta"))["finalized"], "1")

    def test_kill9_leaves_every_record_in_the_main_file(self):
        p = profile(["-o", "k", "--", APP, "killself", "1.5"], self.tmp)
        self.assertEqual(p.returncode, -signal.SIGKILL)
        path = os.path.join(self.tmp, "k.sqlite")
        self.assertIn("the process died", p.stderr.decode())
        self.assertEqual(sorted(f for f in os.listdir(self.tmp) if f.startswith("k.")), ["k.sqlite"])
        alone = copy_alone(path)
        self.assertEqual(rows(alone, "PRAGMA integrity_check"), [("ok",)])
        names = [r[0] for r in rows(alone, NVTX_SQL)]
        self.assertEqual(names, [f"step {i}" for i in range(20)])
        meta = dict(rows(alone, "SELECT key, value FROM meta"))
        self.assertEqual(meta["finalized"], "1")
        self.assertEqual(meta["process_exit"], "died")

    def test_program_closing_every_fd_keeps_its_files_and_the_trace(self):
        out = os.path.join(self.tmp, "program_output.txt")
        p = profile(["-o", "fd", "--", APP, "closefds", out], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"".join(b"line %d\n" % i for i in range(50)))
        path = os.path.join(self.tmp, "fd.sqlite")
        self.assertEqual(rows(path, "PRAGMA integrity_check"), [("ok",)])
        names = [r[0] for r in rows(path, NVTX_SQL)]
        self.assertEqual(names, ["before close"] + [f"after close {i}" for i in range(50)])

    def test_open_ranges_at_death_are_written_with_the_unclosed_flag(self):
        for how, rc in [("kill", -signal.SIGKILL), ("segv", -signal.SIGSEGV), ("exit", 0)]:
            with self.subTest(how=how):
                p = profile(["-o", "open_" + how, "--", APP, "open", how], self.tmp)
                self.assertEqual(p.returncode, rc, p.stderr)
                path = os.path.join(self.tmp, f"open_{how}.sqlite")
                got = {r[0]: r[1:] for r in rows(
                    path, "SELECT s.value, n.unclosed, n.kind, n.depth, n.end_ns >= n.start_ns FROM nvtx n "
                          "JOIN strings s ON s.id = n.name_id")}
                self.assertEqual(got["layer_0_fwd"], (0, 1, 1, 1))
                self.assertEqual(got["layer_1_fwd"], (1, 1, 1, 1))
                self.assertEqual(got["step 0"], (1, 1, 0, 1))
                self.assertEqual(got["async open"], (1, 2, 0, 1))
                stats = dict(rows(path, "SELECT name, value FROM stats"))
                self.assertEqual(stats["nvtx_unclosed"], 3)

    def test_kill9_of_launcher_and_program_loses_at_most_half_a_second(self):
        proc = subprocess.Popen([STEPSCOPE, "profile", "-o", "both", "--", APP, "steps", "1000", "10"],
                                cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        ends = []
        while len(ends) < 120:
            line = proc.stdout.readline().split()
            ends.append(float(line[2]))
        killed_at = time.time()  # before the kill, as kill9_loop: a descheduled runner
        kill_groups(proc.pid)  # between kill and clock read counted as loss
        proc.wait(timeout=20)
        proc.stdout.close()
        alone = copy_alone(os.path.join(self.tmp, "both.sqlite"))
        self.assertEqual(rows(alone, "PRAGMA integrity_check"), [("ok",)])
        newest = rows(alone, "SELECT MAX(end_ns) FROM nvtx")[0][0] / 1e9
        self.assertLessEqual(killed_at - newest, 0.5)
        steps = len(rows(alone, "SELECT 1 FROM nvtx"))
        self.assertGreaterEqual(steps, sum(1 for e in ends if e < killed_at - 0.5))

    def test_kill9_of_the_whole_job_at_full_nvtx_rate_keeps_committed_records(self):
        # A program that does nothing but push and pop NVTX ranges keeps the shared ring
        # full; the collector commits between drain slices, so a kill -9 of launcher and
        # program after 2 s leaves a trace that holds rows (before: 0 rows in 6 of 6 runs, the
        # first commit came after the whole drain). The kill can land inside a commit's page
        # writes: the trace is then the file with its hot -journal (docs/capture.md), which
        # SQLite applies when it next opens them together.
        for run in range(2):
            out = "flood%d" % run
            proc = subprocess.Popen([STEPSCOPE, "profile", "-o", out, "--", APP, "many", "2000000000"],
                                    cwd=self.tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            # 2 s of flood from the tracer's handshake (the collector creates the file then),
            # not from Popen: on a loaded machine starting the launcher and the program took
            # a good part of a fixed 2 s.
            path = os.path.join(self.tmp, out + ".sqlite")
            deadline = time.time() + 30
            while not os.path.exists(path) and proc.poll() is None and time.time() < deadline:
                time.sleep(0.01)
            self.assertTrue(os.path.exists(path), "no trace 30 s after the start")
            time.sleep(2.0)
            # The launcher runs the program in a process group of its own: kill both groups.
            with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
                children = [int(c) for c in f.read().split()]
            kill_groups(proc.pid, children)
            proc.wait(timeout=20)
            self.assertEqual(rows(path, "PRAGMA integrity_check"), [("ok",)])
            self.assertGreater(rows(path, "SELECT COUNT(*) FROM nvtx")[0][0], 0)

    def test_nvtx_burst_is_bounded_counted_and_does_not_delay_exit(self):
        # The delay is the launcher's exit after the program's: the program's stdout (a
        # pipe, so flushed only as it exits) arrives at its exit. Timed from the launcher's
        # start, it also counted starting both processes (seconds on a loaded machine).
        proc = subprocess.Popen([STEPSCOPE, "profile", "-o", "burst", "--", APP, "many", "3000000"],
                                cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = proc.stdout.read1(65536)
        program_exited = time.time()
        rest, err = proc.communicate(timeout=60)
        delay = time.time() - program_exited
        p = subprocess.CompletedProcess(proc.args, proc.returncode, first + rest, err)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.decode().split()
        rss_mb = int(out[out.index("rss_kb") + 1]) / 1024
        self.assertLess(rss_mb, 200)
        self.assertLess(delay, 4.0)
        path = os.path.join(self.tmp, "burst.sqlite")
        stats = dict(rows(path, "SELECT name, value FROM stats"))
        self.assertEqual(stats["events_nvtx"] + stats["dropped_nvtx"], 3000000)
        self.assertEqual(rows(path, "SELECT COUNT(*) FROM nvtx")[0][0], stats["events_nvtx"])
        self.assertIn("dropped records", p.stderr.decode())

    def test_program_started_without_the_launcher_starts_its_own_collector(self):
        # By hand (no launcher), and with a launcher socket this host cannot reach (a rank on
        # another node that inherited it through srun).
        for case, extra in [("byhand", {}), ("unreachable", {"STEPSCOPE_COLLECTOR": "@stepscope-nobody-listens"})]:
            with self.subTest(case=case):
                env = {k: v for k, v in os.environ.items() if not k.startswith("STEPSCOPE_")}
                env.update({"CUDA_INJECTION64_PATH": LIB, "NVTX_INJECTION64_PATH": LIB,
                            "STEPSCOPE_OUTPUT": case + "_%p"}, **extra)
                p = subprocess.run([APP, "ranges"], cwd=self.tmp, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=30)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, b"")
                deadline = time.time() + 15
                meta, files = {}, []
                while time.time() < deadline:
                    files = [f for f in self.traces() if f.startswith(case)]
                    if files:
                        try:
                            meta = dict(rows(os.path.join(self.tmp, files[0]), "SELECT key, value FROM meta"))
                        except sqlite3.Error:
                            meta = {}
                        if meta.get("finalized") == "1":
                            break
                    time.sleep(0.1)
                self.assertEqual(meta.get("finalized"), "1", files)
                names = [r[0] for r in rows(os.path.join(self.tmp, files[0]), NVTX_SQL)]
                self.assertEqual(names.count("forward"), 3)
                self.assertEqual(meta["process_exit"], "exited")

    def test_force_overwrite_never_removes_a_trace_being_written(self):
        live = subprocess.Popen([STEPSCOPE, "profile", "-o", "live", "--", APP, "sleep", "30"], cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            self.assertEqual(live.stdout.readline(), b"ready\n")
            p = profile(["-f", "-o", "live", "--", APP, "exit", "0"], self.tmp)
            self.assertEqual(p.returncode, 2)
            self.assertIn("being written", p.stderr.decode())
            self.assertTrue(os.path.exists(os.path.join(self.tmp, "live.sqlite")))
        finally:
            live.send_signal(signal.SIGTERM)
            live.wait(timeout=20)
            live.stdout.close()
            live.stderr.close()
        path = os.path.join(self.tmp, "live.sqlite")
        self.assertEqual(rows(path, "PRAGMA integrity_check"), [("ok",)])
        self.assertEqual([r[0] for r in rows(path, NVTX_SQL)], ["sleeping"])

    def test_no_trace_when_nothing_uses_cuda_or_nvtx(self):
        p = profile(["--", "true"], self.tmp)
        self.assertEqual(p.returncode, 0)
        self.assertEqual(self.traces(), [])
        self.assertIn("no trace written", p.stderr.decode())

    def test_missing_tracer_warns_once_and_runs_untraced(self):
        p = profile(["--", APP, "exit", "5"], self.tmp, env={"STEPSCOPE_INJECT_LIB": "/nonexistent/lib.so"})
        self.assertEqual(p.returncode, 5)
        err = p.stderr.decode().strip().splitlines()
        self.assertEqual(len(err), 1, err)
        self.assertIn("runs untraced", err[0])
        self.assertEqual(self.traces(), [])

    def test_bad_arguments_exit_2(self):
        for args, msg in [(["--bogus", "--", "true"], "unknown option '--bogus'"),
                          (["--trace", "cuda,gpu", "--", "true"], "unknown --trace category 'gpu'"),
                          (["--delay", "soon", "--", "true"], "--delay: not a duration"),
                          (["--capture-range", "step", "--", "true"], "--capture-range"),
                          ([], "no command given")]:
            p = profile(args, self.tmp)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(msg, p.stderr.decode())
            self.assertEqual(len(p.stderr.decode().strip().splitlines()), 1)

    def test_capture_range_nvtx(self):
        p = profile(["-o", "cr", "--capture-range", "nvtx:step 1", "--", APP, "ranges"], self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = [r[0] for r in rows(os.path.join(self.tmp, "cr.sqlite"), NVTX_SQL)]
        self.assertEqual(names, ["step 1", "forward", "backward"])

    def test_tracer_exports_only_its_entry_points_and_the_attach_hook(self):
        out = subprocess.run(["nm", "-D", "--defined-only", LIB], stdout=subprocess.PIPE, check=True).stdout.decode()
        syms = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
        self.assertEqual(syms, ["InitializeInjection", "InitializeInjectionNvtx2", "stepscope_attach"])
        # The window's attach hook (the --steps hook calls it through ctypes) in a process where
        # CUDA never loaded the tracer: 0, nothing said, nothing else happens.
        p = subprocess.run([sys.executable, "-c", "import ctypes, sys; print(ctypes.CDLL(sys.argv[1]).stepscope_attach())",
                            LIB], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"0\n", b""))
        # No SQLite inside the traced program: the collector writes the trace.
        every = subprocess.run(["nm", "-C", LIB], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        self.assertNotIn(b"sqlite3_open", every)


if __name__ == "__main__":
    unittest.main(verbosity=2)
