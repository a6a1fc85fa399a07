#!/usr/bin/env python3
"""The collector trusts no one (issue: a local user could run code through it).

A real `stepscope profile` runs a program; a hostile peer (tests/capture/
collector_attack.cc) finds the collector's abstract socket in /proc/net/unix
and asks it to load a library of its choice (one that leaves a marker file when
loaded), to sample another process and to write a trace where it likes:
  * as a second user (uid 65534, when this test runs as root, as CI does);
  * as the same user without the session token;
  * with the token, but naming another pid, pattern and library: the collector
    traces the peer itself, under the launcher's pattern, through its own library;
  * with the token, rewriting the shared header after the handshake: the
    launcher keeps running and exits as the program did.
Every refusal is logged by the launcher; nothing is loaded, nothing written.

usage: collector_security_test.py BUILD_DIR
"""
import glob
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
ATTACK = os.path.join(BUILD, "tests", "collector_attack")
MARKER_LIB = os.path.join(BUILD, "tests", "libmarker_lib.so")
NOBODY = 65534


def collector_socket(launcher_pid, timeout=20.0):
    """The abstract name the launcher `launcher_pid` listens on."""
    prefix = "@stepscope-%d-" % launcher_pid
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open("/proc/net/unix") as f:
            for line in f:
                parts = line.split()
                if parts and parts[-1].startswith(prefix):
                    return parts[-1]
        time.sleep(0.05)
    raise AssertionError("no collector socket for launcher pid %d" % launcher_pid)


def child_token(launcher_pid):
    """STEPSCOPE_COLLECTOR_TOKEN from the environment of the launcher's child."""
    with open("/proc/%d/task/%d/children" % (launcher_pid, launcher_pid)) as f:
        child = int(f.read().split()[0])
    with open("/proc/%d/environ" % child, "rb") as f:
        for kv in f.read().split(b"\0"):
            if kv.startswith(b"STEPSCOPE_COLLECTOR_TOKEN="):
                return kv.split(b"=", 1)[1].decode()
    raise AssertionError("the traced program has no session token")


class CollectorSecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-security-")
        self.addCleanup(shutil.rmtree, self.tmp, True)  # thousands were left in /tmp
        os.chmod(self.tmp, 0o777)  # the second user could write here, were it let in
        self.marker = os.path.join(self.tmp, "marker")
        env = dict(os.environ, STEPSCOPE_TEST_MARKER=self.marker)
        # The program runs until its stdin closes (finish()).
        program = "import sys; print('ready', flush=True); sys.stdin.read()"
        self.victim = subprocess.Popen(
            [STEPSCOPE, "profile", "-o", os.path.join(self.tmp, "victim_%p"), "--", sys.executable, "-c",
             program], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            text=True)
        self.assertEqual(self.victim.stdout.readline().strip(), "ready")
        self.socket = collector_socket(self.victim.pid)

    def tearDown(self):
        if self.victim.poll() is None:
            self.victim.kill()
            self.victim.wait()

    def attack(self, *args):
        r = subprocess.run([ATTACK, self.socket] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def finish(self):
        out, err = self.victim.communicate(timeout=60)
        self.assertEqual(self.victim.returncode, 0, err)
        return err

    def hostile(self, *extra):
        return self.attack("--pid", str(os.getpid()), "--inject-lib", MARKER_LIB, "--pattern",
                           os.path.join(self.tmp, "stolen_%p"), "--cwd", self.tmp, *extra)

    def assert_nothing_taken(self):
        self.assertFalse(os.path.exists(self.marker), "the collector loaded the peer's library")
        self.assertEqual(glob.glob(os.path.join(self.tmp, "stolen*")), [])

    def test_a_second_user_is_refused_and_logged(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to run the peer as a second user (CI runs as root)")
        answer = self.hostile("--as-uid", str(NOBODY))
        self.assertTrue(answer.startswith("error refused by the collector: it runs as another user"),
                        answer)
        err = self.finish()
        self.assertIn("refused a tracer connection from pid", err)
        self.assertIn("(uid %d)" % NOBODY, err)
        self.assert_nothing_taken()

    def test_the_same_user_without_the_token_is_refused(self):
        for token in ([], ["--token", "0" * 32]):
            answer = self.hostile(*token)
            self.assertTrue(answer.startswith("error refused by the collector: no valid session token"),
                            answer)
        err = self.finish()
        self.assertEqual(err.count("no valid session token"), 2, err)
        self.assert_nothing_taken()

    def test_with_the_token_the_peer_traces_only_itself(self):
        answer = self.hostile("--token", child_token(self.victim.pid))
        self.assertTrue(answer.startswith("ok " + os.path.join(self.tmp, "victim_")), answer)
        traced_pid = int(answer.rsplit("_", 1)[1].split(".")[0])
        self.assertNotEqual(traced_pid, os.getpid())  # the peer, not the pid it named
        self.finish()
        self.assert_nothing_taken()
        path = answer[3:]
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)  # only its owner reads it

    def test_a_header_rewritten_after_the_handshake_does_not_crash_the_launcher(self):
        answer = self.attack("--token", child_token(self.victim.pid), "--mutate")
        self.assertTrue(answer.startswith("ok "), answer)
        err = self.finish()  # exit 0: the launcher survived and exited as the program did
        self.assertNotIn("Segmentation", err)
        self.assert_nothing_taken()

    def test_an_unsealed_region_is_refused(self):
        answer = self.attack("--token", child_token(self.victim.pid), "--unsealed")
        self.assertTrue(answer.startswith("error "), answer)
        self.assertIn("sealed", answer)
        self.finish()


if __name__ == "__main__":
    unittest.main(verbosity=2)
