#include "store/trace_writer.h"

#include "store/record_sql.h"
#include "store/schema.h"

namespace stepscope {

StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path,
                                                           Journal journal) {
  std::unique_ptr<TraceWriter> w(new TraceWriter());
  Status st = w->Init(path, journal);
  if (!st.ok()) return st.WithContext(path);
  return w;
}

TraceWriter::~TraceWriter() {
  if (db_ != nullptr) {
    // Not finalized: keep what was committed; roll back the open transaction.
    CloseStatements();
    sqlite3_close_v2(db_);
  }
}

void TraceWriter::CloseStatements() {
  for (Statement* st :
       {&ins_string_, &ins_kernel_, &ins_memcpy_,       &ins_memset_,     &ins_api_,
        &ins_sync_,   &ins_memory_, &ins_pool_,         &ins_nvtx_,       &ins_overhead_,
        &ins_device_, &ins_thread_, &ins_meta_,         &ins_stat_,       &ins_oom_,
        &ins_um_,     &ins_frame_,  &ins_callsite_,     &ins_sample_,     &ins_native_sample_,
        &ins_sched_,  &ins_osrt_,   &ins_api_callsite_, &ins_host_alloc_, &ins_gpu_metric_}) {
    *st = Statement();
  }
}

Status TraceWriter::Init(const std::string& path, Journal journal) {
  int rc =
      sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    return IoError(std::string("cannot create trace: ") +
                   (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }
  // 4 KiB pages: a trace has ~20 tables and most are small, so larger pages
  // waste space (64 KiB pages made a training step's trace 3x larger). WAL so
  // that each commit is a cheap append and a killed writer leaves a valid
  // database (with its -wal); a rollback journal keeps every committed page in
  // the main file. synchronous=OFF because only the process, not the OS, may crash.
  RETURN_IF_ERROR(Exec(db_, std::string("PRAGMA page_size=4096; PRAGMA journal_mode=") +
                                (journal == Journal::kWal ? "WAL" : "DELETE") +
                                "; PRAGMA synchronous=OFF; "
                                "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;"));
  // A reader of the live trace (stepscope stats on a running job) holds a
  // shared lock for a moment: wait for it rather than fail the commit.
  sqlite3_busy_timeout(db_, 5000);
  RETURN_IF_ERROR(Exec(db_, "BEGIN;" + SchemaCreateSql() + "COMMIT;"));
  struct {
    Statement* st;
    std::string sql;
  } stmts[] = {
      {&ins_string_, "INSERT INTO strings(id, value) VALUES(?,?)"},
      {&ins_kernel_, RecordInsertSql<KernelRecord>()},
      {&ins_memcpy_, RecordInsertSql<MemcpyRecord>()},
      {&ins_memset_, RecordInsertSql<MemsetRecord>()},
      {&ins_api_, RecordInsertSql<ApiRecord>()},
      {&ins_sync_, RecordInsertSql<SyncRecord>()},
      {&ins_memory_, RecordInsertSql<MemoryRecord>()},
      {&ins_pool_, RecordInsertSql<MemoryPoolRecord>()},
      {&ins_um_, RecordInsertSql<UmRecord>()},
      {&ins_nvtx_, RecordInsertSql<NvtxRecord>()},
      {&ins_overhead_, RecordInsertSql<OverheadRecord>()},
      {&ins_device_, RecordInsertSql<DeviceRecord>("INSERT OR REPLACE")},
      {&ins_thread_, "INSERT OR REPLACE INTO threads(tid, name_id) VALUES(?,?)"},
      {&ins_meta_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"},
      {&ins_stat_, "INSERT OR REPLACE INTO stats(name, value, doc) VALUES(?,?,?)"},
      {&ins_oom_, RecordInsertSql<OomRecord>()},
      {&ins_host_alloc_, RecordInsertSql<HostAllocRecord>()},
      {&ins_frame_, RecordInsertSql<FrameRecord>()},
      {&ins_callsite_, RecordInsertSql<CallsiteRecord>()},
      {&ins_sample_, RecordInsertSql<SampleRecord>()},
      {&ins_native_sample_, RecordInsertSql<NativeSampleRecord>()},
      {&ins_sched_, RecordInsertSql<SchedRecord>()},
      {&ins_osrt_, RecordInsertSql<OsrtRecord>()},
      {&ins_api_callsite_, RecordInsertSql<ApiCallsiteRecord>()},
      {&ins_gpu_metric_, RecordInsertSql<GpuMetricRecord>()},
  };
  for (auto& s : stmts) {
    ASSIGN_OR_RETURN(*s.st, Prepare(db_, s.sql));
  }
  SetMeta("schema_version", std::to_string(kSchemaVersion));
  SetMeta("schema_minor", std::to_string(kSchemaMinor));
  SetMeta("record_format_version", std::to_string(kRecordFormatVersion));
  SetMeta("finalized", "0");
  strings_.emplace(std::string(), kNoString);
  RETURN_IF_ERROR(Exec(db_, "BEGIN;"));
  return status_;
}

void TraceWriter::Run(Statement& st) {
  if (!status_.ok()) {
    st.Reset();
    return;
  }
  st.Step();
  if (!st.ok()) status_ = st.status();
  st.Reset();
  ++rows_;
}

StringId TraceWriter::Intern(std::string_view s) {
  auto it = strings_.find(std::string(s));
  if (it != strings_.end()) return it->second;
  StringId id = next_string_++;
  strings_.emplace(std::string(s), id);
  ins_string_.BindInt(1, id);
  ins_string_.BindText(2, s);
  Run(ins_string_);
  return id;
}

void TraceWriter::AddKernel(const KernelRecord& r) {
  BindRecord(ins_kernel_, r);
  Run(ins_kernel_);
}

void TraceWriter::AddMemcpy(const MemcpyRecord& r) {
  BindRecord(ins_memcpy_, r);
  Run(ins_memcpy_);
}

void TraceWriter::AddMemset(const MemsetRecord& r) {
  BindRecord(ins_memset_, r);
  Run(ins_memset_);
}

void TraceWriter::AddApi(const ApiRecord& r) {
  BindRecord(ins_api_, r);
  Run(ins_api_);
}

void TraceWriter::AddSync(const SyncRecord& r) {
  BindRecord(ins_sync_, r);
  Run(ins_sync_);
}

void TraceWriter::AddMemory(const MemoryRecord& r) {
  BindRecord(ins_memory_, r);
  Run(ins_memory_);
}

void TraceWriter::AddMemoryPool(const MemoryPoolRecord& r) {
  BindRecord(ins_pool_, r);
  Run(ins_pool_);
}

void TraceWriter::AddUm(const UmRecord& r) {
  BindRecord(ins_um_, r);
  Run(ins_um_);
}

void TraceWriter::AddNvtx(const NvtxRecord& r, bool unclosed) {
  BindRecord(ins_nvtx_, r, unclosed ? 1 : 0);
  Run(ins_nvtx_);
}

void TraceWriter::AddOverhead(const OverheadRecord& r) {
  BindRecord(ins_overhead_, r);
  Run(ins_overhead_);
}

void TraceWriter::AddDevice(const DeviceRecord& r) {
  BindRecord(ins_device_, r);
  Run(ins_device_);
}

void TraceWriter::AddOom(const OomRecord& r, StringId api_name) {
  BindRecord(ins_oom_, r, api_name);
  Run(ins_oom_);
}

void TraceWriter::AddGpuMetric(const GpuMetricRecord& r) {
  BindRecord(ins_gpu_metric_, r);
  Run(ins_gpu_metric_);
}

void TraceWriter::AddHostAlloc(const HostAllocRecord& r) {
  BindRecord(ins_host_alloc_, r);
  Run(ins_host_alloc_);
}

void TraceWriter::SetThreadName(uint32_t tid, StringId name) {
  ins_thread_.BindInt(1, tid);
  ins_thread_.BindInt(2, name);
  Run(ins_thread_);
}

void TraceWriter::AddFrame(const FrameRecord& r) {
  BindRecord(ins_frame_, r);
  Run(ins_frame_);
}

void TraceWriter::AddCallsite(const CallsiteRecord& r) {
  BindRecord(ins_callsite_, r);
  Run(ins_callsite_);
}

void TraceWriter::AddSample(const SampleRecord& r) {
  BindRecord(ins_sample_, r);
  Run(ins_sample_);
}

void TraceWriter::AddNativeSample(const NativeSampleRecord& r) {
  BindRecord(ins_native_sample_, r);
  Run(ins_native_sample_);
}

void TraceWriter::AddSched(const SchedRecord& r) {
  BindRecord(ins_sched_, r);
  Run(ins_sched_);
}

void TraceWriter::AddOsrt(const OsrtRecord& r) {
  BindRecord(ins_osrt_, r);
  Run(ins_osrt_);
}

void TraceWriter::AddApiCallsite(const ApiCallsiteRecord& r) {
  BindRecord(ins_api_callsite_, r);
  Run(ins_api_callsite_);
}

void TraceWriter::SetMeta(const std::string& key, const std::string& value) {
  ins_meta_.BindText(1, key);
  ins_meta_.BindText(2, value);
  Run(ins_meta_);
}

void TraceWriter::SetStat(const std::string& name, int64_t value, const std::string& doc) {
  ins_stat_.BindText(1, name);
  ins_stat_.BindInt(2, value);
  ins_stat_.BindText(3, doc);
  Run(ins_stat_);
}

Status TraceWriter::Commit() {
  if (!status_.ok()) return status_;
  Status st = Exec(db_, "COMMIT; BEGIN;");
  if (!st.ok()) status_ = st;
  return status_;
}

Status TraceWriter::Finalize() {
  if (db_ == nullptr) return status_;
  if (status_.ok()) {
    SetMeta("finalized", "1");
    // The indexes are built by sorting every row: in temp files, not in
    // memory (temp_store=MEMORY while recording kept the sorter's runs in RAM:
    // 60 s of NVTX at full rate took 4.86 GB of the launcher at this step).
    Status st = Exec(db_, "COMMIT; PRAGMA temp_store=FILE; BEGIN;" + SchemaIndexSql() + "COMMIT;");
    if (st.ok()) st = Exec(db_, "PRAGMA journal_mode=DELETE;");
    if (!st.ok()) status_ = st;
  }
  CloseStatements();
  if (sqlite3_close_v2(db_) != SQLITE_OK && status_.ok()) status_ = IoError("sqlite close failed");
  db_ = nullptr;
  return status_;
}

}  // namespace stepscope
