CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stats (name TEXT PRIMARY KEY, value INTEGER, doc TEXT);
CREATE TABLE IF NOT EXISTS devices (id INTEGER PRIMARY KEY, name_id INTEGER, uuid TEXT, cc_major INTEGER, cc_minor INTEGER, sm_count INTEGER, global_memory_bytes INTEGER, memory_bandwidth_bytes_per_s INTEGER, l2_cache_bytes INTEGER, core_clock_khz INTEGER, max_threads_per_block INTEGER, max_shared_memory_per_block INTEGER, max_warps_per_sm INTEGER);
CREATE TABLE IF NOT EXISTS threads (tid INTEGER PRIMARY KEY, name_id INTEGER);
CREATE TABLE IF NOT EXISTS kernels (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, name_id INTEGER, mangled_id INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, registers_per_thread INTEGER, static_smem_bytes INTEGER, dynamic_smem_bytes INTEGER, graph_id INTEGER, graph_node_id INTEGER);
CREATE TABLE IF NOT EXISTS memcpy (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, bytes INTEGER, copy_kind INTEGER, src_kind INTEGER, dst_kind INTEGER, is_async INTEGER, dst_device INTEGER, graph_id INTEGER);
CREATE TABLE IF NOT EXISTS memset (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, bytes INTEGER, value INTEGER, memory_kind INTEGER, is_async INTEGER, graph_id INTEGER);
CREATE TABLE IF NOT EXISTS api (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, tid INTEGER, correlation INTEGER, domain INTEGER, cbid INTEGER, name_id INTEGER, return_code INTEGER, tracer_ns INTEGER);
CREATE TABLE IF NOT EXISTS sync (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, tid INTEGER, correlation INTEGER, type INTEGER, context INTEGER, stream INTEGER, event INTEGER);
CREATE TABLE IF NOT EXISTS memory (id INTEGER PRIMARY KEY, ts_ns INTEGER, op INTEGER, address INTEGER, bytes INTEGER, memory_kind INTEGER, device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, is_async INTEGER, pool_address INTEGER);
CREATE TABLE IF NOT EXISTS memory_pool (id INTEGER PRIMARY KEY, ts_ns INTEGER, op INTEGER, address INTEGER, size INTEGER, utilized_bytes INTEGER, release_threshold INTEGER, device INTEGER, is_managed INTEGER);
CREATE TABLE IF NOT EXISTS um (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, kind INTEGER, value INTEGER, address INTEGER, src_id INTEGER, dst_id INTEGER, flags INTEGER);
CREATE TABLE IF NOT EXISTS gpu_metrics (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, device INTEGER, metric_id INTEGER, value REAL);
CREATE TABLE IF NOT EXISTS oom (id INTEGER PRIMARY KEY, ts_ns INTEGER, tid INTEGER, device INTEGER, correlation INTEGER, name_id INTEGER, return_code INTEGER, requested_bytes INTEGER, memory_kind INTEGER, free_bytes INTEGER, total_bytes INTEGER);
CREATE TABLE IF NOT EXISTS host_alloc (id INTEGER PRIMARY KEY, ts_ns INTEGER, tid INTEGER, op INTEGER, address INTEGER, bytes INTEGER, kind INTEGER);
CREATE TABLE IF NOT EXISTS nvtx (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, tid INTEGER, end_tid INTEGER, kind INTEGER, depth INTEGER, domain_id INTEGER, name_id INTEGER, category INTEGER, color INTEGER, unclosed INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS overhead (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, tid INTEGER, kind_id INTEGER);
CREATE TABLE IF NOT EXISTS roofline (id INTEGER PRIMARY KEY, rank INTEGER, name_id INTEGER, mangled_id INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, step INTEGER, step_gpu_ns INTEGER, step_launches INTEGER, instances INTEGER, first_launch_index INTEGER, duration_ns REAL, flops REAL, flops_fp64 REAL, flops_fp32 REAL, flops_fp16 REAL, flops_tensor_fp64 REAL, flops_tensor_tf32 REAL, flops_tensor_fp16 REAL, flops_tensor_bf16 REAL, flops_tensor_fp8 REAL, flops_tensor_other REAL, tensor_int_ops REAL, dram_read_bytes REAL, dram_write_bytes REAL, l2_bytes REAL, l1_bytes REAL, intensity_dram REAL, flops_per_s REAL, dram_bytes_per_s REAL, precision TEXT, bound TEXT, bound_kind TEXT, pct_of_bound REAL, counters_json TEXT);
CREATE TABLE IF NOT EXISTS frames (id INTEGER PRIMARY KEY, kind INTEGER, function_id INTEGER, file_id INTEGER, line INTEGER);
CREATE TABLE IF NOT EXISTS callsites (id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER, depth INTEGER);
CREATE TABLE IF NOT EXISTS samples (id INTEGER PRIMARY KEY, ts_ns INTEGER, tid INTEGER, state INTEGER, wait_id INTEGER, callsite_id INTEGER, cpu_ns INTEGER);
CREATE TABLE IF NOT EXISTS native_samples (id INTEGER PRIMARY KEY, ts_ns INTEGER, tid INTEGER, callsite_id INTEGER);
CREATE TABLE IF NOT EXISTS thread_sched (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, tid INTEGER, cpu INTEGER, state INTEGER);
CREATE TABLE IF NOT EXISTS osrt (id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER, tid INTEGER, name_id INTEGER, detail_id INTEGER, callsite_id INTEGER, source INTEGER);
CREATE TABLE IF NOT EXISTS api_callsite (correlation INTEGER, callsite_id INTEGER);
CREATE TABLE IF NOT EXISTS enum_memory_kind (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_copy_kind (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_sync_type (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_memory_op (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_memory_pool_op (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_nvtx_kind (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_api_domain (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_host_alloc_kind (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_um_counter_kind (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_thread_state (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE IF NOT EXISTS enum_frame_kind (id INTEGER PRIMARY KEY, name TEXT);
INSERT OR REPLACE INTO enum_memory_kind VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_memory_kind VALUES(1,'pageable');
INSERT OR REPLACE INTO enum_memory_kind VALUES(2,'pinned');
INSERT OR REPLACE INTO enum_memory_kind VALUES(3,'device');
INSERT OR REPLACE INTO enum_memory_kind VALUES(4,'array');
INSERT OR REPLACE INTO enum_memory_kind VALUES(5,'managed');
INSERT OR REPLACE INTO enum_memory_kind VALUES(6,'device_static');
INSERT OR REPLACE INTO enum_memory_kind VALUES(7,'managed_static');
INSERT OR REPLACE INTO enum_copy_kind VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_copy_kind VALUES(1,'HtoD');
INSERT OR REPLACE INTO enum_copy_kind VALUES(2,'DtoH');
INSERT OR REPLACE INTO enum_copy_kind VALUES(3,'HtoA');
INSERT OR REPLACE INTO enum_copy_kind VALUES(4,'AtoH');
INSERT OR REPLACE INTO enum_copy_kind VALUES(5,'AtoA');
INSERT OR REPLACE INTO enum_copy_kind VALUES(6,'AtoD');
INSERT OR REPLACE INTO enum_copy_kind VALUES(7,'DtoA');
INSERT OR REPLACE INTO enum_copy_kind VALUES(8,'DtoD');
INSERT OR REPLACE INTO enum_copy_kind VALUES(9,'HtoH');
INSERT OR REPLACE INTO enum_copy_kind VALUES(10,'PtoP');
INSERT OR REPLACE INTO enum_sync_type VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_sync_type VALUES(1,'event_synchronize');
INSERT OR REPLACE INTO enum_sync_type VALUES(2,'stream_wait_event');
INSERT OR REPLACE INTO enum_sync_type VALUES(3,'stream_synchronize');
INSERT OR REPLACE INTO enum_sync_type VALUES(4,'context_synchronize');
INSERT OR REPLACE INTO enum_memory_op VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_memory_op VALUES(1,'alloc');
INSERT OR REPLACE INTO enum_memory_op VALUES(2,'free');
INSERT OR REPLACE INTO enum_memory_pool_op VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_memory_pool_op VALUES(1,'created');
INSERT OR REPLACE INTO enum_memory_pool_op VALUES(2,'destroyed');
INSERT OR REPLACE INTO enum_memory_pool_op VALUES(3,'trimmed');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(1,'bytes_htod');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(2,'bytes_dtoh');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(3,'cpu_page_fault');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(4,'gpu_page_fault');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(5,'thrashing');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(6,'throttling');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(7,'remote_map');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(8,'bytes_dtod');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(9,'driver_htod');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(10,'driver_dtoh');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(11,'driver_cpu_faults');
INSERT OR REPLACE INTO enum_um_counter_kind VALUES(12,'driver_gpu_faults');
INSERT OR REPLACE INTO enum_thread_state VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_thread_state VALUES(1,'running');
INSERT OR REPLACE INTO enum_thread_state VALUES(2,'blocked_cuda');
INSERT OR REPLACE INTO enum_thread_state VALUES(3,'blocked_gil');
INSERT OR REPLACE INTO enum_thread_state VALUES(4,'blocked_lock');
INSERT OR REPLACE INTO enum_thread_state VALUES(5,'blocked_io');
INSERT OR REPLACE INTO enum_thread_state VALUES(6,'sleep');
INSERT OR REPLACE INTO enum_thread_state VALUES(7,'blocked_other');
INSERT OR REPLACE INTO enum_frame_kind VALUES(0,'unknown');
INSERT OR REPLACE INTO enum_frame_kind VALUES(1,'python');
INSERT OR REPLACE INTO enum_frame_kind VALUES(2,'native');
INSERT OR REPLACE INTO enum_frame_kind VALUES(3,'cuda_api');
INSERT OR REPLACE INTO enum_nvtx_kind VALUES(1,'push_pop'),(2,'start_end'),(3,'mark');
INSERT OR REPLACE INTO enum_api_domain VALUES(0,'runtime'),(1,'driver');
INSERT OR REPLACE INTO enum_host_alloc_kind VALUES(0,'unknown'),(1,'malloc'),(2,'mmap');
INSERT OR IGNORE INTO strings(id, value) VALUES(0, '');
CREATE VIEW IF NOT EXISTS kernels_v AS SELECT k.*, s.value AS name FROM kernels k LEFT JOIN strings s ON s.id = k.name_id;
CREATE VIEW IF NOT EXISTS api_v AS SELECT a.*, s.value AS name FROM api a LEFT JOIN strings s ON s.id = a.name_id;
CREATE VIEW IF NOT EXISTS nvtx_v AS SELECT n.*, s.value AS name, d.value AS domain FROM nvtx n LEFT JOIN strings s ON s.id = n.name_id LEFT JOIN strings d ON d.id = n.domain_id;
CREATE VIEW IF NOT EXISTS gpu_ops_v AS WITH
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
,
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
    SELECT c.*, COALESCE(
      (SELECT n.id FROM nvtx n WHERE n.tid = c.tid AND n.kind = 1 AND n.start_ns <= c.start_ns
         AND n.start_ns >= c.start_ns - COALESCE((SELECT ns FROM thread_span WHERE tid = c.tid), 0)
         AND (n.end_ns < 0 OR n.end_ns > c.start_ns)
       ORDER BY n.start_ns DESC,
                CASE WHEN n.end_ns < 0 THEN 9223372036854775807 ELSE n.end_ns END,
                n.depth DESC, n.id DESC LIMIT 1),

      (SELECT n.id FROM nvtx n WHERE n.tid = (SELECT tid FROM main_thread) AND n.kind = 1 AND n.start_ns <= c.start_ns
         AND n.start_ns >= c.start_ns - COALESCE((SELECT ns FROM thread_span WHERE tid = (SELECT tid FROM main_thread)), 0)
         AND (n.end_ns < 0 OR n.end_ns > c.start_ns)
       ORDER BY n.start_ns DESC,
                CASE WHEN n.end_ns < 0 THEN 9223372036854775807 ELSE n.end_ns END,
                n.depth DESC, n.id DESC LIMIT 1)) AS nvtx_id
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
FROM sorted x LEFT JOIN strings s ON s.id = x.name_id LEFT JOIN strings n ON n.id = x.nvtx_name_id;
CREATE VIEW IF NOT EXISTS steps_v AS WITH
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
,
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
FROM ends ORDER BY k;
CREATE INDEX IF NOT EXISTS kernels_correlation ON kernels(correlation);
CREATE INDEX IF NOT EXISTS memcpy_correlation ON memcpy(correlation);
CREATE INDEX IF NOT EXISTS memset_correlation ON memset(correlation);
CREATE INDEX IF NOT EXISTS api_correlation ON api(correlation);
CREATE INDEX IF NOT EXISTS memory_address ON memory(address);
CREATE INDEX IF NOT EXISTS nvtx_start ON nvtx(start_ns);
CREATE INDEX IF NOT EXISTS nvtx_tid ON nvtx(tid, start_ns);
CREATE INDEX IF NOT EXISTS samples_tid ON samples(tid, ts_ns);
CREATE INDEX IF NOT EXISTS native_samples_tid ON native_samples(tid, ts_ns);
CREATE INDEX IF NOT EXISTS api_callsite_correlation ON api_callsite(correlation);
