# stepscope import: torch.profiler (Kineto) JSON and Nsight Systems SQLite
# exports into stepscope traces; bad inputs fail with one line naming the file
# and the position, exit code 2, and leave no output file behind.
KINETO_QUERIES = (
    "SELECT id, start_ns, end_ns, device, context, stream, correlation, grid_x, grid_y, grid_z, block_x,"
    " registers_per_thread, static_smem_bytes, dynamic_smem_bytes, name FROM kernels_v ORDER BY id;"
    "SELECT id, start_ns, end_ns, tid, correlation, domain, cbid, name FROM api_v ORDER BY id;"
    "SELECT * FROM memcpy; SELECT * FROM memset; SELECT * FROM sync;"
    "SELECT start_ns, end_ns, tid, kind, depth, domain, name FROM nvtx_v ORDER BY tid, start_ns;"
    "SELECT o.start_ns, o.end_ns, o.tid, s.value FROM overhead o JOIN strings s ON s.id = o.kind_id;"
    "SELECT t.tid, s.value FROM threads t JOIN strings s ON s.id = t.name_id ORDER BY t.tid;"
    "SELECT d.id, s.value, d.cc_major, d.cc_minor, d.sm_count, d.global_memory_bytes,"
    " d.max_threads_per_block, d.max_shared_memory_per_block, d.max_warps_per_sm"
    " FROM devices d JOIN strings s ON s.id = d.name_id;"
    "SELECT key, value FROM meta WHERE key NOT IN ('tool_version') ORDER BY key;"
)
NSYS_QUERIES = (
    "SELECT id, start_ns, end_ns, device, context, stream, correlation, grid_x, block_x, registers_per_thread,"
    " static_smem_bytes, dynamic_smem_bytes, graph_id, graph_node_id, name,"
    " (SELECT value FROM strings WHERE id = mangled_id) AS mangled FROM kernels_v ORDER BY id;"
    "SELECT id, start_ns, end_ns, tid, correlation, domain, name FROM api_v ORDER BY id;"
    "SELECT * FROM memcpy; SELECT * FROM memset; SELECT * FROM sync;"
    "SELECT start_ns, end_ns, tid, end_tid, kind, depth, domain, name, category, color FROM nvtx_v"
    " ORDER BY tid, start_ns;"
    "SELECT t.tid, s.value FROM threads t JOIN strings s ON s.id = t.name_id ORDER BY t.tid;"
    "SELECT d.id, s.value, d.uuid, d.cc_major, d.sm_count, d.global_memory_bytes, d.memory_bandwidth_bytes_per_s,"
    " d.l2_cache_bytes, d.core_clock_khz, d.max_shared_memory_per_block, d.max_warps_per_sm"
    " FROM devices d JOIN strings s ON s.id = d.name_id;"
    "SELECT key, value FROM meta WHERE key NOT IN ('tool_version') ORDER BY key;"
)
OUT = ["-o", "{tmp}/out.sqlite"]
LS = ["sh", "-c", "echo '-- files left:'; ls -A {tmp}"]


def bad(name, fixture, extra=()):
    return DiffTest(name=name, cmd=["import", "{trace}"] + list(extra) + OUT, trace="import/" + fixture,
                    out="import/" + name + ".err", rc=2, stderr=True, post=LS)


TESTS = [
    DiffTest(name="import_kineto_small", cmd=["import", "{trace}"] + OUT, trace="import/kineto_small.json",
             out="import/kineto_small.out", post=["sqlite3", "-header", "{tmp}/out.sqlite", KINETO_QUERIES]),
    DiffTest(name="import_kineto_small_gzip", cmd=["import", "{trace}"] + OUT,
             trace="import/kineto_small.json.gz", out="import/kineto_small_gzip.out",
             post=["sqlite3", "-header", "{tmp}/out.sqlite", KINETO_QUERIES]),
    DiffTest(name="import_kineto_summary_csv", cmd=["import", "{trace}", "--format", "csv"] + OUT,
             trace="import/kineto_small.json", out="import/kineto_small_summary.csv"),
    DiffTest(name="import_nsys_basic", cmd=["import", "{trace}"] + OUT, trace="import/nsys_basic.db.sql",
             out="import/nsys_basic.out", post=["sqlite3", "-header", "{tmp}/out.sqlite", NSYS_QUERIES]),
    bad("import_bad_empty_file", "empty.json"),
    bad("import_bad_invalid_json", "invalid.json"),
    bad("import_bad_json_array", "array.json"),
    bad("import_bad_truncated_json", "truncated.json"),
    bad("import_bad_truncated_gzip", "truncated.json.gz"),
    bad("import_bad_no_trace_events", "no_trace_events.json"),
    bad("import_bad_unrecognized", "not_a_trace.txt"),
    bad("import_bad_sqlite_not_a_trace", "not_a_trace.db.sql"),
    bad("import_bad_already_stepscope", "stepscope_trace.sql"),
    bad("import_bad_forced_format", "kineto_small.json", ["--input-format", "nsys"]),
    DiffTest(name="import_missing_output_flag", cmd=["import", "{trace}"], trace="import/kineto_small.json",
             out="import/missing_output.err", rc=2, stderr=True),
]
