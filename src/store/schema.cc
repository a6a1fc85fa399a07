#include "store/schema.h"

#include "format/records.h"
#include "store/record_sql.h"

namespace stepscope {
namespace {

// The trace itself: its facts, strings, counters, devices and threads.
void AddTraceTables(std::vector<TableDef>& t) {
  t.push_back({"meta",
               "Key/value facts about the trace: schema version, process, clock, capture "
               "settings. Keys are listed below the tables.",
               {{"key", "TEXT PRIMARY KEY", "name of the fact"}, {"value", "TEXT", "its value"}},
               {},
               false});
  t.push_back({"strings",
               "Interned strings. Every *_id column that names a string points here; id 0 "
               "is the empty string.",
               {{"value", "TEXT NOT NULL", "the string"}},
               {}});
  t.push_back({"stats",
               "Counters about the capture or import itself: dropped records, buffers, "
               "malformed events. Bad input becomes data here rather than an error.",
               {{"name", "TEXT PRIMARY KEY", "counter name, e.g. cupti_dropped_records"},
                {"value", "INTEGER", "counter value"},
                {"doc", "TEXT", "what the counter counts"}},
               {},
               false});
  t.push_back({"devices",
               "GPUs seen by the traced process (CUPTI device records).",
               RecordColumns<DeviceRecord>(),
               {}});
  t.push_back({"threads",
               "Host threads seen in the trace (OS thread id = tid).",
               {{"tid", "INTEGER PRIMARY KEY", "OS thread id (gettid)"},
                {"name_id", "INTEGER", "thread name (strings.id): nvtxNameOsThread or /proc comm"}},
               {},
               false});
}

// What CUPTI records: kernels, copies, memsets, API calls, syncs, device memory, OOMs.
void AddGpuTables(std::vector<TableDef>& t) {
  t.push_back({"kernels",
               "GPU kernel executions (CUPTI CONCURRENT_KERNEL).",
               RecordColumns<KernelRecord>(),
               {"kernels_correlation(correlation)"}});
  t.push_back({"memcpy",
               "GPU memory copies (CUPTI MEMCPY and MEMCPY2).",
               RecordColumns<MemcpyRecord>(),
               {"memcpy_correlation(correlation)"}});
  t.push_back({"memset",
               "GPU memsets (CUPTI MEMSET).",
               RecordColumns<MemsetRecord>(),
               {"memset_correlation(correlation)"}});
  t.push_back({"api",
               "CUDA runtime and driver API calls. Captured traces hold only the chosen set "
               "(launches, graph launch, memcpy/memset, synchronization, stream-wait-event, "
               "malloc/free families): see docs/capture.md.",
               RecordColumns<ApiRecord>(),
               {"api_correlation(correlation)"}});
  t.push_back({"sync",
               "Host-side synchronizations (CUPTI SYNCHRONIZATION): the thread waited in "
               "[start_ns, end_ns].",
               RecordColumns<SyncRecord>(),
               {}});
  t.push_back({"memory",
               "Device, pinned-host and managed memory allocations and frees (CUPTI MEMORY2).",
               RecordColumns<MemoryRecord>(),
               {"memory_address(address)"}});
  t.push_back({"memory_pool",
               "Stream-ordered memory pool events (CUPTI MEMORY_POOL).",
               RecordColumns<MemoryPoolRecord>(),
               {}});
  t.push_back(
      {"um",
       "Unified-memory events (CUPTI UNIFIED_MEMORY_COUNTER; nsys "
       "CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER): page migrations between host and device, "
       "GPU fault groups, CPU page faults, thrashing, throttling, remote maps. See docs/um.md.",
       RecordColumns<UmRecord>(),
       {}});
  t.push_back({"gpu_metrics",
               "GPU metrics over time (`profile --gpu-metrics`, CUPTI PM sampling): one row per "
               "sample interval and metric of each device in use, while recording: SM, tensor-pipe "
               "and DRAM activity, PCIe and NVLink throughput where the GPU has them (schema 1.8). "
               "See docs/capture.md, GPU metrics.",
               RecordColumns<GpuMetricRecord>(),
               {}});
  t.push_back({"oom",
               "Failed allocations (out of memory): an allocation API returned "
               "cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY. Written and committed at "
               "once so the evidence survives the abort that usually follows. See docs/memory.md.",
               RecordColumns<OomRecord>(),
               {}});
}

// Host allocations, NVTX ranges, the tracer's overhead, roofline results.
void AddRangeTables(std::vector<TableDef>& t) {
  t.push_back({"host_alloc",
               "Host memory allocations and frees at or above a size threshold (`--trace "
               "host-mem`): malloc/calloc/realloc/aligned allocations and anonymous mmap/munmap. "
               "See docs/memory.md.",
               RecordColumns<HostAllocRecord>(),
               {}});
  t.push_back({"nvtx",
               "NVTX ranges and marks (and, in imported traces, CPU-side ranges such as "
               "torch cpu_op and user_annotation, with the source in domain_id).",
               RecordColumns<NvtxRecord>(),
               {"nvtx_start(start_ns)", "nvtx_tid(tid, start_ns)"}});
  t.push_back({"overhead",
               "Time spent on profiling work (CUPTI overhead records; the tracer's own work).",
               RecordColumns<OverheadRecord>(),
               {}});
  t.push_back(
      {"roofline",
       "Roofline analysis of a step's top kernels (`stepscope roofline`): hardware counters "
       "of the profiled launches of each kernel (a kernel function with one grid and block), "
       "summed over its profiled instances, and where that puts it under the GPU's measured "
       "ceilings (meta.roofline_ceilings). Rewritten by each roofline run. See docs/roofline.md.",
       {{"rank", "INTEGER", "rank by GPU time in the step, 1 = most"},
        {"name_id", "INTEGER", "demangled kernel name (strings.id)"},
        {"mangled_id", "INTEGER", "mangled name (strings.id); 0 when unknown"},
        {"grid_x", "INTEGER", "grid size"},
        {"grid_y", "INTEGER", ""},
        {"grid_z", "INTEGER", ""},
        {"block_x", "INTEGER", "block size"},
        {"block_y", "INTEGER", ""},
        {"block_z", "INTEGER", ""},
        {"step", "INTEGER",
         "step the kernels were ranked in (NVTX 'step N'); -1 when the trace has no steps"},
        {"step_gpu_ns", "INTEGER", "GPU time of this kernel's launches in that step, ns"},
        {"step_launches", "INTEGER", "its launches in that step"},
        {"instances", "INTEGER", "launches profiled (each replayed once per counter pass)"},
        {"first_launch_index", "INTEGER",
         "0-based index of the first profiled launch among all launches of this kernel function in "
         "the profiled run"},
        {"duration_ns", "REAL", "gpu__time_duration.sum over the profiled instances, ns"},
        {"flops", "REAL", "floating-point operations, all precisions (FMA = 2)"},
        {"flops_fp64", "REAL", "CUDA-core fp64: dadd + dmul + 2 dfma"},
        {"flops_fp32", "REAL", "CUDA-core fp32: fadd + fmul + 2 ffma"},
        {"flops_fp16", "REAL", "CUDA-core fp16: hadd + hmul + 2 hfma"},
        {"flops_tensor_fp64", "REAL", "tensor-core ops with fp64 sources"},
        {"flops_tensor_tf32", "REAL", "tensor-core ops with tf32 sources"},
        {"flops_tensor_fp16", "REAL", "tensor-core ops with fp16 sources"},
        {"flops_tensor_bf16", "REAL", "tensor-core ops with bf16 sources"},
        {"flops_tensor_fp8", "REAL", "tensor-core ops with fp8 sources"},
        {"flops_tensor_other", "REAL", "tensor-core ops with other floating-point sources"},
        {"tensor_int_ops", "REAL", "tensor-core integer ops (not FLOPs)"},
        {"dram_read_bytes", "REAL", "dram__bytes_read.sum"},
        {"dram_write_bytes", "REAL", "dram__bytes_write.sum"},
        {"l2_bytes", "REAL", "lts__t_bytes.sum"},
        {"l1_bytes", "REAL", "l1tex__t_bytes.sum"},
        {"intensity_dram", "REAL", "FLOP per DRAM byte"},
        {"flops_per_s", "REAL", "achieved FLOP/s (flops / duration)"},
        {"dram_bytes_per_s", "REAL", "achieved DRAM bandwidth, bytes/s"},
        {"precision", "TEXT",
         "precision with the most FLOPs (fp32, tensor_bf16, ...); empty when none"},
        {"bound", "TEXT",
         "ceiling that bounds the kernel: a precision's compute ceiling, dram_bw or l2_bw"},
        {"bound_kind", "TEXT", "compute, memory or unknown"},
        {"pct_of_bound", "REAL", "100 * (time the bounding ceiling allows) / duration"},
        {"counters_json", "TEXT",
         "every collected counter, summed over the instances, as a JSON object"}},
       {}});
  // Host model (schema 1.5): what the CPU threads did. docs/host.md.
}

// The host model: Python frames and call sites, thread samples, waits.
void AddHostTables(std::vector<TableDef>& t) {
  t.push_back({"frames",
               "Stack frames of host call stacks (Python, native, and a synthetic CUDA API "
               "leaf), shared by every stack that holds them (schema 1.5).",
               RecordColumns<FrameRecord>(),
               {}});
  t.push_back({"callsites",
               "Host call stacks as a trie of frames: a row is one frame under its parent, and "
               "the id of a leaf names the whole stack, root (outermost) first (schema 1.5).",
               RecordColumns<CallsiteRecord>(),
               {}});
  t.push_back({"samples",
               "Host threads observed at instants: a sampler's view of what each thread was "
               "doing (captures with sampling, nsys CPU sampling) (schema 1.5).",
               RecordColumns<SampleRecord>(),
               {"samples_tid(tid, ts_ns)"}});
  t.push_back({"native_samples",
               "Native stacks of the traced process's threads, sampled by the kernel on each "
               "thread's own CPU time (one row per meta.native_sample_period_ns of CPU time) and "
               "unwound by the collector (schema 1.6).",
               RecordColumns<NativeSampleRecord>(),
               {"native_samples_tid(tid, ts_ns)"}});
  t.push_back({"thread_sched",
               "Intervals a host thread spent in one scheduling state (nsys SCHED_EVENTS: "
               "running on a CPU, or switched out) (schema 1.5).",
               RecordColumns<SchedRecord>(),
               {}});
  t.push_back({"osrt",
               "OS-runtime waits of host threads: condition variables, futexes, poll, read, "
               "sleeps (schema 1.5).",
               RecordColumns<OsrtRecord>(),
               {}});
  t.push_back({"api_callsite",
               "The host call stack (Python) of the thread when it made a CUDA API call: "
               "which line issued a sync, a copy, an allocation (schema 1.5).",
               RecordColumns<ApiCallsiteRecord>(),
               {"api_callsite_correlation(correlation)"},
               false});
}

// Enum tables: id -> name, filled when the trace is created.
void AddEnumTables(std::vector<TableDef>& t) {
  for (const char* e :
       {"enum_memory_kind", "enum_copy_kind", "enum_sync_type", "enum_memory_op",
        "enum_memory_pool_op", "enum_nvtx_kind", "enum_api_domain", "enum_host_alloc_kind",
        "enum_um_counter_kind", "enum_thread_state", "enum_frame_kind"}) {
    t.push_back({e,
                 "Names of the enumeration values used by the columns that reference it.",
                 {{"id", "INTEGER PRIMARY KEY", "value"}, {"name", "TEXT", "name"}},
                 {},
                 false});
  }
}

std::vector<TableDef> BuildTables() {
  std::vector<TableDef> t;
  AddTraceTables(t);
  AddGpuTables(t);
  AddRangeTables(t);
  AddHostTables(t);
  AddEnumTables(t);
  return t;
}

std::vector<MetaKeyDef> BuildMetaKeys() {
  return {
      {"schema_version", "major schema version (readers refuse other majors)"},
      {"schema_minor", "minor schema version (additions only)"},
      {"record_format_version", "version of src/format/records.h the producer used"},
      {"tool_version", "stepscope version that wrote the trace"},
      {"source", "who produced it: capture (stepscope profile), kineto-json, nsys-sqlite, fixture"},
      {"clock", "trace clock of every *_ns column: CLOCK_REALTIME for captures"},
      {"wall_clock_offset_ns",
       "add to a trace time to get Unix-epoch ns (0 when the clock is CLOCK_REALTIME)"},
      {"start_ns", "trace start, on the trace clock"},
      {"end_ns", "trace end (last commit or finalize), on the trace clock"},
      {"pid", "process id of the traced process"},
      {"ppid", "parent process id"},
      {"host", "host name"},
      {"command_line", "the traced process's command line, arguments separated by spaces"},
      {"process_name",
       "imported traces: the process's name as the source names it (torch.profiler's "
       "process_name, nsys's PROCESSES.name), for labels"},
      {"trace_categories", "categories captured (cuda,nvtx,memory)"},
      {"rank", "RANK of the process when set (torchrun, SLURM_PROCID, OMPI_COMM_WORLD_RANK)"},
      {"local_rank", "LOCAL_RANK when set"},
      {"world_size", "WORLD_SIZE when set"},
      {"host_mem_threshold_bytes",
       "--trace host-mem: host allocations smaller than this were not recorded (host_alloc)"},
      {"roofline_device", "GPU the roofline counters were collected on: name and UUID"},
      {"roofline_ceilings",
       "the measured ceilings (`stepscope bench`) the roofline table was computed with, JSON"},
      {"finalized",
       "1 once the trace was completed and indexed: by the collector after the traced process "
       "ended, however it ended (see process_exit); 0 for a trace cut off because its writer "
       "(the collector, or an importer) was killed"},
      {"process_exit",
       "captured traces: `exited` (the process ended normally) or `died` (killed or crashed: "
       "kill -9, SIGSEGV, the OOM killer); the trace holds everything recorded up to then, and "
       "NVTX ranges still open are flagged (nvtx.unclosed)"},
      {"collector", "captured traces: written by a collector process outside the traced program"},
      {"sample_hz",
       "host sampling rate of the samples table, per second; absent or 0: threads were not "
       "sampled"},
      {"native_sample_period_ns",
       "CPU time between two native_samples rows of one thread, ns; absent or 0: native stacks "
       "were not sampled"},
      {"native_stacks", "whether native_samples were taken: on, off, or `unavailable: <why>`"},
      {"python_stacks", "whether host stacks hold Python frames: on, off, or `unavailable: <why>`"},
  };
}

}  // namespace

const std::vector<TableDef>& SchemaTables() {
  static const std::vector<TableDef> tables = BuildTables();
  return tables;
}

const std::vector<MetaKeyDef>& SchemaMetaKeys() {
  static const std::vector<MetaKeyDef> keys = BuildMetaKeys();
  return keys;
}

const TableDef* FindTable(const std::string& name) {
  for (const TableDef& t : SchemaTables()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

namespace {
template <typename E>
void AppendEnumRows(std::string* sql, const char* table, int max, const char* (*name)(E)) {
  for (int i = 0; i <= max; ++i) {
    *sql += "INSERT OR REPLACE INTO " + std::string(table) + " VALUES(" + std::to_string(i) + ",'" +
            name(static_cast<E>(i)) + "');\n";
  }
}
}  // namespace

std::string CreateTableSql(const TableDef& t) {
  std::string sql = "CREATE TABLE IF NOT EXISTS " + std::string(t.name) + " (";
  bool first = true;
  if (t.has_integer_pk) {
    sql += "id INTEGER PRIMARY KEY";
    first = false;
  }
  for (const ColumnDef& c : t.columns) {
    if (!first) sql += ", ";
    first = false;
    sql += std::string(c.name) + " " + c.type;
  }
  return sql + ")";
}

std::string SchemaCreateSql() {
  std::string sql;
  for (const TableDef& t : SchemaTables()) sql += CreateTableSql(t) + ";\n";
  AppendEnumRows<MemoryKind>(&sql, "enum_memory_kind", 7, MemoryKindName);
  AppendEnumRows<CopyKind>(&sql, "enum_copy_kind", 10, CopyKindName);
  AppendEnumRows<SyncType>(&sql, "enum_sync_type", 4, SyncTypeName);
  AppendEnumRows<MemoryOp>(&sql, "enum_memory_op", 2, MemoryOpName);
  AppendEnumRows<MemoryPoolOp>(&sql, "enum_memory_pool_op", 3, MemoryPoolOpName);
  AppendEnumRows<UmCounterKind>(&sql, "enum_um_counter_kind", kUmCounterKindMax, UmCounterKindName);
  AppendEnumRows<ThreadState>(&sql, "enum_thread_state", kThreadStateMax, ThreadStateName);
  AppendEnumRows<FrameKind>(&sql, "enum_frame_kind", 3, FrameKindName);
  sql += "INSERT OR REPLACE INTO enum_nvtx_kind VALUES(1,'push_pop'),(2,'start_end'),(3,'mark');\n";
  sql += "INSERT OR REPLACE INTO enum_api_domain VALUES(0,'runtime'),(1,'driver');\n";
  sql +=
      "INSERT OR REPLACE INTO enum_host_alloc_kind VALUES(0,'unknown'),(1,'malloc'),(2,'mmap');\n";
  sql += "INSERT OR IGNORE INTO strings(id, value) VALUES(0, '');\n";
  // Convenience views with names resolved, for people who query with sqlite3.
  sql +=
      "CREATE VIEW IF NOT EXISTS kernels_v AS SELECT k.*, s.value AS name FROM kernels k "
      "LEFT JOIN strings s ON s.id = k.name_id;\n"
      "CREATE VIEW IF NOT EXISTS api_v AS SELECT a.*, s.value AS name FROM api a "
      "LEFT JOIN strings s ON s.id = a.name_id;\n"
      "CREATE VIEW IF NOT EXISTS nvtx_v AS SELECT n.*, s.value AS name, d.value AS domain "
      "FROM nvtx n LEFT JOIN strings s ON s.id = n.name_id LEFT JOIN strings d ON d.id = "
      "n.domain_id;\n";
  return sql + SchemaViewsSql();
}

std::string SchemaIndexSql() {
  std::string sql;
  for (const TableDef& t : SchemaTables()) {
    for (const char* idx : t.indices) {
      std::string def(idx);
      size_t paren = def.find('(');
      sql += "CREATE INDEX IF NOT EXISTS " + def.substr(0, paren) + " ON " + t.name +
             def.substr(paren) + ";\n";
    }
  }
  return sql;
}

std::string SchemaMarkdown() {
  std::string md;
  md += "# stepscope trace schema\n\n";
  md +=
      "<!-- Generated by `stepscope schema --markdown` from src/store/schema.cc. Do not edit: "
      "a test compares this file with the code. -->\n\n";
  md += "A stepscope trace is one SQLite file per traced process. Schema version " +
        std::to_string(kSchemaVersion) + "." + std::to_string(kSchemaMinor) +
        " (`meta.schema_version`, `meta.schema_minor`). Readers accept any trace of the same "
        "major version; minor versions only add tables, columns at the end, or indices. A trace "
        "of an older minor version is read as if it had the tables and columns added since, "
        "empty and NULL (the file is not modified); a trace of another major version is refused "
        "with one line (exit code 2). tests/fixtures/schema/ keeps traces of each layout.\n\n";
  md +=
      "Conventions: every `*_ns` column is an integer count of nanoseconds on the trace clock "
      "(`meta.clock`); every `*_id` column that names a string refers to `strings.id`; enum "
      "columns refer to the `enum_*` tables. Tables with an `id` column have it as their "
      "INTEGER PRIMARY KEY (insertion order). Indices are built when the trace is finalized; a "
      "trace whose writer was killed has `meta.finalized = 0` and no indices, and is otherwise "
      "complete up to its last commit (at most about 0.25 s before the kill). Only the "
      "correlation joins are indexed: rows are appended in near time order and analysis sorts "
      "in memory, and start-time indices would double the file (measured: 131 vs 250 KiB per "
      "training step, docs/PERFORMANCE.md).\n\n";
  md +=
      "Views `kernels_v`, `api_v` and `nvtx_v` add the resolved names for ad-hoc SQL; "
      "`gpu_ops_v` and `steps_v` attribute GPU work to NVTX ranges and steps (see Views, "
      "below the tables).\n\n";
  for (const TableDef& t : SchemaTables()) {
    md += "## `" + std::string(t.name) + "`\n\n" + t.doc + "\n\n";
    md += "| column | type | meaning |\n|---|---|---|\n";
    if (t.has_integer_pk) md += "| `id` | INTEGER PRIMARY KEY | row id |\n";
    for (const ColumnDef& c : t.columns) {
      md += "| `" + std::string(c.name) + "` | " + c.type + " | " + c.doc + " |\n";
    }
    if (!t.indices.empty()) {
      md += "\nIndices:";
      for (const char* i : t.indices) md += std::string(" `") + i + "`";
      md += "\n";
    }
    md += "\n";
  }
  md += SchemaViewsMarkdown();
  md += "## `meta` keys\n\n| key | meaning |\n|---|---|\n";
  for (const MetaKeyDef& k : SchemaMetaKeys()) {
    md += "| `" + std::string(k.key) + "` | " + k.doc + " |\n";
  }
  return md;
}

}  // namespace stepscope
