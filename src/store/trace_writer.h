// TraceWriter: appends records to a stepscope trace (one SQLite file).
//
// Single-threaded by contract: the collector (src/collector/), or an
// importer, owns it. Rows go into one open transaction; Commit() makes them
// durable against a crash of the writing process (synchronous=OFF: a kill -9
// or segfault loses nothing committed; a power loss may). Journal: WAL by
// default; kRollback (the collector) keeps every committed byte in the main
// file, so the .sqlite alone is a valid trace after a kill. Finalize() builds
// the indices, records meta.finalized=1 and leaves a single-file database
// (journal_mode=DELETE).
//
// Errors are sticky: after the first failure every call is a no-op and
// status() returns the failure, so the hot append path needs no checks.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"
#include "format/records.h"
#include "store/sqlite_util.h"

namespace stepscope {

class TraceWriter {
 public:
  enum class Journal { kWal, kRollback };
  // Creates a new trace at `path` (the file must not exist, or be empty).
  static StatusOr<std::unique_ptr<TraceWriter>> Create(const std::string& path,
                                                       Journal journal = Journal::kWal);
  ~TraceWriter();

  StringId Intern(std::string_view s);

  void AddKernel(const KernelRecord& r);
  void AddMemcpy(const MemcpyRecord& r);
  void AddMemset(const MemsetRecord& r);
  void AddApi(const ApiRecord& r);
  void AddSync(const SyncRecord& r);
  void AddMemory(const MemoryRecord& r);
  void AddMemoryPool(const MemoryPoolRecord& r);
  void AddUm(const UmRecord& r);
  // `unclosed`: a range still open when the process ended (nvtx.unclosed).
  void AddNvtx(const NvtxRecord& r, bool unclosed = false);
  void AddOverhead(const OverheadRecord& r);
  void AddDevice(const DeviceRecord& r);
  void AddOom(const OomRecord& r, StringId api_name);
  // Host memory (`--trace host-mem`; table host_alloc).
  void AddHostAlloc(const HostAllocRecord& r);
  void SetThreadName(uint32_t tid, StringId name);
  // Host model (schema 1.5). Frames and callsites keep their ids (1-based,
  // dense: store/callsite_interner.h hands them out).
  void AddFrame(const FrameRecord& r);
  void AddCallsite(const CallsiteRecord& r);
  void AddSample(const SampleRecord& r);
  void AddNativeSample(const NativeSampleRecord& r);
  void AddSched(const SchedRecord& r);
  void AddOsrt(const OsrtRecord& r);
  void AddApiCallsite(const ApiCallsiteRecord& r);
  // GPU metrics (`profile --gpu-metrics`, schema 1.8).
  void AddGpuMetric(const GpuMetricRecord& r);

  void SetMeta(const std::string& key, const std::string& value);
  void SetStat(const std::string& name, int64_t value, const std::string& doc);

  Status Commit();
  // Builds indices, sets meta.finalized = 1, closes the database.
  Status Finalize();

  const Status& status() const { return status_; }
  uint64_t rows() const { return rows_; }
  sqlite3* db() { return db_; }

 private:
  TraceWriter() = default;
  Status Init(const std::string& path, Journal journal);
  void Run(Statement& st);
  void CloseStatements();

  sqlite3* db_ = nullptr;
  Status status_;
  uint64_t rows_ = 0;
  StringId next_string_ = 1;
  std::unordered_map<std::string, StringId> strings_;
  Statement ins_string_, ins_kernel_, ins_memcpy_, ins_memset_, ins_api_, ins_sync_, ins_memory_,
      ins_pool_, ins_nvtx_, ins_overhead_, ins_device_, ins_thread_, ins_meta_, ins_stat_, ins_oom_,
      ins_um_, ins_frame_, ins_callsite_, ins_sample_, ins_native_sample_, ins_sched_, ins_osrt_,
      ins_api_callsite_, ins_host_alloc_, ins_gpu_metric_;
};

}  // namespace stepscope
