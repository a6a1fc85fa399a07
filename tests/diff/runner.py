#!/usr/bin/env python3
"""Diff-test runner: fixture + command + expected output.

Each suite (tests/diff/suites/*.py) defines TESTS, a list of DiffTest. For each
test the runner builds the fixture trace(s) (SQL fixtures go through the
make_trace tool, so they always use the current schema), runs the stepscope
command with {trace}/{traces}/{tmp}/{src} substituted, and compares stdout (and
the exit code) with the expected file. Expected failures are tests too: set rc
and compare stderr with stderr=True.

  runner.py --stepscope BIN --make-trace BIN [--update] [-j N] SUITE.py...

--update rewrites the expected files from the actual output (review the diff!).
The last line is "N passed, M failed".
"""
import argparse
import concurrent.futures
import difflib
import importlib.util
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


@dataclass
class DiffTest:
    name: str
    cmd: list                      # stepscope arguments; {trace}, {traces}, {tmp}, {src}, {fixtures}
    out: str                       # expected output file, relative to tests/diff/expected/
    trace: object = None           # fixture path (str) or list of paths, relative to tests/diff/fixtures/
                                   # (.sql: a stepscope trace via make_trace; .db.sql: a plain SQLite database)
                                   # ("a.sql+b.sql": one trace of both files' rows, in that order: a fixture
                                   # that adds rows to another reuses it instead of copying it)
                                   # (.sqlite.gz is decompressed: "../../fixtures/gpu/x.sqlite.gz")
    rc: int = 0                    # expected exit code
    stderr: bool = False           # compare stderr instead of stdout
    finalize: bool = True          # False: build the trace as a crashed capture leaves it
    env: dict = field(default_factory=dict)
    post: list = None              # optional shell command run after; its stdout is appended
                                   # ({tmp}, {trace}, {stepscope} substituted)


def load_suite(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    mod.DiffTest = DiffTest
    spec.loader.exec_module(mod)
    return mod.TESTS


def build_fixture(make_trace, fixture, tmp, finalize):
    src = os.path.join(HERE, "fixtures", fixture)
    if fixture.endswith(".db.sql"):
        # A plain SQLite database (no stepscope schema): foreign formats such as nsys exports.
        dst = os.path.join(tmp, os.path.basename(fixture)[:-7] + ".sqlite")
        with open(src) as f, sqlite3.connect(dst) as db:
            db.executescript(f.read())
        return dst
    if fixture.endswith(".sql"):
        parts = fixture.split("+")  # make_trace runs the files in order into one trace
        dst = os.path.join(tmp, os.path.basename(parts[-1])[:-4] + ".sqlite")
        cmd = [make_trace] + ([] if finalize else ["--no-finalize"]) + [dst]
        cmd += [os.path.join(HERE, "fixtures", p) for p in parts]
        subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return dst
    if fixture.endswith(".sqlite.gz"):
        import gzip
        dst = os.path.join(tmp, os.path.basename(fixture)[:-3])
        with gzip.open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        return dst
    dst = os.path.join(tmp, os.path.basename(fixture))
    shutil.copy(src, dst)
    return dst


def run_one(t, args):
    tmp = tempfile.mkdtemp(prefix="stepscope-diff-")
    try:
        fixtures = t.trace if isinstance(t.trace, list) else ([t.trace] if t.trace else [])
        paths = [build_fixture(args.make_trace, f, tmp, t.finalize) for f in fixtures]
        subst = {"{trace}": paths[0] if paths else "", "{tmp}": tmp, "{src}": SRC,
                 "{fixtures}": os.path.join(HERE, "fixtures")}
        cmd = [args.stepscope]
        for a in t.cmd:
            if a == "{traces}":
                cmd.extend(paths)
                continue
            for k, v in subst.items():
                a = a.replace(k, v)
            cmd.append(a)
        env = dict(os.environ, **t.env)
        env.setdefault("STEPSCOPE_NO_COLOR", "1")
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=300, cwd=tmp)
        actual = (p.stderr if t.stderr else p.stdout).decode("utf-8", "replace")
        if t.post:
            post = [x.replace("{tmp}", tmp).replace("{trace}", subst["{trace}"]).replace("{stepscope}", args.stepscope)
                    for x in t.post]
            q = subprocess.run(post, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp, env=env)
            actual += q.stdout.decode("utf-8", "replace")
        actual = actual.replace(tmp, "{tmp}").replace(subst["{fixtures}"], "{fixtures}")
        expected_path = os.path.join(HERE, "expected", t.out)
        problems = []
        if p.returncode != t.rc:
            problems.append(f"exit code {p.returncode}, expected {t.rc}; stderr:\n{p.stderr.decode('utf-8', 'replace')}")
        if args.update:
            os.makedirs(os.path.dirname(expected_path), exist_ok=True)
            with open(expected_path, "w") as f:
                f.write(actual)
        elif not os.path.exists(expected_path):
            problems.append(f"missing expected file {expected_path} (run with --update)")
        else:
            with open(expected_path) as f:
                expected = f.read()
            if expected != actual:
                diff = difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            "expected/" + t.out, "actual")
                problems.append("".join(diff))
        return t.name, problems
    except Exception as e:  # a broken fixture is a failed test, not a crashed runner
        return t.name, [f"{type(e).__name__}: {e}"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stepscope", required=True)
    ap.add_argument("--make-trace", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", default="")
    ap.add_argument("suites", nargs="+")
    args = ap.parse_args()
    args.stepscope = os.path.abspath(args.stepscope)
    args.make_trace = os.path.abspath(args.make_trace)
    tests = []
    for s in args.suites:
        tests += [t for t in load_suite(s) if args.filter in t.name]
    names = [t.name for t in tests]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        print(f"duplicate test names: {sorted(dup)}")
        return 1
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for name, problems in pool.map(lambda t: run_one(t, args), tests):
            if problems:
                failed += 1
                print(f"FAIL {name}")
                for pr in problems:
                    print("  " + pr.replace("\n", "\n  "))
            else:
                print(f"ok   {name}")
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
