// TraceReader: opens a stepscope trace for analysis.
//
// Open() checks that the file is an SQLite database holding a stepscope trace
// of a schema version this build understands, and fails with a one-line
// message naming the file otherwise (kInvalidInput: the CLI exits with 2).
// A trace cut off by a crash (meta.finalized = 0, maybe a -wal file beside it)
// opens like any other: SQLite replays the WAL on open.
//
// The typed loaders read whole tables into the shared record structs, ordered
// by start time; analysis code works on those vectors.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "format/records.h"
#include "store/sqlite_util.h"

namespace stepscope {

class TraceReader {
 public:
  static StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  // From this call on, the first Open() of each cut-off trace (meta.finalized
  // = 0: the run was killed before finalization) prints one warning line on
  // stderr (silenced by -q). The CLI turns it on for its reading commands;
  // off by default (the collector's own summary says it).
  static void WarnIfNotFinalized();
  ~TraceReader();

  const std::string& path() const { return path_; }
  sqlite3* db() const { return db_; }

  // meta.value for `key`, or `fallback` when absent.
  std::string Meta(const std::string& key, const std::string& fallback = "") const;
  // stats.value for `name`, or 0.
  int64_t Stat(const std::string& name) const;
  bool finalized() const { return Meta("finalized") == "1"; }

  // Interned strings (loaded once). String(id) is "" for unknown ids.
  const std::string& String(StringId id) const;
  const std::vector<std::string>& strings() const { return strings_; }

  StatusOr<Statement> Query(std::string_view sql) const { return Prepare(db_, sql); }

  // Whole-table loaders, ordered by start time (ts for memory).
  // kStored reads rows in insertion order (a table scan) for callers that
  // sort in memory: start_ns is not indexed on the big tables, and SQLite's
  // own sort of millions of rows is the slowest part of loading them.
  enum class RowOrder { kByStart, kStored };
  StatusOr<std::vector<KernelRecord>> Kernels(RowOrder order = RowOrder::kByStart) const;
  StatusOr<std::vector<MemcpyRecord>> Memcpys(RowOrder order = RowOrder::kByStart) const;
  StatusOr<std::vector<MemsetRecord>> Memsets(RowOrder order = RowOrder::kByStart) const;
  StatusOr<std::vector<ApiRecord>> Apis(RowOrder order = RowOrder::kByStart) const;
  StatusOr<std::vector<SyncRecord>> Syncs(RowOrder order = RowOrder::kByStart) const;
  StatusOr<std::vector<MemoryRecord>> MemoryEvents() const;
  StatusOr<std::vector<MemoryPoolRecord>> MemoryPoolEvents() const;
  StatusOr<std::vector<NvtxRecord>> Nvtx() const;
  // Unified-memory events, by start (empty for traces without the um table).
  StatusOr<std::vector<UmRecord>> UmEvents() const;
  // GPU metrics (schema 1.8; empty for older traces), by (device, metric, start).
  StatusOr<std::vector<GpuMetricRecord>> GpuMetrics() const;
  StatusOr<std::vector<OverheadRecord>> Overheads() const;
  StatusOr<std::vector<DeviceRecord>> Devices() const;
  // Host model (schema 1.5; empty for older traces): trace_reader_host.cc.
  // Frames and callsites by id; samples by (tid, ts); sched and osrt by start.
  StatusOr<std::vector<FrameRecord>> Frames() const;
  StatusOr<std::vector<CallsiteRecord>> Callsites() const;
  StatusOr<std::vector<SampleRecord>> Samples() const;
  StatusOr<std::vector<NativeSampleRecord>> NativeSamples() const;
  StatusOr<std::vector<SchedRecord>> Sched() const;
  StatusOr<std::vector<OsrtRecord>> Osrt() const;
  StatusOr<std::vector<ApiCallsiteRecord>> ApiCallsites() const;
  // tid -> thread name
  StatusOr<std::unordered_map<uint32_t, std::string>> ThreadNames() const;

 private:
  TraceReader() = default;
  Status Init(const std::string& path);
  Status CheckSchemaVersion() const;
  Status AdaptOlderLayout();

  std::string path_;
  sqlite3* db_ = nullptr;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::string> meta_;
};

}  // namespace stepscope
