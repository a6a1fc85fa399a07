"""Run the calling test under a Python that has pandas (the Python API's one dependency).

Debian's python3-pandas belongs to /usr/bin/python3, which may not be the python3 first on
PATH (pyenv, a venv): `reexec_with_pandas()` re-executes the calling script under it, or
exits 77 (a ctest skip) when no Python has pandas.
"""
import os
import subprocess
import sys


def reexec_with_pandas():
    try:
        import pandas  # noqa: F401
        return
    except ImportError:
        pass
    for cand in ("/usr/bin/python3",):
        if os.path.realpath(cand) != os.path.realpath(sys.executable) and os.path.exists(cand):
            ok = subprocess.run([cand, "-c", "import pandas"], capture_output=True).returncode == 0
            if ok:
                os.execv(cand, [cand, *sys.argv])
    print("SKIP: no Python with pandas (apt-get install python3-pandas; scripts/bootstrap.sh)")
    sys.exit(77)
