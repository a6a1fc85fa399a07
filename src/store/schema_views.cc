// The analysis views gpu_ops_v and steps_v: the two joins people get wrong
// when they query a trace by hand, written once in SQL so that sqlite3 users,
// the Python API (python/stepscope) and the docs share one definition.
//
// Attribution follows TraceModel (src/analysis/model/trace_model.cc): a GPU op's
// launching call is the api row with its correlation id (the earliest, when
// an id repeats); the op belongs to the innermost push/pop NVTX range open on
// the calling thread when the call started (start <= t < end). When that
// thread has no such range (PyTorch's autograd thread launches the backward
// kernels), the range open at that time on the main thread (the thread with
// the most push/pop ranges, the smaller tid on a tie) counts. Ties between
// ranges that start together go to the shorter (inner) one. The
// nvtx_gpu_proj_sum recipe credits each op to this range and all ranges
// enclosing it on the same thread.
//
// Steps follow the one step definition of src/common/step_names.h: ranges
// named "step N" (case-insensitive; "step_N", "Step N", ...; N of 1 to 18
// digits), else torch.profiler's "ProfilerStep#N", else "iteration N" (the
// ranges `profile` puts between optimizer steps); never in the GPU-side
// domain gpu_user_annotation; of positive length; on the thread with the most
// of them; in start order, a range starting inside one already taken is left
// out (a recursive walk carries the last taken end). SQLite has no regular
// expressions, so the name test is spelled with TRIM/LTRIM/GLOB. The kernel-sequence fallback, the
// --step-range option, warm-up status and the breakdown are not expressed
// here: `stepscope steps` (and Python's Trace.steps()) has them.
//
// The views use window functions (SQLite >= 3.25) and no MATERIALIZED hints:
// an SQLite that cannot parse a view cannot open the file at all.
#include "store/schema.h"

namespace stepscope {
namespace {

// Outermost step ranges, as the columns of steps_v's first half. No ';'.
constexpr const char* kStepRangesSql = R"(
  r AS (
    SELECT n.id, n.tid, n.kind, n.depth, n.start_ns, n.end_ns, s.value AS name,
           CASE WHEN n.end_ns < 0 THEN 9223372036854775807 ELSE n.end_ns END AS end_key,
           TRIM(s.value, ' ' || char(9) || char(10) || char(11) || char(12) || char(13)) AS t
    FROM nvtx n JOIN strings s ON s.id = n.name_id
    WHERE n.kind IN (1, 2)
      AND COALESCE((SELECT value FROM strings WHERE id = n.domain_id), '') <> 'gpu_user_annotation'),
  named AS (
    SELECT r.*, CAST(LTRIM(SUBSTR(t, 5), ' _#:-') AS INTEGER) AS number FROM r
    WHERE LOWER(SUBSTR(t, 1, 4)) = 'step' AND LTRIM(SUBSTR(t, 5), ' _#:-') <> ''
      AND LTRIM(SUBSTR(t, 5), ' _#:-') NOT GLOB '*[^0-9]*'
      AND LENGTH(LTRIM(SUBSTR(t, 5), ' _#:-')) <= 18),
  profiler AS (
    SELECT r.*, CAST(SUBSTR(name, 14) AS INTEGER) AS number FROM r
    WHERE name GLOB 'ProfilerStep#[0-9]*' AND SUBSTR(name, 14) NOT GLOB '*[^0-9]*'
      AND LENGTH(SUBSTR(name, 14)) <= 18),
  iteration AS (
    SELECT r.*, CAST(SUBSTR(name, 11) AS INTEGER) AS number FROM r
    WHERE name GLOB 'iteration [0-9]*' AND SUBSTR(name, 11) NOT GLOB '*[^0-9]*'
      AND LENGTH(SUBSTR(name, 11)) <= 18),
  matched_any AS (
    SELECT * FROM named WHERE end_key > start_ns
    UNION ALL
    SELECT * FROM profiler WHERE end_key > start_ns
      AND NOT EXISTS (SELECT 1 FROM named WHERE end_key > start_ns)
    UNION ALL
    SELECT * FROM iteration WHERE end_key > start_ns
      AND NOT EXISTS (SELECT 1 FROM named WHERE end_key > start_ns)
      AND NOT EXISTS (SELECT 1 FROM profiler WHERE end_key > start_ns)),
  ordered AS (
    SELECT m.*, ROW_NUMBER() OVER (ORDER BY start_ns, end_key DESC, id) AS rn FROM matched_any m),
  step_tid AS (
    SELECT o.tid FROM ordered o
    GROUP BY o.tid ORDER BY COUNT(*) DESC, MIN(o.rn) LIMIT 1),
  on_thread AS (
    SELECT o.*, ROW_NUMBER() OVER (ORDER BY o.rn) AS k FROM ordered o
    WHERE o.tid = (SELECT tid FROM step_tid)),
  walk(k, taken, last_end) AS (
    SELECT 0, 0, -9223372036854775807
    UNION ALL
    SELECT o.k, o.start_ns >= w.last_end,
           CASE WHEN o.start_ns >= w.last_end THEN o.end_key ELSE w.last_end END
    FROM walk w JOIN on_thread o ON o.k = w.k + 1),
  step_ranges AS (
    SELECT m.number AS step, m.name, m.id AS nvtx_id, m.tid, m.start_ns AS range_start_ns,
           CASE WHEN m.end_ns < 0 THEN NULL ELSE m.end_ns END AS range_end_ns,
           m.end_ns >= 0 AS complete
    FROM on_thread m JOIN walk w ON w.k = m.k AND w.taken)
)";

// Innermost push/pop range open on thread $TID at time $T (placeholders). The
// scan of the (tid, start_ns) index goes back from $T no further than the
// thread's longest range (thread_span), so a thread without an open range
// (the autograd thread, mostly) costs a few rows per call, not all of them.
constexpr const char* kInnermostRangeSql = R"(
      (SELECT n.id FROM nvtx n WHERE n.tid = $TID AND n.kind = 1 AND n.start_ns <= $T
         AND n.start_ns >= $T - COALESCE((SELECT ns FROM thread_span WHERE tid = $TID), 0)
         AND (n.end_ns < 0 OR n.end_ns > $T)
       ORDER BY n.start_ns DESC,
                CASE WHEN n.end_ns < 0 THEN 9223372036854775807 ELSE n.end_ns END,
                n.depth DESC, n.id DESC LIMIT 1))";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
  return s;
}

std::string InnermostRange(const std::string& tid, const std::string& t) {
  return Replace(Replace(kInnermostRangeSql, "$TID", tid), "$T", t);
}

// Per launching call (the first api row of each correlation id): its range and
// its step; then every op joins its call. Names travel as string ids through
// every sort and materialization and are looked up last, once per output row
// (`sorted` is not flattened into the final select: it has a LIMIT and that
// select is a join): a 100 kB name on every kernel is then neither sorted nor
// spilled to temporary files row by row (the fuzz campaign's 13 MB trace of
// 100 kB names: 2.8 GB of sorter files and ~60 s before; issue 36). The step is the one whose range
// started last at or before the call, if that range is still open then (a
// running maximum over the merged timeline of step starts and calls). The
// `LIMIT -1`s keep SQLite from flattening a CTE into the join that reads it
// (which would evaluate the range lookups once per use and per op); the api
// branch of `timeline` comes first so that its columns keep the INTEGER
// affinity an automatic index on `correlation` needs.
std::string GpuOpsSql() {
  const std::string own = InnermostRange("c.tid", "c.start_ns");
  const std::string main = InnermostRange("(SELECT tid FROM main_thread)", "c.start_ns");
  return std::string("WITH") + kStepRangesSql + R"(,
  ops AS (
    SELECT 'kernel' AS kind, k.id, k.start_ns, MAX(k.end_ns, k.start_ns) AS end_ns, k.device,
           k.stream, k.correlation, k.name_id, NULL AS name, NULL AS bytes
    FROM kernels k
    UNION ALL
    SELECT 'memcpy', m.id, m.start_ns, MAX(m.end_ns, m.start_ns), m.device, m.stream,
           m.correlation, NULL, '[CUDA memcpy ' || COALESCE(c.name, 'Unknown') || ']', m.bytes
    FROM memcpy m LEFT JOIN enum_copy_kind c ON c.id = m.copy_kind
    UNION ALL
    SELECT 'memset', z.id, z.start_ns, MAX(z.end_ns, z.start_ns), z.device, z.stream,
           z.correlation, NULL, '[CUDA memset]', z.bytes FROM memset z),
  main_thread AS (
    SELECT tid FROM nvtx WHERE kind = 1 GROUP BY tid ORDER BY COUNT(*) DESC, tid LIMIT 1),
  thread_span AS (
    SELECT tid, MAX(CASE WHEN end_ns < 0 THEN 4611686018427387904 ELSE end_ns - start_ns END)
             AS ns
    FROM nvtx WHERE kind = 1 GROUP BY tid),
  step_start AS (
    SELECT range_start_ns, MAX(nvtx_id) AS nvtx_id FROM step_ranges GROUP BY range_start_ns),
  timeline AS (
    SELECT start_ns AS t, 1 AS is_call, id AS api_id, tid, correlation FROM (
      SELECT correlation, id, tid, start_ns,
             ROW_NUMBER() OVER (PARTITION BY correlation ORDER BY start_ns, id) AS n
      FROM api WHERE correlation <> 0) WHERE n = 1
    UNION ALL
    SELECT range_start_ns, 0, NULL, NULL, NULL FROM step_start),
  latest AS (
    SELECT timeline.*, MAX(CASE WHEN is_call = 0 THEN t END)
                           OVER (ORDER BY t, is_call ROWS UNBOUNDED PRECEDING) AS step_start_ns
    FROM timeline),
  calls AS (
    SELECT x.correlation, x.api_id, x.tid, x.t AS start_ns, sr.step, sr.nvtx_id AS step_nvtx_id
    FROM latest x
    LEFT JOIN step_start ss ON ss.range_start_ns = x.step_start_ns
    LEFT JOIN step_ranges sr ON sr.nvtx_id = ss.nvtx_id
                            AND (sr.range_end_ns IS NULL OR x.t < sr.range_end_ns)
    WHERE x.is_call = 1),
  call_range AS (
    SELECT c.*, COALESCE()" +
         own + ",\n" + main + R"() AS nvtx_id
    FROM calls c LIMIT -1),
  launch AS (
    SELECT c.*, r.name_id AS nvtx_name_id, r.tid AS nvtx_tid, r.depth AS nvtx_depth
    FROM call_range c LEFT JOIN nvtx r ON r.id = c.nvtx_id LIMIT -1),
  sorted AS (
    SELECT o.kind, o.id, o.start_ns, o.end_ns, o.device, o.stream, o.correlation, o.name_id,
           o.name, o.bytes, l.api_id, l.tid AS api_tid, l.start_ns AS api_start_ns, l.nvtx_id,
           l.nvtx_name_id, l.nvtx_tid, l.nvtx_depth, l.step, l.step_nvtx_id
    FROM ops o LEFT JOIN launch l ON l.correlation = o.correlation AND o.correlation <> 0
    ORDER BY o.start_ns, o.kind, o.id LIMIT -1)
SELECT x.kind, x.id, x.start_ns, x.end_ns, x.end_ns - x.start_ns AS duration_ns, x.device,
       x.stream, x.correlation, COALESCE(x.name, s.value) AS name, x.bytes, x.api_id, x.api_tid,
       x.api_start_ns, x.nvtx_id, n.value AS nvtx_name, x.nvtx_tid, x.nvtx_depth, x.step,
       x.step_nvtx_id
FROM sorted x LEFT JOIN strings s ON s.id = x.name_id LEFT JOIN strings n ON n.id = x.nvtx_name_id)";
}

std::string StepsSql() {
  return std::string("WITH") + kStepRangesSql + R"(,
  work AS (
    SELECT step_nvtx_id, COUNT(*) AS gpu_ops, MIN(start_ns) AS gpu_first_ns,
           MAX(end_ns) AS gpu_last_ns
    FROM gpu_ops_v WHERE step_nvtx_id IS NOT NULL GROUP BY step_nvtx_id),
  -- where a step without GPU work and a never-closed range ends: the last event, as in
  -- TraceModel::end_ns()
  trace_end AS (
    SELECT MAX((SELECT MAX(end_ns) FROM kernels), (SELECT MAX(end_ns) FROM memcpy),
               (SELECT MAX(end_ns) FROM memset), (SELECT MAX(end_ns) FROM api),
               (SELECT MAX(end_ns) FROM nvtx), (SELECT MAX(end_ns) FROM sync),
               (SELECT MAX(ts_ns) FROM memory)) AS ns),
  s AS (
    SELECT sr.*, COALESCE(w.gpu_ops, 0) AS gpu_ops, w.gpu_first_ns, w.gpu_last_ns,
           ROW_NUMBER() OVER (ORDER BY sr.range_start_ns, sr.nvtx_id) AS k,
           CASE WHEN w.gpu_ops > 0 THEN w.gpu_last_ns
                ELSE COALESCE(sr.range_end_ns,
                              MAX(sr.range_start_ns, (SELECT ns FROM trace_end))) END AS work_end,
           CASE WHEN w.gpu_ops > 0 THEN MIN(sr.range_start_ns, w.gpu_first_ns)
                ELSE sr.range_start_ns END AS first_start
    FROM step_ranges sr LEFT JOIN work w ON w.step_nvtx_id = sr.nvtx_id),
  ends AS (
    SELECT s.*,
           MAX(FIRST_VALUE(first_start) OVER (ORDER BY k),
               MAX(work_end) OVER (ORDER BY k ROWS UNBOUNDED PRECEDING)) AS window_end
    FROM s)
SELECT step, name, nvtx_id, tid, range_start_ns, range_end_ns, complete, gpu_ops, gpu_first_ns,
       gpu_last_ns,
       COALESCE(LAG(window_end) OVER (ORDER BY k), first_start) AS start_ns,
       window_end AS end_ns,
       window_end - COALESCE(LAG(window_end) OVER (ORDER BY k), first_start) AS duration_ns
FROM ends ORDER BY k)";
}

std::vector<ViewDef> BuildViews() {
  std::vector<ViewDef> v;
  v.push_back(
      {"gpu_ops_v",
       "Every GPU op (kernel, memcpy, memset) with its duration, its launching API call, the "
       "NVTX range it is attributed to and its step. Attribution follows the launching call "
       "(correlation id), then the innermost push/pop range open on the calling thread at the "
       "call's start; when that thread has none (PyTorch's autograd thread launches the "
       "backward kernels), the range open at that time on the main thread (the thread with the "
       "most push/pop ranges). This is the attribution of the `nvtx_gpu_proj_sum` recipe. "
       "Joining kernels to api to nvtx by thread alone loses every backward kernel.",
       {{"kind", "TEXT", "kernel, memcpy or memset"},
        {"id", "INTEGER", "row id in the kernels, memcpy or memset table"},
        {"start_ns", "INTEGER", "start, ns (trace clock)"},
        {"end_ns", "INTEGER", "end, ns (never before start_ns)"},
        {"duration_ns", "INTEGER", "end_ns - start_ns"},
        {"device", "INTEGER", "devices.id"},
        {"stream", "INTEGER", "CUDA stream id"},
        {"correlation", "INTEGER", "correlation id (0: none)"},
        {"name", "TEXT", "kernel name, or [CUDA memcpy <kind>], [CUDA memset]"},
        {"bytes", "INTEGER", "bytes copied or set; NULL for kernels"},
        {"api_id", "INTEGER", "api.id of the launching call; NULL when not recorded"},
        {"api_tid", "INTEGER", "thread of the launching call"},
        {"api_start_ns", "INTEGER", "when the launching call started, ns"},
        {"nvtx_id", "INTEGER", "nvtx.id of the innermost push/pop range the op is attributed to"},
        {"nvtx_name", "TEXT", "that range's name"},
        {"nvtx_tid", "INTEGER", "that range's thread (differs from api_tid for autograd ops)"},
        {"nvtx_depth", "INTEGER", "that range's nesting depth (0 = outermost)"},
        {"step", "INTEGER",
         "number of the step the op was launched in (see steps_v): the step range that "
         "started last at or before the launching call, if still open then; NULL outside "
         "every step"},
        {"step_nvtx_id", "INTEGER", "nvtx.id of that step's range (steps_v.nvtx_id)"}},
       GpuOpsSql(),
       {{"GPU time per innermost range (where the time goes, autograd included)",
         "SELECT nvtx_name, COUNT(*) AS ops, SUM(duration_ns) AS gpu_ns\n"
         "FROM gpu_ops_v GROUP BY nvtx_name ORDER BY gpu_ns DESC;"},
        {"The same per-range totals as `stepscope stats --report nvtx_gpu_proj_sum` "
         "(`total_proj_ns`, `total_gpu_ops`): each op counts in its range and every range "
         "enclosing it on that range's thread",
         "WITH credited AS (\n"
         "  SELECT n.id AS range_id, n.domain_id, n.name_id, o.start_ns, o.end_ns\n"
         "  FROM gpu_ops_v o JOIN nvtx n ON n.tid = o.nvtx_tid AND n.kind = 1\n"
         "   AND n.start_ns <= o.api_start_ns AND (n.end_ns < 0 OR o.api_start_ns < n.end_ns)),\n"
         "per_range AS (\n"
         "  SELECT range_id, domain_id, name_id, MAX(end_ns) - MIN(start_ns) AS proj_ns,\n"
         "         COUNT(*) AS ops FROM credited GROUP BY range_id)\n"
         "SELECT CASE WHEN d.value <> '' THEN d.value || ':' ELSE '' END || s.value AS range,\n"
         "       COUNT(*) AS instances, SUM(proj_ns) AS total_proj_ns, SUM(ops) AS total_gpu_ops\n"
         "FROM per_range JOIN strings s ON s.id = name_id LEFT JOIN strings d ON d.id = domain_id\n"
         "GROUP BY domain_id, name_id ORDER BY total_proj_ns DESC;"},
        {"Top kernels of step 3",
         "SELECT name, COUNT(*) AS launches, SUM(duration_ns) AS gpu_ns FROM gpu_ops_v\n"
         "WHERE step = 3 AND kind = 'kernel' GROUP BY name ORDER BY gpu_ns DESC LIMIT 5;"}}});
  v.push_back(
      {"steps_v",
       "Training steps found by the NVTX rule of `stepscope steps`: the outermost ranges named "
       "`step N` (also `step_N`, `Step N`, ...), else `ProfilerStep#N`, else `iteration N` "
       "(the ranges `profile` puts between optimizer steps), in start order, with "
       "the GPU work launched in each and its window on the GPU timeline (from the end of the "
       "previous step's GPU work to the end of its own; docs/recipes.md#steps). Not here: the "
       "kernel-sequence fallback for traces without step ranges, `--step-range`, warm-up "
       "status and the compute/communication/memory breakdown: `stepscope steps` (and "
       "Python's `Trace.steps()`, which runs it) has them. On a trace with step ranges, "
       "`step`, `start_ns` and `duration_ns` equal the command's (which prints times since the "
       "trace start).",
       {{"step", "INTEGER", "step number: the number in the range name"},
        {"name", "TEXT", "range name"},
        {"nvtx_id", "INTEGER", "nvtx.id of the step's range"},
        {"tid", "INTEGER", "thread of the range"},
        {"range_start_ns", "INTEGER", "host range start, ns"},
        {"range_end_ns", "INTEGER", "host range end, ns; NULL when never closed"},
        {"complete", "INTEGER", "1 when the range closed; 0 for a cut-off trace's last step"},
        {"gpu_ops", "INTEGER", "GPU ops launched while the range was open (any thread)"},
        {"gpu_first_ns", "INTEGER", "first start of those ops, ns; NULL without ops"},
        {"gpu_last_ns", "INTEGER", "last end of those ops, ns; NULL without ops"},
        {"start_ns", "INTEGER", "window start on the GPU timeline, ns"},
        {"end_ns", "INTEGER", "window end, ns"},
        {"duration_ns", "INTEGER", "window length, ns: the step time"}},
       StepsSql(),
       {{"Step times", "SELECT step, duration_ns / 1e6 AS ms, gpu_ops FROM steps_v;"},
        {"GPU busy time per step (sum of op durations; overlapping ops count twice)",
         "SELECT s.step, s.duration_ns, SUM(o.duration_ns) AS op_ns\n"
         "FROM steps_v s JOIN gpu_ops_v o ON o.step_nvtx_id = s.nvtx_id\n"
         "GROUP BY s.nvtx_id ORDER BY s.start_ns;"}}});
  return v;
}

}  // namespace

const std::vector<ViewDef>& SchemaViews() {
  static const std::vector<ViewDef> views = BuildViews();
  return views;
}

std::string SchemaViewsSql() {
  std::string sql;
  for (const ViewDef& v : SchemaViews()) {
    sql += "CREATE VIEW IF NOT EXISTS " + std::string(v.name) + " AS " + v.sql + ";\n";
  }
  return sql;
}

std::string SchemaViewsMarkdown() {
  std::string md = "## Views\n\n";
  md +=
      "Views `kernels_v`, `api_v` and `nvtx_v` add the resolved names to their tables for "
      "ad-hoc SQL. The two views below answer the questions that naive joins get wrong. A trace "
      "written by an older stepscope lacks them: `stepscope schema --sql` prints their CREATE "
      "statements, and the Python API (docs/python.md) adds them as temporary views. They use "
      "window functions: reading a trace that has them takes SQLite 3.25 (2018) or newer, "
      "as in Debian 10, Ubuntu 20.04, RHEL 8 and later.\n\n";
  for (const ViewDef& v : SchemaViews()) {
    md += "### `" + std::string(v.name) + "`\n\n" + v.doc + "\n\n";
    md += "| column | type | meaning |\n|---|---|---|\n";
    for (const ColumnDef& c : v.columns) {
      md += "| `" + std::string(c.name) + "` | " + c.type + " | " + c.doc + " |\n";
    }
    md += "\nExample queries:\n\n";
    for (const ViewExample& e : v.examples) {
      md += std::string(e.what) + ":\n\n```sql\n" + e.sql + "\n```\n\n";
    }
  }
  return md;
}

}  // namespace stepscope
