#!/usr/bin/env python3
"""Installs the Python package into a fresh virtual environment and runs docs/tutorial.md.

  1. python3 -m venv --system-site-packages (Debian's python3-pandas is seen through it);
  2. pip install --no-build-isolation --no-index of a copy of the package's files
     (pyproject.toml, python/stepscope, its build backend python/pep517, docs/python.md, LICENSE): offline, and nothing is
     written into the source tree;
  3. the ```python blocks of docs/tutorial.md, concatenated, run by the venv's python from
     the repository root (as a user would), with STEPSCOPE_BIN set; the package must come
     from the venv, not from the source tree.

  STEPSCOPE_BIN=build/bin/stepscope python3 tests/python/run_tutorial.py [--keep DIR]
Exit code 77 (a ctest skip) when no Python with pandas and venv/ensurepip is found
(scripts/bootstrap.sh installs python3-pandas and python3-venv).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def python_with_pandas_and_venv():
    for cand in (sys.executable, "/usr/bin/python3"):
        if not os.path.exists(cand):
            continue
        p = subprocess.run([cand, "-c", "import pandas, venv, ensurepip"], capture_output=True)
        if p.returncode == 0:
            return cand
    return None


def tutorial_code(path):
    """The ```python blocks of a Markdown file, in order, as one script."""
    with open(path) as f:
        text = f.read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="build the venv in DIR and keep it")
    args = ap.parse_args()
    py = python_with_pandas_and_venv()
    if py is None:
        print("SKIP: no Python with pandas and venv (apt-get install python3-pandas "
              "python3-venv; scripts/bootstrap.sh)")
        return 77
    binary = os.environ.get("STEPSCOPE_BIN", os.path.join(SRC, "build", "bin", "stepscope"))
    if not os.access(binary, os.X_OK):
        print(f"run_tutorial: {binary}: no stepscope binary (set STEPSCOPE_BIN)", file=sys.stderr)
        return 1
    blocks = tutorial_code(os.path.join(SRC, "docs", "tutorial.md"))
    if len(blocks) < 5:
        print(f"run_tutorial: docs/tutorial.md has {len(blocks)} python blocks", file=sys.stderr)
        return 1
    work = args.keep or tempfile.mkdtemp(prefix="stepscope-tutorial-")
    try:
        pkg = os.path.join(work, "pkg")
        shutil.rmtree(pkg, ignore_errors=True)
        os.makedirs(os.path.join(pkg, "docs"))
        for rel in ("pyproject.toml", "LICENSE", os.path.join("docs", "python.md")):
            shutil.copy(os.path.join(SRC, rel), os.path.join(pkg, rel))
        for sub in ("stepscope", "pep517"):  # the package and its build backend (pyproject.toml)
            shutil.copytree(os.path.join(SRC, "python", sub), os.path.join(pkg, "python", sub),
                            ignore=shutil.ignore_patterns("__pycache__"))
        venv = os.path.join(work, "venv")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([py, "-m", "venv", "--system-site-packages", venv], check=True)
        vpy = os.path.join(venv, "bin", "python")
        subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                        "--disable-pip-version-check", pkg], check=True)
        script = os.path.join(work, "tutorial.py")
        with open(script, "w") as f:
            f.write("import stepscope, sys\n"
                    f"assert stepscope.__file__.startswith({venv!r}), stepscope.__file__\n")
            for i, b in enumerate(blocks):
                f.write(f"# --- block {i + 1}\n{b}\n")
        env = dict(os.environ, STEPSCOPE_BIN=os.path.abspath(binary))
        env.pop("PYTHONPATH", None)
        p = subprocess.run([vpy, script], cwd=SRC, env=env)
        if p.returncode != 0:
            print(f"run_tutorial: docs/tutorial.md failed (script: {script})", file=sys.stderr)
            args.keep = args.keep or work  # keep it to look at
            return 1
        print(f"run_tutorial: {len(blocks)} blocks of docs/tutorial.md ran in a fresh venv")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
