#include "importers/nsys_importer.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "importers/import_util.h"
#include "importers/nsys_host.h"
#include "importers/nsys_um.h"
#include "store/sqlite_util.h"
#include "store/trace_fixups.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

constexpr uint64_t kCommitEveryRows = 1000000;

// NVIDIA's ENUM_NSYS_EVENT_TYPE values for NVTX, used when the table is absent.
constexpr int64_t kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxDomainCreate = 75;

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

class NsysImporter {
 public:
  NsysImporter(sqlite3* src, const std::string& path, TraceWriter* w, ImportStats* stats)
      : src_(src), path_(path), w_(w), stats_(stats), strings_(w) {}

  Status Run();

 private:
  StatusOr<std::set<std::string>> Columns(const std::string& table);
  // SELECT of `cols` from `table`; a column the table lacks reads as NULL.
  StatusOr<Statement> Select(const std::string& table, const std::vector<const char*>& cols,
                             const std::string& tail = "");
  Status TableError(const std::string& table, const Status& st) const {
    return InvalidInput("table " + table + ": " + st.message());
  }
  StatusOr<StringId> NsysString(int64_t id);
  Status LoadEnums();
  void Count(const std::string& table, int64_t rows);
  void Malformed(const char* reason, const char* doc);
  void Track(int64_t start, int64_t end);
  void WarnDropped();
  Status MaybeCommit();
  void NotePid(int64_t global_id) { pids_.insert(NsysPid(global_id)); }
  // Calls `row(st, start, end)` for every row of table `t` whose first two
  // columns are a valid [start, end] interval; counts the others as malformed,
  // tracks the trace span, commits periodically and records the row count.
  template <typename RowFn>
  Status ForEachInterval(const std::string& t, Statement& st, RowFn row);

  Status Kernels();
  Status Memcpy();
  Status Memset();
  Status Api(const std::string& table, ApiDomain domain);
  Status Sync();
  Status Nvtx();
  Status Devices();
  Status Threads();
  Status Meta();

  sqlite3* src_;
  std::string path_;
  TraceWriter* w_;
  ImportStats* stats_;
  StringCache strings_;
  std::set<std::string> tables_;
  std::unordered_map<int64_t, StringId> string_map_;
  Statement string_lookup_;
  std::map<int64_t, CopyKind> copy_kinds_;
  std::map<int64_t, MemoryKind> mem_kinds_;
  std::map<int64_t, SyncType> sync_types_;
  int64_t ev_mark_ = kNvtxMark, ev_push_pop_ = kNvtxPushPop, ev_start_end_ = kNvtxStartEnd,
          ev_domain_create_ = kNvtxDomainCreate;
  std::set<uint32_t> pids_;
  std::set<uint32_t> tids_;
  std::set<uint32_t> host_pids_, host_tids_;  // processes/threads with host rows (nsys_host.cc)
  int64_t min_ns_ = INT64_MAX, max_ns_ = INT64_MIN;
  uint64_t last_commit_rows_ = 0;
};

StatusOr<std::set<std::string>> NsysImporter::Columns(const std::string& table) {
  ASSIGN_OR_RETURN(Statement st, Prepare(src_, "PRAGMA table_info(\"" + table + "\")"));
  std::set<std::string> cols;
  while (st.Step()) cols.insert(std::string(st.Text(1)));
  RETURN_IF_ERROR(st.status());
  return cols;
}

StatusOr<Statement> NsysImporter::Select(const std::string& table,
                                         const std::vector<const char*>& cols,
                                         const std::string& tail) {
  ASSIGN_OR_RETURN(std::set<std::string> have, Columns(table));
  std::string sql = "SELECT ";
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i) sql += ", ";
    sql += have.count(cols[i]) ? "\"" + std::string(cols[i]) + "\"" : std::string("NULL");
  }
  sql += " FROM \"" + table + "\" " + tail;
  return Prepare(src_, sql);
}

StatusOr<StringId> NsysImporter::NsysString(int64_t id) {
  auto it = string_map_.find(id);
  if (it != string_map_.end()) return it->second;
  StringId sid = kNoString;
  if (string_lookup_.raw() != nullptr) {
    string_lookup_.BindInt(1, id);
    if (string_lookup_.Step()) {
      sid = strings_.Get(string_lookup_.Text(0));
    } else {
      RETURN_IF_ERROR(string_lookup_.status());
      stats_->Bump(
          stats_->Add("nsys_missing_strings", "string ids not found in StringIds (stored as '')"));
    }
    string_lookup_.Reset();
  }
  string_map_.emplace(id, sid);
  return sid;
}

void NsysImporter::Count(const std::string& table, int64_t rows) {
  stats_->Set(stats_->Add("nsys_rows_" + table, "rows read from the export's " + table + " table"),
              rows);
}

void NsysImporter::Malformed(const char* reason, const char* doc) {
  stats_->Bump(
      stats_->Add("import_malformed_events", "rows skipped because a needed field was invalid"));
  stats_->Bump(stats_->Add(std::string("import_malformed_") + reason, doc));
}

void NsysImporter::Track(int64_t start, int64_t end) {
  min_ns_ = std::min(min_ns_, start);
  max_ns_ = std::max(max_ns_, end);
}

Status NsysImporter::MaybeCommit() {
  if (w_->rows() - last_commit_rows_ < kCommitEveryRows) return w_->status();
  last_commit_rows_ = w_->rows();
  return w_->Commit();
}

// ENUM_* tables give each value a name like CUDA_MEMCPY_OPER_HTOD; map the
// names onto stepscope's enums by their distinctive part.
Status NsysImporter::LoadEnums() {
  auto load = [&](const char* table, auto fn) -> Status {
    if (!tables_.count(table)) return OkStatus();
    ASSIGN_OR_RETURN(Statement st, Select(table, {"id", "name", "label"}));
    while (st.Step()) fn(st.Int(0), Upper(st.Text(1)) + " " + Upper(st.Text(2)));
    return st.status();
  };
  RETURN_IF_ERROR(load("ENUM_CUDA_MEMCPY_OPER", [&](int64_t id, const std::string& n) {
    static const std::pair<const char*, CopyKind> k[] = {
        {"HTOD", CopyKind::kHostToDevice},  {"DTOH", CopyKind::kDeviceToHost},
        {"HTOA", CopyKind::kHostToArray},   {"ATOH", CopyKind::kArrayToHost},
        {"ATOA", CopyKind::kArrayToArray},  {"ATOD", CopyKind::kArrayToDevice},
        {"DTOA", CopyKind::kDeviceToArray}, {"DTOD", CopyKind::kDeviceToDevice},
        {"HTOH", CopyKind::kHostToHost},    {"PTOP", CopyKind::kPeerToPeer}};
    copy_kinds_[id] = CopyKind::kUnknown;
    for (const auto& [s, v] : k) {
      if (n.find(s) != std::string::npos) copy_kinds_[id] = v;
    }
  }));
  RETURN_IF_ERROR(load("ENUM_CUDA_MEM_KIND", [&](int64_t id, const std::string& n) {
    // Longest names first: "DEVICE_STATIC" must win over "DEVICE".
    static const std::pair<const char*, MemoryKind> k[] = {
        {"MANAGED_STATIC", MemoryKind::kManagedStatic},
        {"DEVICE_STATIC", MemoryKind::kDeviceStatic},
        {"PAGEABLE", MemoryKind::kPageable},
        {"PINNED", MemoryKind::kPinned},
        {"DEVICE", MemoryKind::kDevice},
        {"ARRAY", MemoryKind::kArray},
        {"MANAGED", MemoryKind::kManaged}};
    mem_kinds_[id] = MemoryKind::kUnknown;
    for (const auto& [s, v] : k) {
      if (n.find(s) != std::string::npos) {
        mem_kinds_[id] = v;
        break;
      }
    }
  }));
  RETURN_IF_ERROR(load("ENUM_CUPTI_SYNC_TYPE", [&](int64_t id, const std::string& n) {
    static const std::pair<const char*, SyncType> k[] = {
        {"EVENT_SYNCHRONIZE", SyncType::kEventSynchronize},
        {"STREAM_WAIT_EVENT", SyncType::kStreamWaitEvent},
        {"STREAM_SYNCHRONIZE", SyncType::kStreamSynchronize},
        {"CONTEXT_SYNCHRONIZE", SyncType::kContextSynchronize}};
    sync_types_[id] = SyncType::kUnknown;
    for (const auto& [s, v] : k) {
      if (n.find(s) != std::string::npos) sync_types_[id] = v;
    }
  }));
  return load("ENUM_NSYS_EVENT_TYPE", [&](int64_t id, const std::string& n) {
    std::string name = n.substr(0, n.find(' '));
    if (name == "NVTXMARK") ev_mark_ = id;
    if (name == "NVTXPUSHPOPRANGE") ev_push_pop_ = id;
    if (name == "NVTXSTARTENDRANGE") ev_start_end_ = id;
    if (name == "NVTXDOMAINCREATE") ev_domain_create_ = id;
  });
}

template <typename E>
E Lookup(const std::map<int64_t, E>& m, int64_t v, int max_cupti) {
  if (m.empty()) return v >= 0 && v <= max_cupti ? static_cast<E>(v) : static_cast<E>(0);
  auto it = m.find(v);
  return it == m.end() ? static_cast<E>(0) : it->second;
}

// The columns every activity table of GPU work is selected with first
// (start, end, deviceId, contextId, streamId, correlationId: 0-5), into a
// kernel, copy or memset record.
template <typename Record>
Record GpuActivity(const Statement& st, int64_t start, int64_t end) {
  Record r{};
  r.start_ns = start;
  r.end_ns = end;
  r.device = static_cast<uint32_t>(st.Int(2));
  r.context = static_cast<uint32_t>(st.Int(3));
  r.stream = static_cast<uint32_t>(st.Int(4));
  r.correlation = static_cast<uint32_t>(st.Int(5));
  return r;
}

template <typename RowFn>
Status NsysImporter::ForEachInterval(const std::string& t, Statement& st, RowFn row) {
  int64_t rows = 0;
  while (st.Step()) {
    ++rows;
    const int64_t start = st.Int(0), end = st.Int(1);
    if (st.IsNull(0) || st.IsNull(1) || end < start) {
      Malformed("bad_time", "rows with a NULL start/end or end < start");
      continue;
    }
    RETURN_IF_ERROR(row(st, start, end));
    Track(start, end);
    RETURN_IF_ERROR(MaybeCommit());
  }
  if (!st.ok()) return TableError(t, st.status());
  Count(t, rows);
  return OkStatus();
}

Status NsysImporter::Kernels() {
  const std::string t = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!tables_.count(t)) return OkStatus();
  ASSIGN_OR_RETURN(Statement st, Select(t,
                                        {"start",
                                         "end",
                                         "deviceId",
                                         "contextId",
                                         "streamId",
                                         "correlationId",
                                         "demangledName",
                                         "shortName",
                                         "mangledName",
                                         "gridX",
                                         "gridY",
                                         "gridZ",
                                         "blockX",
                                         "blockY",
                                         "blockZ",
                                         "registersPerThread",
                                         "staticSharedMemory",
                                         "dynamicSharedMemory",
                                         "graphId",
                                         "graphNodeId",
                                         "globalPid"},
                                        "ORDER BY start"));
  int64_t kernel_ns = 0;
  RETURN_IF_ERROR(
      ForEachInterval(t, st, [&](const Statement& st, int64_t start, int64_t end) -> Status {
        KernelRecord k = GpuActivity<KernelRecord>(st, start, end);
        ASSIGN_OR_RETURN(k.name, NsysString(st.IsNull(6) ? st.Int(7) : st.Int(6)));
        if (!st.IsNull(8)) {
          ASSIGN_OR_RETURN(k.mangled_name, NsysString(st.Int(8)));
        }
        k.grid_x = static_cast<int32_t>(st.Int(9));
        k.grid_y = static_cast<int32_t>(st.Int(10));
        k.grid_z = static_cast<int32_t>(st.Int(11));
        k.block_x = static_cast<int32_t>(st.Int(12));
        k.block_y = static_cast<int32_t>(st.Int(13));
        k.block_z = static_cast<int32_t>(st.Int(14));
        k.registers_per_thread = static_cast<uint32_t>(st.Int(15));
        k.static_smem_bytes = static_cast<int32_t>(st.Int(16));
        k.dynamic_smem_bytes = static_cast<int32_t>(st.Int(17));
        k.graph_id = static_cast<uint32_t>(st.Int(18));
        k.graph_node_id = static_cast<uint64_t>(st.Int(19));
        if (!st.IsNull(20)) NotePid(st.Int(20));
        kernel_ns += end - start;
        w_->AddKernel(k);
        return OkStatus();
      }));
  stats_->Set(
      stats_->Add("import_kernel_time_ns", "sum of the durations of the imported kernels, ns"),
      kernel_ns);
  return OkStatus();
}

Status NsysImporter::Memcpy() {
  const std::string t = "CUPTI_ACTIVITY_KIND_MEMCPY";
  if (!tables_.count(t)) return OkStatus();
  ASSIGN_OR_RETURN(Statement st, Select(t,
                                        {"start", "end", "deviceId", "contextId", "streamId",
                                         "correlationId", "bytes", "copyKind", "srcKind", "dstKind",
                                         "dstDeviceId", "graphId", "globalPid"},
                                        "ORDER BY start"));
  RETURN_IF_ERROR(
      ForEachInterval(t, st, [&](const Statement& st, int64_t start, int64_t end) -> Status {
        MemcpyRecord m = GpuActivity<MemcpyRecord>(st, start, end);
        m.bytes = static_cast<uint64_t>(st.Int(6));
        m.copy_kind = Lookup(copy_kinds_, st.Int(7), 10);
        m.src_kind = Lookup(mem_kinds_, st.Int(8), 7);
        m.dst_kind = Lookup(mem_kinds_, st.Int(9), 7);
        m.dst_device = st.IsNull(10) ? m.device : static_cast<uint32_t>(st.Int(10));
        m.graph_id = static_cast<uint32_t>(st.Int(11));
        if (!st.IsNull(12)) NotePid(st.Int(12));
        w_->AddMemcpy(m);
        return OkStatus();
      }));
  return OkStatus();
}

Status NsysImporter::Memset() {
  const std::string t = "CUPTI_ACTIVITY_KIND_MEMSET";
  if (!tables_.count(t)) return OkStatus();
  ASSIGN_OR_RETURN(std::set<std::string> have, Columns(t));
  const char* kind_col = have.count("memKind") ? "memKind" : "memoryKind";
  ASSIGN_OR_RETURN(Statement st,
                   Select(t,
                          {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                           "bytes", "value", kind_col, "graphId", "globalPid"},
                          "ORDER BY start"));
  RETURN_IF_ERROR(
      ForEachInterval(t, st, [&](const Statement& st, int64_t start, int64_t end) -> Status {
        MemsetRecord m = GpuActivity<MemsetRecord>(st, start, end);
        m.bytes = static_cast<uint64_t>(st.Int(6));
        m.value = static_cast<uint32_t>(st.Int(7));
        m.memory_kind = Lookup(mem_kinds_, st.Int(8), 7);
        m.graph_id = static_cast<uint32_t>(st.Int(9));
        if (!st.IsNull(10)) NotePid(st.Int(10));
        w_->AddMemset(m);
        return OkStatus();
      }));
  return OkStatus();
}

// nsys names API functions with their version suffix ("cudaLaunchKernel_v7000");
// captured traces use the plain name, so the suffix is dropped.
std::string_view StripVersion(std::string_view s) {
  size_t v = s.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= s.size()) return s;
  for (size_t i = v + 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return s;
  }
  return s.substr(0, v);
}

Status NsysImporter::Api(const std::string& t, ApiDomain domain) {
  if (!tables_.count(t)) return OkStatus();
  ASSIGN_OR_RETURN(
      Statement st,
      Select(t, {"start", "end", "globalTid", "correlationId", "nameId", "returnValue", "cbid"},
             "ORDER BY start"));
  ASSIGN_OR_RETURN(Statement name, Prepare(src_, "SELECT value FROM StringIds WHERE id = ?"));
  std::unordered_map<int64_t, StringId> names;  // nsys name id -> stripped name
  RETURN_IF_ERROR(
      ForEachInterval(t, st, [&](const Statement& st, int64_t start, int64_t end) -> Status {
        ApiRecord a{};
        a.start_ns = start;
        a.end_ns = end;
        a.tid = NsysTid(st.Int(2));
        NotePid(st.Int(2));
        tids_.insert(a.tid);
        a.correlation = static_cast<uint32_t>(st.Int(3));
        auto it = names.find(st.Int(4));
        if (it == names.end()) {
          name.BindInt(1, st.Int(4));
          StringId sid = name.Step() ? strings_.Get(StripVersion(name.Text(0))) : kNoString;
          name.Reset();
          it = names.emplace(st.Int(4), sid).first;
        }
        a.name = it->second;
        a.return_code = static_cast<int32_t>(st.Int(5));
        a.cbid = static_cast<uint32_t>(st.Int(6));
        a.domain = domain;
        w_->AddApi(a);
        return OkStatus();
      }));
  return OkStatus();
}

Status NsysImporter::Sync() {
  const std::string t = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
  if (!tables_.count(t)) return OkStatus();
  ASSIGN_OR_RETURN(Statement st, Select(t,
                                        {"start", "end", "contextId", "streamId", "correlationId",
                                         "syncType", "eventId", "globalPid"},
                                        "ORDER BY start"));
  RETURN_IF_ERROR(
      ForEachInterval(t, st, [&](const Statement& st, int64_t start, int64_t end) -> Status {
        SyncRecord s{};
        s.start_ns = start;
        s.end_ns = end;
        s.context = static_cast<uint32_t>(st.Int(2));
        s.stream = static_cast<uint32_t>(st.Int(3));  // CUPTI's 0xffffffff: not stream-specific
        s.correlation = static_cast<uint32_t>(st.Int(4));
        s.type = Lookup(sync_types_, st.Int(5), 4);
        s.event = static_cast<uint32_t>(st.Int(6));
        if (!st.IsNull(7)) NotePid(st.Int(7));
        w_->AddSync(s);
        return OkStatus();
      }));
  // The waiting thread is the one that made the synchronizing API call (every
  // sync row here was written with tid 0).
  return FillSyncThreads(w_->db());
}

Status NsysImporter::Nvtx() {
  const std::string t = "NVTX_EVENTS";
  if (!tables_.count(t)) return OkStatus();
  // Domains: an NvtxDomainCreate row names domainId within its process.
  std::map<std::pair<uint32_t, int64_t>, StringId> domains;
  {
    ASSIGN_OR_RETURN(Statement st,
                     Select(t, {"domainId", "text", "textId", "globalTid", "eventType"},
                            "WHERE eventType = " + std::to_string(ev_domain_create_)));
    while (st.Step()) {
      StringId name = kNoString;
      if (!st.IsNull(1)) {
        name = strings_.Get(st.Text(1));
      } else {
        ASSIGN_OR_RETURN(name, NsysString(st.Int(2)));
      }
      domains[{NsysPid(st.Int(3)), st.Int(0)}] = name;
    }
    if (!st.ok()) return TableError(t, st.status());
  }
  ASSIGN_OR_RETURN(Statement st, Select(t,
                                        {"start", "end", "eventType", "text", "textId", "globalTid",
                                         "endGlobalTid", "domainId", "category", "color"},
                                        "ORDER BY start"));
  RangeDepthTracker depth;
  std::map<uint64_t, std::pair<uint32_t, StringId>> keys;  // depth key -> (tid, domain)
  int64_t rows = 0, other = 0;
  while (st.Step()) {
    ++rows;
    int64_t type = st.Int(2);
    NvtxRecord r{};
    if (type == ev_push_pop_) {
      r.kind = NvtxKind::kPushPop;
    } else if (type == ev_start_end_) {
      r.kind = NvtxKind::kStartEnd;
    } else if (type == ev_mark_) {
      r.kind = NvtxKind::kMark;
    } else {
      ++other;  // domain creation, category/thread naming, NVTXT, payloads
      continue;
    }
    r.start_ns = st.Int(0);
    if (st.IsNull(0)) {
      Malformed("bad_time", "rows with a NULL start/end or end < start");
      continue;
    }
    r.end_ns = r.kind == NvtxKind::kMark       ? r.start_ns
               : st.IsNull(1) || st.Int(1) < 0 ? -1
                                               : st.Int(1);
    if (r.end_ns != -1 && r.end_ns < r.start_ns) {
      Malformed("bad_time", "rows with a NULL start/end or end < start");
      continue;
    }
    if (!st.IsNull(3)) {
      r.name = strings_.Get(st.Text(3));
    } else if (!st.IsNull(4)) {
      ASSIGN_OR_RETURN(r.name, NsysString(st.Int(4)));
    }
    r.tid = NsysTid(st.Int(5));
    NotePid(st.Int(5));
    tids_.insert(r.tid);
    r.end_tid = st.IsNull(6) || st.Int(6) == 0 ? r.tid : NsysTid(st.Int(6));
    auto d = domains.find({NsysPid(st.Int(5)), st.Int(7)});
    r.domain = d == domains.end() ? kNoString : d->second;
    r.category = static_cast<uint32_t>(st.Int(8));
    r.color = static_cast<uint32_t>(st.Int(9));
    if (r.kind == NvtxKind::kPushPop && r.end_ns >= 0) {
      // Push/pop stacks are per thread and per domain.
      uint64_t key = (static_cast<uint64_t>(r.tid) << 32) | r.domain;
      keys[key] = {r.tid, r.domain};
      r.depth = depth.Depth(key, r.start_ns, r.end_ns);
    }
    Track(r.start_ns, r.end_ns < 0 ? r.start_ns : r.end_ns);
    w_->AddNvtx(r);
    RETURN_IF_ERROR(MaybeCommit());
  }
  if (!st.ok()) return TableError(t, st.status());
  uint64_t partial = depth.partial_overlaps();
  for (uint64_t key : depth.unordered_keys()) {
    RETURN_IF_ERROR(RecomputeNvtxDepth(w_->db(), keys[key].first, {keys[key].second}, &partial));
  }
  Count(t, rows);
  stats_->Set(
      stats_->Add("nsys_nvtx_other_events",
                  "NVTX_EVENTS rows that are not ranges or marks (domain/category/thread naming)"),
      other);
  stats_->Set(stats_->Add("import_nvtx_partial_overlaps",
                          "ranges that overlap an enclosing range without nesting in it"),
              static_cast<int64_t>(partial));
  return OkStatus();
}

Status NsysImporter::Devices() {
  const std::string t = "TARGET_INFO_GPU";
  if (!tables_.count(t)) return OkStatus();
  ASSIGN_OR_RETURN(Statement st,
                   Select(t, {"id", "name", "uuid", "computeMajor", "computeMinor", "smCount",
                              "totalMemory", "memoryBandwidth", "l2CacheSize", "clockRate",
                              "maxWarpsPerSm", "maxShmemPerBlock"}));
  while (st.Step()) {
    DeviceRecord d{};
    d.id = static_cast<uint32_t>(st.Int(0));
    d.name = strings_.Get(st.Text(1));
    std::string_view uuid = st.Text(2);
    uuid.copy(d.uuid, std::min(uuid.size(), sizeof(d.uuid) - 1));
    d.cc_major = static_cast<uint32_t>(st.Int(3));
    d.cc_minor = static_cast<uint32_t>(st.Int(4));
    d.sm_count = static_cast<uint32_t>(st.Int(5));
    d.global_memory_bytes = static_cast<uint64_t>(st.Int(6));
    d.memory_bandwidth_bytes_per_s = static_cast<uint64_t>(st.Int(7));
    d.l2_cache_bytes = static_cast<uint32_t>(st.Int(8));
    d.core_clock_khz = static_cast<uint32_t>(st.Int(9) / 1000);  // nsys: Hz
    d.max_warps_per_sm = static_cast<uint32_t>(st.Int(10));
    d.max_shared_memory_per_block = static_cast<uint32_t>(st.Int(11));
    w_->AddDevice(d);
  }
  if (!st.ok()) return TableError(t, st.status());
  return OkStatus();
}

Status NsysImporter::Threads() {
  const std::string t = "ThreadNames";
  std::set<uint32_t> named;
  if (tables_.count(t)) {
    ASSIGN_OR_RETURN(Statement st, Select(t, {"globalTid", "nameId"}));
    while (st.Step()) {
      uint32_t tid = NsysTid(st.Int(0));
      // Threads with CUDA/NVTX rows, and every thread of a process with host
      // rows (scheduling, OS runtime, samples): the host view names them all.
      if (!tids_.count(tid) && !host_tids_.count(tid) && !host_pids_.count(NsysPid(st.Int(0))))
        continue;
      ASSIGN_OR_RETURN(StringId name, NsysString(st.Int(1)));
      w_->SetThreadName(tid, name);
      named.insert(tid);
    }
    if (!st.ok()) return TableError(t, st.status());
  }
  for (const std::set<uint32_t>* set : {&tids_, &host_tids_}) {
    for (uint32_t tid : *set) {
      if (named.insert(tid).second) w_->SetThreadName(tid, kNoString);
    }
  }
  return OkStatus();
}

Status NsysImporter::Meta() {
  w_->SetMeta("source", "nsys-sqlite");
  w_->SetMeta("clock", "nsys-session");
  int64_t offset = 0;
  if (tables_.count("TARGET_INFO_SESSION_START_TIME")) {
    ASSIGN_OR_RETURN(Statement st, Select("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}));
    if (st.Step()) offset = st.Int(0);
  }
  w_->SetMeta("wall_clock_offset_ns", std::to_string(offset));
  if (min_ns_ <= max_ns_) {
    w_->SetMeta("start_ns", std::to_string(min_ns_));
    w_->SetMeta("end_ns", std::to_string(max_ns_));
  }
  pids_.erase(0);
  if (!pids_.empty()) w_->SetMeta("pid", std::to_string(*pids_.begin()));
  // The process's name as nsys recorded it (PROCESSES.name: "python3"), for labels.
  if (!pids_.empty() && tables_.count("PROCESSES")) {
    ASSIGN_OR_RETURN(Statement st, Select("PROCESSES", {"pid", "name"}));
    while (st.Step()) {
      if (st.Int(0) != *pids_.begin() || st.Text(1).empty()) continue;
      w_->SetMeta("process_name", std::string(st.Text(1)));
      break;
    }
    if (!st.ok()) return TableError("PROCESSES", st.status());
  }
  stats_->Set(stats_->Add("nsys_processes",
                          "distinct process ids in the export (a stepscope trace is one process; "
                          "more than 1 means several were merged, meta.pid is the lowest)"),
              static_cast<int64_t>(pids_.size()));
  return OkStatus();
}

// Every skipped row is counted; this turns the counts into warnings, and an
// export without GPU activity into a loud one.
void NsysImporter::WarnDropped() {
  std::string why;
  int64_t rows = 0, gpu = 0;
  for (const ImportStats::Counter& c : stats_->counters()) {
    if (c.name.rfind("import_malformed_", 0) == 0 && c.name != "import_malformed_events" &&
        c.value > 0) {
      why += (why.empty() ? "" : ", ") + c.name + " " + std::to_string(c.value);
    }
    if (c.name.rfind("nsys_rows_", 0) == 0) rows += c.value;
    if (c.name == "nsys_rows_CUPTI_ACTIVITY_KIND_KERNEL" ||
        c.name == "nsys_rows_CUPTI_ACTIVITY_KIND_MEMCPY" ||
        c.name == "nsys_rows_CUPTI_ACTIVITY_KIND_MEMSET") {
      gpu += c.value;
    }
  }
  if (!why.empty()) {
    stats_->Warn("skipped " + std::to_string(stats_->Get("import_malformed_events")) +
                 " malformed rows (" + why + ")");
  }
  if (const int64_t n = stats_->Get("nsys_missing_strings"); n > 0) {
    stats_->Warn(std::to_string(n) +
                 " string ids not in StringIds, stored as '' (stats "
                 "nsys_missing_strings)");
  }
  if (gpu == 0 && rows > 0) {
    stats_->Warn(
        "no GPU activity imported: the export has no CUPTI_ACTIVITY_KIND_KERNEL, "
        "MEMCPY or MEMSET rows (was it recorded with --trace cuda?)");
  }
}

Status NsysImporter::Run() {
  {
    StatusOr<Statement> st = Prepare(src_, "SELECT name FROM sqlite_master WHERE type = 'table'");
    if (!st.ok()) {
      return InvalidInput(std::string("byte 0: cannot read as an SQLite database: ") +
                          sqlite3_errmsg(src_));
    }
    while (st->Step()) tables_.insert(std::string(st->Text(0)));
    if (!st->ok()) return InvalidInput("sqlite_master: " + st->status().message());
  }
  if (tables_.count("meta") && tables_.count("kernels") && tables_.count("nvtx")) {
    return InvalidInput("sqlite_master: this is already a stepscope trace; nothing to import");
  }
  bool any = tables_.count("NVTX_EVENTS") > 0;
  for (const std::string& t : tables_) any = any || t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0;
  if (!tables_.count("StringIds") || !any) {
    return InvalidInput(
        "sqlite_master: no StringIds and CUPTI_ACTIVITY_KIND_* / NVTX_EVENTS tables: not "
        "an Nsight Systems export (make one with 'nsys export --type sqlite REPORT.nsys-rep')");
  }
  ASSIGN_OR_RETURN(string_lookup_, Prepare(src_, "SELECT value FROM StringIds WHERE id = ?"));
  RETURN_IF_ERROR(LoadEnums());
  RETURN_IF_ERROR(Devices());
  RETURN_IF_ERROR(Kernels());
  RETURN_IF_ERROR(Memcpy());
  RETURN_IF_ERROR(Memset());
  RETURN_IF_ERROR(ImportNsysUnifiedMemory(src_, w_, stats_));
  RETURN_IF_ERROR(Api("CUPTI_ACTIVITY_KIND_RUNTIME", ApiDomain::kRuntime));
  RETURN_IF_ERROR(Api("CUPTI_ACTIVITY_KIND_DRIVER", ApiDomain::kDriver));
  RETURN_IF_ERROR(Sync());
  RETURN_IF_ERROR(Nvtx());
  RETURN_IF_ERROR(ImportNsysHost(src_, w_, stats_, &host_pids_, &host_tids_));
  RETURN_IF_ERROR(Threads());
  RETURN_IF_ERROR(Meta());
  WarnDropped();
  return w_->status();
}

}  // namespace

Status ImportNsysSqlite(const std::string& path, TraceWriter* w, ImportStats* stats) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return InvalidInput("byte 0: cannot open as SQLite: " + msg);
  }
  Status st;
  {
    NsysImporter imp(db, path, w, stats);
    st = imp.Run();
  }
  sqlite3_close_v2(db);
  return st;
}

}  // namespace stepscope
