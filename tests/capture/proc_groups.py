"""Killing a whole `stepscope profile` job from a test, as a scheduler killing it does.

The launcher runs the program in a process group of its own (cli/launcher.h: signals as if
the launcher were not there), so a kill of the job is a kill of the launcher's group and of
each of the program's groups. Used by tests/capture/ (launcher_test, kill9_loop_test) and
tests/gpu/capture_safety_check.py (which imports it through a path relative to its own).
"""
import os
import signal


def kill_groups(leader, groups=(), sig=signal.SIGKILL):
    """Sends `sig` to the process group `leader` (the launcher, started as a session and group
    leader), then to each of `groups` (the program's); a group already gone is skipped."""
    os.killpg(leader, sig)
    for g in groups:
        try:
            os.killpg(g, sig)
        except ProcessLookupError:
            pass
