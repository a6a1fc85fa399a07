"""Finding and running the stepscope binary (the one implementation of the analysis)."""

import json
import os
import shutil
import subprocess


class StepscopeError(RuntimeError):
    """The one exception of the API: a bad input (a missing, damaged or foreign file, bad SQL,
    an unknown recipe) or a missing or failing stepscope binary; the message says what to
    do."""


class TraceNotFoundError(StepscopeError, FileNotFoundError):
    """No file at the path given to stepscope.open (also a FileNotFoundError, as before)."""


def find_binary():
    """Path of the stepscope binary: $STEPSCOPE_BIN, else `stepscope` on PATH, else the
    binary next to this package (an installed tree's bin/, or a source tree's build/bin/).
    Raises StepscopeError when none is found."""
    env = os.environ.get("STEPSCOPE_BIN")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise StepscopeError(f"STEPSCOPE_BIN={env}: not an executable file; point it at the "
                             "stepscope binary (build/bin/stepscope)")
    on_path = shutil.which("stepscope")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.abspath(__file__))
    # cmake --install: PREFIX/lib/python/stepscope -> PREFIX/bin; source tree: python/stepscope
    # -> build/bin.
    for rel in (("..", "..", "..", "bin"), ("..", "..", "build", "bin")):
        cand = os.path.normpath(os.path.join(here, *rel, "stepscope"))
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    raise StepscopeError("stepscope binary not found: set STEPSCOPE_BIN=/path/to/stepscope or "
                         "put it on PATH (it is built at build/bin/stepscope)")


def run(args):
    """Runs `stepscope ARGS...` and returns its stdout; StepscopeError with its message on
    failure."""
    binary = find_binary()
    proc = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, check=False)
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        raise StepscopeError(f"stepscope {' '.join(args)}: exit {proc.returncode}"
                             + (f": {msg[-1]}" if msg else ""))
    return proc.stdout


def run_json(args):
    """Runs `stepscope ARGS... --format json` and parses the output."""
    out = run([*args, "--format", "json"])
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise StepscopeError(f"stepscope {' '.join(args)}: output is not JSON ({e})") from e


def view_sql():
    """{view name: CREATE VIEW statement} of the analysis views, from `stepscope schema --sql`
    (src/store/schema_views.cc is their one definition)."""
    views = {}
    for stmt in run(["schema", "--sql"]).split(";\n"):
        stmt = stmt.strip()
        prefix = "CREATE VIEW IF NOT EXISTS "
        if stmt.startswith(prefix):
            views[stmt[len(prefix):].split(None, 1)[0]] = stmt
    return views
