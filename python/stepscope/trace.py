"""A stepscope trace as pandas DataFrames (docs/python.md).

Two sources, one definition of each thing:
  * the trace's tables and the SQL views gpu_ops_v / steps_v (declared in
    src/store/schema_views.cc), read with SQLite: kernels(), memcpy(), api(),
    nvtx(), gpu_ops(), steps_sql(), memory(), gpu_metrics(), sql();
  * the stepscope binary's JSON output for the analysis (steps with warm-up
    status and breakdown, recipes, expert rules, memory report): steps(),
    stats(), findings(), memory(section). Nothing is re-implemented here.

Times from SQL are raw trace-clock nanoseconds, like the trace's columns;
times from the binary are nanoseconds since the trace start, like its output
(add Trace.origin_ns to compare).
"""

import functools
import json
import os
import pathlib
import sqlite3

import pandas as pd

from . import _cli
from ._cli import StepscopeError, TraceNotFoundError

_VIEWS = ("gpu_ops_v", "steps_v")

# What SQLite, pandas and the standard library raise on bad input (a damaged file, bad SQL
# or parameters, a meta value that is not a number, a path that is not one): every public
# method turns them into StepscopeError, the one exception of this API.
_FOREIGN_ERRORS = (sqlite3.Error, sqlite3.Warning, pd.errors.DatabaseError, ValueError,
                   TypeError, KeyError, OSError, json.JSONDecodeError)


def _raises_stepscope_error(method):
    """Re-raises _FOREIGN_ERRORS from `method` as StepscopeError naming the trace and the
    method (the original is chained as __cause__)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except StepscopeError:
            raise
        except _FOREIGN_ERRORS as e:
            what = str(e).strip().splitlines()
            raise StepscopeError(f"{getattr(self, 'path', '?')}: {method.__name__}(): "
                                 f"{type(e).__name__}: {what[0] if what else e!r}") from e
    return wrapper


class _SharedText:
    """sqlite3 text_factory: one str object per distinct long value. A name repeated in every
    row (a 1 MB kernel name on 5,000 kernels) is then one string, not one copy per row:
    memory stays independent of name length x count. Bytes that are not UTF-8 are
    replaced (U+FFFD) rather than failing the whole query."""

    LONG = 256

    def __init__(self):
        self._long = {}

    def __call__(self, raw):
        if len(raw) < self.LONG:
            return raw.decode("utf-8", "replace")
        s = self._long.get(raw)
        if s is None:
            s = self._long[raw] = raw.decode("utf-8", "replace")
        return s


def _view_body(create, prefix=""):
    """The SELECT of a CREATE VIEW statement (from its WITH), after `prefix`: SQLite stores
    `CREATE VIEW IF NOT EXISTS v AS ...` as `CREATE VIEW v AS ...`."""
    i = create.find("WITH")
    return prefix + (create[i:] if i >= 0 else create)


class Trace:
    """One stepscope trace (a .sqlite file written by `stepscope profile` or
    `stepscope import`), opened read-only. Use stepscope.open(path)."""

    def __init__(self, path):
        try:
            self.path = os.fspath(path)
        except TypeError as e:
            raise StepscopeError(f"{path!r}: not a path ({e})") from e
        self._db = None
        if not os.path.isfile(self.path):
            raise TraceNotFoundError(f"{self.path}: " + ("not a file" if os.path.exists(self.path)
                                                          else "no such trace file"))
        try:
            uri = pathlib.Path(self.path).resolve().as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True)
            self._db.text_factory = _SharedText()
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, sqlite3.Warning, ValueError, OSError) as e:
            if self._db is not None:
                self._db.close()
            raise StepscopeError(f"{self.path}: not a stepscope trace ({e}); convert Nsight "
                                 "Systems or torch.profiler files with `stepscope import`") from e
        self.meta = meta
        self._views_ready = False

    # -- life cycle -------------------------------------------------------------------------

    def close(self):
        """Closes the SQLite connection."""
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"stepscope.Trace({self.path!r})"

    @property
    @_raises_stepscope_error
    def origin_ns(self):
        """Trace start on the trace clock: what the binary's `start_ns` columns count from
        (meta.start_ns, or the earliest event when the trace is older than that key or an
        event precedes it)."""
        q = ("SELECT MIN(t) FROM (SELECT MIN(start_ns) AS t FROM kernels UNION ALL "
             "SELECT MIN(start_ns) FROM memcpy UNION ALL SELECT MIN(start_ns) FROM memset "
             "UNION ALL SELECT MIN(start_ns) FROM api UNION ALL SELECT MIN(start_ns) FROM sync "
             "UNION ALL SELECT MIN(start_ns) FROM nvtx UNION ALL SELECT MIN(ts_ns) FROM memory)")
        earliest = self._db.execute(q).fetchone()[0]
        start = int(self.meta.get("start_ns", "0") or 0)
        if start > 0 and earliest is not None:
            return min(start, earliest)
        return start if start > 0 else (earliest or 0)

    # -- SQL --------------------------------------------------------------------------------

    def _ensure_views(self, required=True):
        """Adds gpu_ops_v / steps_v as temporary views, from `stepscope schema --sql`, to a
        trace written before they existed, and over a trace's own copies when these differ
        from the binary's (an older definition: gpu_ops_v carried every name through its sort
        before issue 36, 18 s and 4.6 GB on a 13 MB trace of 100 kB names). Temporary views
        shadow the file's for every query of this connection. Without a usable binary, the
        file's views are used as they are."""
        if self._views_ready:
            return
        stored = dict(self._db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'"))
        missing = [v for v in _VIEWS if v not in stored]
        try:
            sql = _cli.view_sql()
            if any(v not in sql for v in _VIEWS):
                raise StepscopeError(f"{_cli.find_binary()} predates the "
                                     f"{next(v for v in _VIEWS if v not in sql)} view: "
                                     "use a newer stepscope")
        except StepscopeError as e:
            if not missing:
                self._views_ready = True
                return
            if not required:
                return
            raise StepscopeError(f"{self.path} has no {missing[0]} view (an older trace) "
                                 f"and its definition could not be read: {e}") from e
        if any(v in missing or _view_body(str(stored[v] or "")) != _view_body(sql[v])
               for v in _VIEWS):
            # Both views: the file's steps_v would read the file's gpu_ops_v.
            for v in _VIEWS:  # gpu_ops_v first: steps_v reads it
                self._db.execute(_view_body(sql[v], f"CREATE TEMP VIEW {v} AS "))
        self._views_ready = True

    @_raises_stepscope_error
    def sql(self, query, params=()):
        """Runs an SQL query on the trace and returns the rows as a DataFrame. The tables
        and views are documented in docs/schema.md; gpu_ops_v and steps_v are available
        even on traces written before they existed (when the binary can be found)."""
        self._ensure_views(required=False)
        return pd.read_sql_query(query, self._db, params=params)

    def _add_strings(self, df, columns):
        """Fills each (column, id_column) of df with the strings the ids name, looked up
        once per distinct id rather than joined in SQL: a long name repeated in many rows is
        neither sorted row by row by SQLite nor copied per row (a 1 MB name on 5,647 kernels:
        72 s and 2.3 GB before). An id_column starting with '_' is dropped afterwards."""
        ids = set()
        for _, id_col in columns:
            ids.update(v for v in df[id_col].dropna().unique().tolist() if isinstance(v, int))
        values = {}
        ids = sorted(ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            values.update(self._db.execute(
                f"SELECT id, value FROM strings WHERE id IN ({','.join('?' * len(chunk))})",
                chunk).fetchall())
        for col, id_col in columns:
            df[col] = [values.get(v) if isinstance(v, int) else None for v in df[id_col]]
            if id_col.startswith("_"):
                del df[id_col]
        return df

    @_raises_stepscope_error
    def kernels(self):
        """GPU kernels: every column of the kernels table plus duration_ns and name
        (demangled), in start order."""
        df = self.sql("SELECT k.*, k.end_ns - k.start_ns AS duration_ns FROM kernels k "
                      "ORDER BY k.start_ns, k.id")
        return self._add_strings(df, [("name", "name_id")])

    @_raises_stepscope_error
    def memcpy(self):
        """GPU memory copies: the memcpy table plus duration_ns and the names of copy_kind,
        src_kind and dst_kind (copy_kind_name, ...)."""
        return self.sql(
            "SELECT m.*, m.end_ns - m.start_ns AS duration_ns, c.name AS copy_kind_name, "
            "sk.name AS src_kind_name, dk.name AS dst_kind_name FROM memcpy m "
            "LEFT JOIN enum_copy_kind c ON c.id = m.copy_kind "
            "LEFT JOIN enum_memory_kind sk ON sk.id = m.src_kind "
            "LEFT JOIN enum_memory_kind dk ON dk.id = m.dst_kind ORDER BY m.start_ns, m.id")

    @_raises_stepscope_error
    def api(self):
        """CUDA runtime/driver API calls: the api table plus duration_ns, name and thread
        (the thread's name)."""
        df = self.sql(
            "SELECT a.*, a.end_ns - a.start_ns AS duration_ns, "
            "(SELECT t.name_id FROM threads t WHERE t.tid = a.tid) AS _thread_name_id "
            "FROM api a ORDER BY a.start_ns, a.id")
        return self._add_strings(df, [("name", "name_id"), ("thread", "_thread_name_id")])

    @_raises_stepscope_error
    def nvtx(self):
        """NVTX ranges and marks: the nvtx table plus name, domain, kind_name (push_pop,
        start_end, mark) and duration_ns (NaN for a range a cut-off trace never closed)."""
        df = self.sql(
            "SELECT n.*, NULL AS name, NULL AS domain, e.name AS kind_name, "
            "CASE WHEN n.end_ns < 0 THEN NULL ELSE n.end_ns - n.start_ns END AS duration_ns "
            "FROM nvtx n LEFT JOIN enum_nvtx_kind e ON e.id = n.kind ORDER BY n.start_ns, n.id")
        return self._add_strings(df, [("name", "name_id"), ("domain", "domain_id")])

    @_raises_stepscope_error
    def gpu_ops(self):
        """Every GPU op (kernel, memcpy, memset) with duration_ns, its launching API call,
        the NVTX range it is attributed to (nvtx_id, nvtx_name: the innermost push/pop range
        around the launch, on the main thread for ops the autograd thread launched) and its
        step: the gpu_ops_v view (docs/schema.md#gpu_ops_v)."""
        self._ensure_views()
        return pd.read_sql_query("SELECT * FROM gpu_ops_v", self._db)

    @_raises_stepscope_error
    def steps_sql(self):
        """Steps by the NVTX rule, from the steps_v view (docs/schema.md#steps_v): host range,
        GPU work and window, on the trace clock. No kernel-sequence fallback, warm-up status or
        breakdown: use steps() for those."""
        self._ensure_views()
        return pd.read_sql_query("SELECT * FROM steps_v", self._db)

    @_raises_stepscope_error
    def memory(self, section=None, top=10):
        """Without a section: the device/pinned/managed allocation and free events (the memory
        table plus op_name and memory_kind_name). With one (peaks, live_at_peak, largest,
        never_freed, threads, pools, pytorch, pytorch_live_at_peak, oom, oom_live, quality):
        that table of `stepscope memory` (docs/memory.md)."""
        if section is None:
            return self.sql(
                "SELECT m.*, o.name AS op_name, k.name AS memory_kind_name FROM memory m "
                "LEFT JOIN enum_memory_op o ON o.id = m.op "
                "LEFT JOIN enum_memory_kind k ON k.id = m.memory_kind ORDER BY m.ts_ns, m.id")
        out = _cli.run_json(["memory", self.path, "--section", section, "--top", str(top)])
        return _table(out, section)

    _GPU_METRICS_COLUMNS = ("device", "metric", "name", "unit", "start_ns", "end_ns", "value")

    @_raises_stepscope_error
    def gpu_metrics(self):
        """GPU metrics over time (`stepscope profile --gpu-metrics`, CUPTI PM sampling;
        docs/capture.md): one row per sample interval, device and metric, by device, metric and
        start: device, metric (the short label: tensor_active, sm_active, dram_read_bw, ...),
        name (the CUPTI metric name), unit ("%", "B/s", "Hz"), start_ns and end_ns (trace
        clock) and value. Labels and units are the binary's (the rows of its gpu_metrics_sum
        recipe, from the one list of metrics); a metric it does not know keeps its name as the
        label and an empty unit. A trace without GPU metrics (or older than the table) gives an
        empty frame with the same columns."""
        cols = list(self._GPU_METRICS_COLUMNS)
        empty = pd.DataFrame({c: pd.Series(dtype="int64" if c in ("device", "start_ns", "end_ns")
                                           else "float64" if c == "value" else "object")
                              for c in cols})
        if not self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                "name = 'gpu_metrics'").fetchone():
            return empty
        df = self.sql("SELECT g.device, g.metric_id, g.start_ns, g.end_ns, g.value "
                      "FROM gpu_metrics g ORDER BY g.device, g.metric_id, g.start_ns, g.id")
        if df.empty:
            return empty
        df = self._add_strings(df, [("name", "metric_id")])
        out = _cli.run_json(["stats", self.path, "--report", "gpu_metrics_sum"])
        labels = {r["name"]: (r["metric"], r["unit"])
                  for r in _table(out, "gpu_metrics_sum").to_dict("records")}
        df["metric"] = [labels.get(n, (n, ""))[0] for n in df["name"]]
        df["unit"] = [labels.get(n, (n, ""))[1] for n in df["name"]]
        return df[cols]

    # -- the binary's analysis ---------------------------------------------------------------

    @_raises_stepscope_error
    def steps(self, step_range=None):
        """The steps as `stepscope steps` finds them (NVTX step ranges, else the repeating
        kernel sequence; docs/recipes.md#steps): one row per step with start_ns (since the
        trace start), duration_ns, the breakdown percentages, gpu_ops and status (ok, warm-up,
        open). The step_summary row (method, pattern, median_ns, ...) is in .attrs["summary"].
        step_range: a regular expression for --step-range."""
        args = ["steps", self.path]
        if step_range is not None:
            args += ["--step-range", step_range]
        out = _cli.run_json(args)
        df = _table(out, "steps")
        summary = out.get("step_summary") or [{}]
        df.attrs["summary"] = summary[0]
        return df

    @_raises_stepscope_error
    def stats(self, recipe, args=()):
        """One recipe of `stepscope stats` (docs/recipes.md), e.g. "cuda_gpu_kern_sum" or
        "nvtx_gpu_proj_sum", as a DataFrame. args: extra command-line filters such as
        ["--step", "3"] or ["--device", "0"]."""
        out = _cli.run_json(["stats", self.path, "--report", recipe, *args])
        return _table(out, recipe)

    @_raises_stepscope_error
    def findings(self, all=False):  # noqa: A002 - the CLI's flag name
        """The expert rules' findings (`stepscope analyze`, docs/rules.md), costliest first:
        rule, cost_ns, cost_pct, cost_per_step_ns, count, reported, step_before_ns,
        step_after_ns, title, where, detail, fix, gap_host_wait_ns, gap_sync_wait_ns, bound_after
        (what bounds the step once fixed). A healthy trace has none above the threshold;
        all=True also returns those below it (`analyze --all`). The analysis summary (steps,
        busy/idle time, the replay's simulated step, the critical path) is in .attrs["summary"];
        the rules that lacked the evidence to decide, as {rule, reason} rows, in
        .attrs["undecided"]."""
        out = _cli.run_json(["analyze", self.path] + (["--all"] if all else []))
        df = _table(out, "findings")
        summary = out.get("summary") or [{}]
        df.attrs["summary"] = summary[0]
        df.attrs["undecided"] = out.get("undecided") or []
        return df

    @_raises_stepscope_error
    def mfu(self, model=None, micro_batch=None, seq_len=None, dtype=None, args=()):
        """Model FLOPs utilization (`stepscope mfu`, docs/flops.md): one row per step with
        step, duration_ns, status and mfu_pct (empty for warm-up and open steps). The FLOPs come
        from the model (model: a Hugging Face config.json or a Megatron argument file, with
        micro_batch and seq_len; dtype as `plan --dtype`, default bf16), else from the trace's
        stored `stepscope roofline` counters. .attrs["summary"]: the `mfu` row (flop_source,
        tflop_per_step, median_step_ns, peak_key, peak_tflops, peak_source "bench" or
        "datasheet", achieved_tflops, mfu_pct); .attrs["classes"]: the median step's
        kernel classes (GEMM, attention, elementwise, optimizer, communication) with their GPU
        time and model/measured FLOP/s; .attrs["top_kernels"]: its top-5 kernels with their
        roofline position. args: more flags, e.g. ["--lora-rank", "16", "--lora-targets",
        "q_proj,v_proj"] or ["--ceilings", "ceilings.json"]."""
        cmd = ["mfu", self.path]
        for flag, value in (("--model", model), ("--micro-batch", micro_batch), ("--seq-len", seq_len),
                            ("--dtype", dtype)):
            if value is not None:
                cmd += [flag, str(value)]
        out = _cli.run_json(cmd + list(args))
        df = _table(out, "mfu_steps")
        df.attrs["summary"] = (out.get("mfu") or [{}])[0]
        df.attrs["classes"] = out.get("kernel_classes") or []
        df.attrs["top_kernels"] = out.get("top_kernels") or []
        return df


def _table(out, key):
    """The rows of one table of the binary's JSON output: a list of objects, either the whole
    output or under `key`."""
    rows = out if isinstance(out, list) else out.get(key)
    if rows is None:
        raise StepscopeError(f"stepscope output has no table '{key}' "
                             f"(it has: {', '.join(out) if isinstance(out, dict) else 'a list'})")
    return pd.DataFrame.from_records(rows)


def open(path):  # noqa: A001 - the package's entry point, like io.open
    """Opens a stepscope trace read-only and returns a Trace."""
    return Trace(path)
