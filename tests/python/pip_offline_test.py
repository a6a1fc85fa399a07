#!/usr/bin/env python3
"""README's `pip install .` works on a machine without a package index (issue 37).

  1. python3 -m venv --system-site-packages (pandas, the one dependency, comes from the
     system: Debian's python3-pandas);
  2. `python -m pip install .` in the repository root, exactly the README's command, with
     PIP_NO_INDEX=1 and no pip configuration: build isolation is on, so this passes only
     because the build backend (python/pep517/stepscope_build.py) needs nothing from an
     index;
  3. the installed package is the venv's (not the source tree's), holds no *_test.py, and
     `pip show` names its version and dependency; nothing was written into the source tree;
  4. `pip install -e .` the same way imports from the source tree;
  5. the backend's fallback reader of pyproject.toml (Pythons without tomllib) reads the
     same metadata as tomllib.

Exit code 77 (a ctest skip) when no Python with pandas and venv/ensurepip is found.
  python3 tests/python/pip_offline_test.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def python_with_pandas_and_venv():
    for cand in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(cand) and subprocess.run([cand, "-c", "import pandas, venv, ensurepip"],
                                                   capture_output=True).returncode == 0:
            return cand
    return None


def tree_listing():
    """Files under the repository root that a build could leave behind (build dirs excluded)."""
    out = set()
    for top in ("python", "docs"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, top)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            out.update(os.path.join(dirpath, f) for f in filenames if not f.endswith(".pyc"))
    out.update(os.path.join(SRC, f) for f in os.listdir(SRC) if f != "node_modules")
    return out


def fail(msg):
    print("pip_offline_test: FAIL: " + msg, file=sys.stderr)
    return 1


def main():
    py = python_with_pandas_and_venv()
    if py is None:
        print("SKIP: no Python with pandas and venv (apt-get install python3-pandas python3-venv)")
        return 77
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INPUT="1")
    work = tempfile.mkdtemp(prefix="stepscope-pip-offline-")
    try:
        venv = os.path.join(work, "venv")
        subprocess.run([py, "-m", "venv", "--system-site-packages", venv], check=True)
        vpy = os.path.join(venv, "bin", "python")
        before = tree_listing()
        p = subprocess.run([vpy, "-m", "pip", "install", "."], cwd=SRC, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            return fail("pip install . (PIP_NO_INDEX=1) failed:\n" + p.stdout + p.stderr)
        new = tree_listing() - before
        if new:
            return fail("pip install . wrote into the source tree: " + ", ".join(sorted(new)))
        # From the venv, run away from the source tree.
        p = subprocess.run([vpy, "-c", "import stepscope, os; print(os.path.dirname(stepscope.__file__)); "
                            "print(sorted(os.listdir(os.path.dirname(stepscope.__file__))))"],
                           cwd=work, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            return fail("import stepscope failed:\n" + p.stderr)
        where, files = p.stdout.splitlines()[:2]
        if not where.startswith(venv):
            return fail(f"stepscope imported from {where}, not the venv")
        if "_test.py" in files or "trace.py" not in files:
            return fail("installed files: " + files)
        p = subprocess.run([vpy, "-m", "pip", "show", "stepscope"], env=env, capture_output=True, text=True)
        if "Version: 0.1.0" not in p.stdout or "Requires: pandas" not in p.stdout:
            return fail("pip show:\n" + p.stdout + p.stderr)

        subprocess.run([vpy, "-m", "pip", "uninstall", "-y", "-q", "stepscope"], env=env, check=True)
        p = subprocess.run([vpy, "-m", "pip", "install", "-e", "."], cwd=SRC, env=env, capture_output=True,
                           text=True)
        if p.returncode != 0:
            return fail("pip install -e . (PIP_NO_INDEX=1) failed:\n" + p.stdout + p.stderr)
        p = subprocess.run([vpy, "-c", "import stepscope; print(stepscope.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True)
        if p.returncode != 0 or not p.stdout.strip().startswith(os.path.join(SRC, "python", "stepscope")):
            return fail("editable install imports from " + p.stdout + p.stderr)

        probe = ("import sys, json; sys.path.insert(0, %r); import stepscope_build as b; "
                 "a = b._project(); sys.modules['tomllib'] = None; print(json.dumps([a, b._project()]))"
                 % os.path.join(SRC, "python", "pep517"))
        p = subprocess.run([py, "-c", probe], capture_output=True, text=True)
        import json
        if p.returncode != 0:
            return fail("backend metadata probe failed:\n" + p.stderr)
        with_toml, fallback = json.loads(p.stdout)
        if with_toml != fallback:
            return fail(f"pyproject.toml read differently without tomllib: {with_toml} vs {fallback}")
        print(f"pip_offline_test: ok (pip install . and -e . with PIP_NO_INDEX=1, {py})")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
