#!/usr/bin/env python3
"""Signals through `stepscope profile` are as if the launcher were not there
(src/cli/launcher.h): ignored signals stay ignored (nohup), a signal to the
launcher's pid or process group reaches the program exactly once, the terminal
belongs to the program, and the launcher never dumps a core over the program's.

Each test runs tests/signal_counter bare and under the launcher and compares.
No GPU and no tracer needed (the tracer is pointed at a missing file).

usage: launcher_signals_test.py BUILD_DIR
"""
import os
import pty
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
COUNTER = os.path.join(BUILD, "tests", "signal_counter")
ENV = dict(os.environ, STEPSCOPE_INJECT_LIB="/nonexistent/libstepscope_inject.so",
           ASAN_OPTIONS="detect_leaks=0:disable_coredump=0")


def retried_under_load(test):
    """These checks time signals against a running program (a 0.2 s settle, the launcher's
    100 ms window that folds `timeout`'s pid+group pair into one signal). On a loaded 2-core CI
    machine under ASan a descheduled sender can stretch them; a real fault fails both tries."""
    def run(self):
        try:
            test(self)
        except AssertionError as first:
            sys.stderr.write(f"{test.__name__}: retrying once after: {first}\n")
            self.setUp()
            test(self)
    run.__name__ = test.__name__
    run.__doc__ = test.__doc__
    return run


def launched(args):
    return [STEPSCOPE, "profile", "-q", "--"] + args


class Run:
    """A process in its own session (no terminal, its own process group)."""

    def __init__(self, argv, cwd, preexec=None):
        self.p = subprocess.Popen(argv, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True, preexec_fn=preexec)

    def wait_ready(self):
        line = self.p.stdout.readline()
        assert line == b"ready\n", line

    def finish(self):
        out, err = self.p.communicate(timeout=30)
        return self.p.returncode, out.decode(), err.decode()


def have_pty():
    try:
        a, b = os.openpty()
        os.close(a)
        os.close(b)
        return True
    except OSError:
        return False


class LauncherSignalsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-signals-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def count_after(self, argv, send):
        r = Run(argv, self.tmp)
        r.wait_ready()
        time.sleep(0.2)
        send(r.p.pid)
        rc, out, err = r.finish()
        self.assertEqual(rc, 0, err)
        return out.split()[-1]

    @retried_under_load
    def test_process_group_signal_reaches_program_once(self):
        prog = [COUNTER, "count", str(int(signal.SIGTERM)), "1"]
        kill_group = lambda pid: os.killpg(pid, signal.SIGTERM)
        self.assertEqual(self.count_after(prog, kill_group), "1")            # bare
        self.assertEqual(self.count_after(launched(prog), kill_group), "1")  # was 2

    @retried_under_load
    def test_signal_to_launcher_pid_reaches_program_once(self):
        prog = [COUNTER, "count", str(int(signal.SIGUSR1)), "1"]
        self.assertEqual(self.count_after(launched(prog), lambda pid: os.kill(pid, signal.SIGUSR1)), "1")

    @retried_under_load
    def test_timeout_signals_program_once(self):
        # timeout sends SIGTERM to the launcher's pid and then to its group.
        prog = [COUNTER, "count", str(int(signal.SIGTERM)), "1.5"]
        for argv in (["timeout", "0.5"] + prog, ["timeout", "0.5"] + launched(prog)):
            p = subprocess.run(argv, cwd=self.tmp, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=30, start_new_session=True)
            self.assertEqual(p.stdout.decode().split()[-1], "1", (argv, p.stdout, p.stderr))

    def test_nohup_program_survives_sighup_like_bare(self):
        prog = [COUNTER, "sleep", "1"]
        for argv in (["nohup"] + prog, ["nohup"] + launched(prog)):
            r = Run(argv, self.tmp)
            r.wait_ready()
            os.killpg(r.p.pid, signal.SIGHUP)
            rc, out, err = r.finish()
            self.assertEqual((rc, out.split()[-1]), (0, "alive"), (argv, err))  # was -SIGHUP / 129

    def test_ignored_signals_stay_ignored_in_program(self):
        def ignore():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        for argv in ([COUNTER, "ignored"], launched([COUNTER, "ignored"])):
            rc, out, err = Run(argv, self.tmp, preexec=ignore).finish()
            self.assertEqual((rc, out.strip()), (0, "ignored: HUP INT"), (argv, err))
        rc, out, err = Run(launched([COUNTER, "ignored"]), self.tmp).finish()
        self.assertEqual(out.strip(), "ignored:")  # and nothing ignored that was not

    def test_launcher_dumps_no_core_over_the_program_core(self):
        def cores():
            return sorted(f for f in os.listdir(self.tmp) if f.startswith("core"))

        def unlimited_core():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        # Raw wait status of the launcher (Popen hides the core flag).
        pid = os.fork()
        if pid == 0:
            try:
                os.chdir(self.tmp)
                os.setsid()
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
                unlimited_core()
                os.execve(STEPSCOPE, launched([COUNTER, "abort"]), ENV)
            finally:
                os._exit(127)
        _, status = os.waitpid(pid, 0)
        self.assertTrue(os.WIFSIGNALED(status))
        self.assertEqual(os.WTERMSIG(status), signal.SIGABRT)
        self.assertFalse(os.WCOREDUMP(status), "the launcher dumped a core of its own")
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
        if pattern.startswith("|") or "/" in pattern:
            self.skipTest(f"core_pattern {pattern!r} does not write into the working directory")
        found = cores()
        if not found:
            self.skipTest("the program dumped no core here (core dumps disabled?)")
        # The core there is the program's: NT_PRPSINFO names signal_counter.
        self.assertEqual(len(found), 1, found)
        self.assertEqual(core_program_name(os.path.join(self.tmp, found[0])), "signal_counter")

    @unittest.skipUnless(have_pty(), "no pseudo-terminals here")
    @retried_under_load
    def test_terminal_belongs_to_program(self):
        # A pty as controlling terminal: the program gets the foreground (it can
        # read the terminal), Ctrl-C reaches it once, and the launcher gets the
        # terminal back when it ends.
        pid, master = pty.fork()
        if pid == 0:
            os.execve(STEPSCOPE, launched([COUNTER, "tty"]), ENV)
        out = read_until(master, b"ready")
        self.assertIn(b"foreground", out)
        os.write(master, b"hello\n")
        out += read_until(master, b"got hello")
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, out)
        pid, master = pty.fork()
        if pid == 0:
            os.execve(STEPSCOPE, launched([COUNTER, "count", str(int(signal.SIGINT)), "1"]), ENV)
        read_until(master, b"ready")
        time.sleep(0.2)
        os.write(master, b"\x03")  # Ctrl-C
        out = read_until(master, b"count")
        out += read_until(master, b"\n")
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, out)
        self.assertIn(b"count 1", out)


    @unittest.skipUnless(have_pty(), "no pseudo-terminals here")
    @retried_under_load
    def test_ctrl_c_stops_a_script_looping_over_runs(self):
        # The terminal's Ctrl-C reaches the program; the launcher passes it on
        # to its own group (the script), as the terminal would have bare.
        script = os.path.join(self.tmp, "loop.sh")
        with open(script, "w") as f:
            f.write(f"for i in 1 2 3; do echo iter $i; {STEPSCOPE} profile -q -- {COUNTER} sleep 5; done\n"
                    "echo after-loop\n")
        pid, master = pty.fork()
        if pid == 0:
            os.execve("/bin/sh", ["sh", script], ENV)
        out = read_until(master, b"ready")
        time.sleep(0.2)
        os.write(master, b"\x03")
        out += read_until(master, b"after-loop", timeout=3)
        _, status = os.waitpid(pid, 0)
        self.assertIn(b"iter 1", out)
        self.assertNotIn(b"iter 2", out)
        self.assertNotIn(b"after-loop", out)
        self.assertEqual(os.waitstatus_to_exitcode(status), -signal.SIGINT)


    @unittest.skipUnless(have_pty() and os.path.exists("/bin/bash"), "no pseudo-terminals or bash here")
    @retried_under_load
    def test_job_control_in_an_interactive_shell(self):
        # Ctrl-Z stops the job (launcher and program), fg resumes it; a job
        # started in the background that reads the terminal stops, and fg
        # hands it the terminal.
        pid, master = pty.fork()
        if pid == 0:
            os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"], dict(ENV, PS1="$ "))
        time.sleep(0.5)
        prog = f"{STEPSCOPE} profile -q -- {COUNTER}"
        os.write(master, f"{prog} sleep 2\n".encode())
        read_until(master, b"ready")
        os.write(master, b"\x1a")  # Ctrl-Z
        out = read_until(master, b"Stopped")
        self.assertIn(b"Stopped", out)
        os.write(master, b"fg\n")
        out = read_until(master, b"alive")
        self.assertIn(b"alive", out)
        os.write(master, f"{prog} tty &\n".encode())
        read_until(master, b"ready")
        time.sleep(0.5)
        os.write(master, b"jobs\n")
        self.assertIn(b"Stopped", read_until(master, b"Stopped", timeout=5))
        os.write(master, b"fg\n")
        time.sleep(0.5)
        os.write(master, b"hello\n")
        out = read_until(master, b"got hello")
        self.assertIn(b"got hello", out)
        os.write(master, b"exit\n")
        read_until(master, b"\0", timeout=2)
        os.waitpid(pid, 0)


def read_until(fd, token, timeout=20):
    buf = b""
    end = time.time() + timeout
    while token not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


def core_program_name(path):
    """pr_fname of the NT_PRPSINFO note of an x86-64/aarch64 ELF core file."""
    with open(path, "rb") as f:
        data = f.read(1 << 20)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        with open(path, "rb") as f:
            f.seek(p_offset)
            notes = f.read(p_filesz)
        off = 0
        while off + 12 <= len(notes):
            namesz, descsz, ntype = struct.unpack_from("<III", notes, off)
            desc = off + 12 + ((namesz + 3) & ~3)
            if ntype == 3:  # NT_PRPSINFO: pr_fname[16] at offset 40
                return notes[desc + 40:desc + 56].split(b"\0")[0].decode()
            off = desc + ((descsz + 3) & ~3)
    return None


if __name__ == "__main__":
    unittest.main(verbosity=2)
