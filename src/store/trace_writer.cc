#include "store/trace_writer.h"

#include <string.h>

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
       {&ins_string_, &ins_kernel_, &ins_memcpy_, &ins_memset_,      &ins_api_,    &ins_sync_,
        &ins_memory_, &ins_pool_,   &ins_nvtx_,   &ins_overhead_,    &ins_device_, &ins_thread_,
        &ins_meta_,   &ins_stat_,   &ins_oom_,    &ins_um_,          &ins_frame_,  &ins_callsite_,
        &ins_sample_, &ins_sched_,  &ins_osrt_,   &ins_api_callsite_}) {
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
    const char* sql;
  } stmts[] = {
      {&ins_string_, "INSERT INTO strings(id, value) VALUES(?,?)"},
      {&ins_kernel_,
       "INSERT INTO kernels(start_ns,end_ns,device,context,stream,correlation,name_id,mangled_id,"
       "grid_x,grid_y,grid_z,block_x,block_y,block_z,registers_per_thread,static_smem_bytes,"
       "dynamic_smem_bytes,graph_id,graph_node_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&ins_memcpy_,
       "INSERT INTO memcpy(start_ns,end_ns,device,context,stream,correlation,bytes,copy_kind,"
       "src_kind,dst_kind,is_async,dst_device,graph_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&ins_memset_,
       "INSERT INTO memset(start_ns,end_ns,device,context,stream,correlation,bytes,value,"
       "memory_kind,is_async,graph_id) VALUES(?,?,?,?,?,?,?,?,?,?,?)"},
      {&ins_api_,
       "INSERT INTO api(start_ns,end_ns,tid,correlation,domain,cbid,name_id,return_code) "
       "VALUES(?,?,?,?,?,?,?,?)"},
      {&ins_sync_,
       "INSERT INTO sync(start_ns,end_ns,tid,correlation,type,context,stream,event) "
       "VALUES(?,?,?,?,?,?,?,?)"},
      {&ins_memory_,
       "INSERT INTO memory(ts_ns,op,address,bytes,memory_kind,device,context,stream,correlation,"
       "is_async,pool_address) VALUES(?,?,?,?,?,?,?,?,?,?,?)"},
      {&ins_pool_,
       "INSERT INTO memory_pool(ts_ns,op,address,size,utilized_bytes,release_threshold,device,"
       "is_managed) VALUES(?,?,?,?,?,?,?,?)"},
      {&ins_um_,
       "INSERT INTO um(start_ns,end_ns,kind,value,address,src_id,dst_id,flags) "
       "VALUES(?,?,?,?,?,?,?,?)"},
      {&ins_nvtx_,
       "INSERT INTO nvtx(start_ns,end_ns,tid,end_tid,kind,depth,domain_id,name_id,category,color,"
       "unclosed) VALUES(?,?,?,?,?,?,?,?,?,?,?)"},
      {&ins_overhead_, "INSERT INTO overhead(start_ns,end_ns,tid,kind_id) VALUES(?,?,?,?)"},
      {&ins_device_,
       "INSERT OR REPLACE INTO devices(id,name_id,uuid,cc_major,cc_minor,sm_count,"
       "global_memory_bytes,memory_bandwidth_bytes_per_s,l2_cache_bytes,core_clock_khz,"
       "max_threads_per_block,max_shared_memory_per_block,max_warps_per_sm) "
       "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&ins_thread_, "INSERT OR REPLACE INTO threads(tid, name_id) VALUES(?,?)"},
      {&ins_meta_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"},
      {&ins_stat_, "INSERT OR REPLACE INTO stats(name, value, doc) VALUES(?,?,?)"},
      {&ins_oom_,
       "INSERT INTO oom(ts_ns,tid,device,correlation,name_id,return_code,requested_bytes,"
       "memory_kind,free_bytes,total_bytes) VALUES(?,?,?,?,?,?,?,?,?,?)"},
      {&ins_frame_, "INSERT INTO frames(id,kind,function_id,file_id,line) VALUES(?,?,?,?,?)"},
      {&ins_callsite_, "INSERT INTO callsites(id,parent_id,frame_id,depth) VALUES(?,?,?,?)"},
      {&ins_sample_,
       "INSERT INTO samples(ts_ns,tid,state,wait_id,callsite_id,cpu_ns) VALUES(?,?,?,?,?,?)"},
      {&ins_sched_, "INSERT INTO thread_sched(start_ns,end_ns,tid,cpu,state) VALUES(?,?,?,?,?)"},
      {&ins_osrt_,
       "INSERT INTO osrt(start_ns,end_ns,tid,name_id,detail_id,callsite_id,source) "
       "VALUES(?,?,?,?,?,?,?)"},
      {&ins_api_callsite_, "INSERT INTO api_callsite(correlation,callsite_id) VALUES(?,?)"},
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
  Statement& s = ins_kernel_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.device);
  s.BindInt(4, r.context);
  s.BindInt(5, r.stream);
  s.BindInt(6, r.correlation);
  s.BindInt(7, r.name);
  s.BindInt(8, r.mangled_name);
  s.BindInt(9, r.grid_x);
  s.BindInt(10, r.grid_y);
  s.BindInt(11, r.grid_z);
  s.BindInt(12, r.block_x);
  s.BindInt(13, r.block_y);
  s.BindInt(14, r.block_z);
  s.BindInt(15, r.registers_per_thread);
  s.BindInt(16, r.static_smem_bytes);
  s.BindInt(17, r.dynamic_smem_bytes);
  s.BindInt(18, r.graph_id);
  s.BindInt(19, static_cast<int64_t>(r.graph_node_id));
  Run(s);
}

void TraceWriter::AddMemcpy(const MemcpyRecord& r) {
  Statement& s = ins_memcpy_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.device);
  s.BindInt(4, r.context);
  s.BindInt(5, r.stream);
  s.BindInt(6, r.correlation);
  s.BindInt(7, static_cast<int64_t>(r.bytes));
  s.BindInt(8, static_cast<int>(r.copy_kind));
  s.BindInt(9, static_cast<int>(r.src_kind));
  s.BindInt(10, static_cast<int>(r.dst_kind));
  if (r.is_async == kAsyncUnknown)
    s.BindNull(11);
  else
    s.BindInt(11, r.is_async);
  s.BindInt(12, r.dst_device);
  s.BindInt(13, r.graph_id);
  Run(s);
}

void TraceWriter::AddMemset(const MemsetRecord& r) {
  Statement& s = ins_memset_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.device);
  s.BindInt(4, r.context);
  s.BindInt(5, r.stream);
  s.BindInt(6, r.correlation);
  s.BindInt(7, static_cast<int64_t>(r.bytes));
  s.BindInt(8, r.value);
  s.BindInt(9, static_cast<int>(r.memory_kind));
  if (r.is_async == kAsyncUnknown)
    s.BindNull(10);
  else
    s.BindInt(10, r.is_async);
  s.BindInt(11, r.graph_id);
  Run(s);
}

void TraceWriter::AddApi(const ApiRecord& r) {
  Statement& s = ins_api_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.tid);
  s.BindInt(4, r.correlation);
  s.BindInt(5, static_cast<int>(r.domain));
  s.BindInt(6, r.cbid);
  s.BindInt(7, r.name);
  s.BindInt(8, r.return_code);
  Run(s);
}

void TraceWriter::AddSync(const SyncRecord& r) {
  Statement& s = ins_sync_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.tid);
  s.BindInt(4, r.correlation);
  s.BindInt(5, static_cast<int>(r.type));
  s.BindInt(6, r.context);
  s.BindInt(7, r.stream);
  s.BindInt(8, r.event);
  Run(s);
}

void TraceWriter::AddMemory(const MemoryRecord& r) {
  Statement& s = ins_memory_;
  s.BindInt(1, r.ts_ns);
  s.BindInt(2, static_cast<int>(r.op));
  s.BindInt(3, static_cast<int64_t>(r.address));
  s.BindInt(4, static_cast<int64_t>(r.bytes));
  s.BindInt(5, static_cast<int>(r.memory_kind));
  s.BindInt(6, r.device);
  s.BindInt(7, r.context);
  s.BindInt(8, r.stream);
  s.BindInt(9, r.correlation);
  s.BindInt(10, r.is_async);
  s.BindInt(11, static_cast<int64_t>(r.pool_address));
  Run(s);
}

void TraceWriter::AddMemoryPool(const MemoryPoolRecord& r) {
  Statement& s = ins_pool_;
  s.BindInt(1, r.ts_ns);
  s.BindInt(2, static_cast<int>(r.op));
  s.BindInt(3, static_cast<int64_t>(r.address));
  s.BindInt(4, static_cast<int64_t>(r.size));
  s.BindInt(5, static_cast<int64_t>(r.utilized_bytes));
  s.BindInt(6, static_cast<int64_t>(r.release_threshold));
  s.BindInt(7, r.device);
  s.BindInt(8, r.is_managed);
  Run(s);
}

void TraceWriter::AddUm(const UmRecord& r) {
  Statement& s = ins_um_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, static_cast<int>(r.kind));
  s.BindInt(4, static_cast<int64_t>(r.value));
  s.BindInt(5, static_cast<int64_t>(r.address));
  s.BindInt(6, r.src_id);
  s.BindInt(7, r.dst_id);
  s.BindInt(8, r.flags);
  Run(s);
}

void TraceWriter::AddNvtx(const NvtxRecord& r, bool unclosed) {
  Statement& s = ins_nvtx_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.tid);
  s.BindInt(4, r.end_tid);
  s.BindInt(5, static_cast<int>(r.kind));
  s.BindInt(6, r.depth);
  s.BindInt(7, r.domain);
  s.BindInt(8, r.name);
  s.BindInt(9, r.category);
  s.BindInt(10, r.color);
  s.BindInt(11, unclosed ? 1 : 0);
  Run(s);
}

void TraceWriter::AddOverhead(const OverheadRecord& r) {
  Statement& s = ins_overhead_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.tid);
  s.BindInt(4, r.kind);
  Run(s);
}

void TraceWriter::AddDevice(const DeviceRecord& r) {
  Statement& s = ins_device_;
  s.BindInt(1, r.id);
  s.BindInt(2, r.name);
  s.BindText(3, std::string_view(r.uuid, strnlen(r.uuid, sizeof(r.uuid))));
  s.BindInt(4, r.cc_major);
  s.BindInt(5, r.cc_minor);
  s.BindInt(6, r.sm_count);
  s.BindInt(7, static_cast<int64_t>(r.global_memory_bytes));
  s.BindInt(8, static_cast<int64_t>(r.memory_bandwidth_bytes_per_s));
  s.BindInt(9, r.l2_cache_bytes);
  s.BindInt(10, r.core_clock_khz);
  s.BindInt(11, r.max_threads_per_block);
  s.BindInt(12, r.max_shared_memory_per_block);
  s.BindInt(13, r.max_warps_per_sm);
  Run(s);
}

void TraceWriter::AddOom(const OomRecord& r, StringId api_name) {
  Statement& s = ins_oom_;
  s.BindInt(1, r.ts_ns);
  s.BindInt(2, r.tid);
  s.BindInt(3, r.device);
  s.BindInt(4, r.correlation);
  s.BindInt(5, api_name);
  s.BindInt(6, r.return_code);
  s.BindInt(7, static_cast<int64_t>(r.requested_bytes));
  s.BindInt(8, static_cast<int>(r.memory_kind));
  s.BindInt(9, r.free_bytes);
  s.BindInt(10, r.total_bytes);
  Run(s);
}

void TraceWriter::SetThreadName(uint32_t tid, StringId name) {
  ins_thread_.BindInt(1, tid);
  ins_thread_.BindInt(2, name);
  Run(ins_thread_);
}

void TraceWriter::AddFrame(const FrameRecord& r) {
  Statement& s = ins_frame_;
  s.BindInt(1, r.id);
  s.BindInt(2, r.kind);
  s.BindInt(3, r.function);
  s.BindInt(4, r.file);
  s.BindInt(5, r.line);
  Run(s);
}

void TraceWriter::AddCallsite(const CallsiteRecord& r) {
  Statement& s = ins_callsite_;
  s.BindInt(1, r.id);
  s.BindInt(2, r.parent);
  s.BindInt(3, r.frame);
  s.BindInt(4, r.depth);
  Run(s);
}

void TraceWriter::AddSample(const SampleRecord& r) {
  Statement& s = ins_sample_;
  s.BindInt(1, r.ts_ns);
  s.BindInt(2, r.tid);
  s.BindInt(3, static_cast<int>(r.state));
  s.BindInt(4, r.wait);
  s.BindInt(5, r.callsite);
  s.BindInt(6, r.cpu_ns);
  Run(s);
}

void TraceWriter::AddSched(const SchedRecord& r) {
  Statement& s = ins_sched_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.tid);
  s.BindInt(4, r.cpu);
  s.BindInt(5, static_cast<int>(r.state));
  Run(s);
}

void TraceWriter::AddOsrt(const OsrtRecord& r) {
  Statement& s = ins_osrt_;
  s.BindInt(1, r.start_ns);
  s.BindInt(2, r.end_ns);
  s.BindInt(3, r.tid);
  s.BindInt(4, r.name);
  s.BindInt(5, r.detail);
  s.BindInt(6, r.callsite);
  s.BindInt(7, r.source);
  Run(s);
}

void TraceWriter::AddApiCallsite(const ApiCallsiteRecord& r) {
  Statement& s = ins_api_callsite_;
  s.BindInt(1, r.correlation);
  s.BindInt(2, r.callsite);
  Run(s);
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
    Status st = Exec(db_, "COMMIT; BEGIN;" + SchemaIndexSql() + "COMMIT;");
    if (st.ok()) st = Exec(db_, "PRAGMA journal_mode=DELETE;");
    if (!st.ok()) status_ = st;
  }
  CloseStatements();
  if (sqlite3_close_v2(db_) != SQLITE_OK && status_.ok()) status_ = IoError("sqlite close failed");
  db_ = nullptr;
  return status_;
}

}  // namespace stepscope
