#include "analysis/memory/memory_load.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "store/record_sql.h"

namespace stepscope::memory {

bool IsAllocationApi(const std::string& name) {
  for (const char* p :
       {"cudaMalloc", "cuMemAlloc", "cudaHostAlloc", "cuMemHostAlloc", "cuMemCreate"}) {
    if (StartsWith(name, p)) return true;
  }
  return false;
}

void ClassifyMemoryRow(MemoryKind memory_kind, bool is_async, uint32_t device, SeriesKind* kind,
                       int32_t* place) {
  *place = static_cast<int32_t>(device);
  switch (memory_kind) {
    case MemoryKind::kPinned:
      *kind = SeriesKind::kPinned;
      *place = kHostPlace;
      return;
    case MemoryKind::kManaged:
    case MemoryKind::kManagedStatic:
      *kind = SeriesKind::kManaged;
      return;
    case MemoryKind::kDevice:
    case MemoryKind::kDeviceStatic:
    case MemoryKind::kArray:
      *kind = is_async ? SeriesKind::kPool : SeriesKind::kDevice;
      return;
    default:
      *kind = is_async ? SeriesKind::kPool : SeriesKind::kOther;
      return;
  }
}

namespace {

Status LoadMemoryRows(const TraceReader& r, MemoryTrace* t) {
  // The api join is restricted to the correlations that memory rows use, so
  // that a trace with millions of launches does not pay for them.
  ASSIGN_OR_RETURN(
      Statement st,
      r.Query("SELECT m.ts_ns, m.op, m.address, m.bytes, m.memory_kind, m.device, m.stream, "
              "m.correlation, m.is_async, COALESCE(a.name_id, 0), COALESCE(a.tid, 0), "
              "COALESCE(a.start_ns, m.ts_ns) FROM memory m LEFT JOIN (SELECT correlation, "
              "MIN(name_id) AS name_id, MIN(tid) AS tid, MIN(start_ns) AS start_ns FROM api "
              "WHERE correlation IN (SELECT correlation FROM memory WHERE correlation != 0) "
              "GROUP BY correlation) a ON a.correlation = m.correlation AND m.correlation != 0 "
              "ORDER BY m.ts_ns, m.id"));
  while (st.Step()) {
    AllocEvent e;
    e.ts_ns = st.Int(0);
    int64_t op = st.Int(1);
    e.op = op == 1 ? MemoryOp::kAlloc : op == 2 ? MemoryOp::kFree : MemoryOp::kUnknown;
    e.address = static_cast<uint64_t>(st.Int(2));
    e.bytes = static_cast<uint64_t>(std::max<int64_t>(0, st.Int(3)));
    ClassifyMemoryRow(static_cast<MemoryKind>(st.Int(4)), st.Int(8) != 0,
                      static_cast<uint32_t>(st.Int(5)), &e.kind, &e.place);
    e.stream = static_cast<uint32_t>(st.Int(6));
    e.correlation = static_cast<uint32_t>(st.Int(7));
    e.api = static_cast<StringId>(st.Int(9));
    e.tid = static_cast<uint32_t>(st.Int(10));
    e.call_ns = st.Int(11);
    t->events.push_back(e);
    ++t->memory_rows;
  }
  return st.ok() ? OkStatus() : st.status();
}

Status LoadHostAllocRows(const TraceReader& r, MemoryTrace* t) {
  if (!TableExists(r.db(), "host_alloc")) return OkStatus();
  t->has_host_alloc = true;
  ASSIGN_OR_RETURN(std::vector<HostAllocRecord> rows,
                   LoadRecords<HostAllocRecord>(r.db(), " ORDER BY ts_ns, id"));
  for (const HostAllocRecord& h : rows) {
    AllocEvent e;
    e.ts_ns = e.call_ns = h.ts_ns;
    e.tid = h.tid;
    e.op = h.op == HostAllocOp::kAlloc  ? MemoryOp::kAlloc
           : h.op == HostAllocOp::kFree ? MemoryOp::kFree
                                        : MemoryOp::kUnknown;
    e.address = h.address;
    e.bytes = h.bytes;
    e.kind = h.kind == HostAllocKind::kMmap ? SeriesKind::kHostMmap : SeriesKind::kHostMalloc;
    e.place = kHostPlace;
    t->events.push_back(e);
    ++t->host_alloc_rows;
  }
  return OkStatus();
}

Status LoadOoms(const TraceReader& r, MemoryTrace* t) {
  std::set<uint32_t> seen;
  if (TableExists(r.db(), "oom")) {
    ASSIGN_OR_RETURN(Statement st, r.Query("SELECT ts_ns, tid, device, correlation, name_id, "
                                           "return_code, requested_bytes, memory_kind, "
                                           "free_bytes, total_bytes FROM oom ORDER BY ts_ns, id"));
    while (st.Step()) {
      OomEvent o;
      o.ts_ns = st.Int(0);
      o.tid = static_cast<uint32_t>(st.Int(1));
      o.device = static_cast<int32_t>(st.Int(2));
      o.correlation = static_cast<uint32_t>(st.Int(3));
      o.api = static_cast<StringId>(st.Int(4));
      o.return_code = static_cast<int32_t>(st.Int(5));
      o.requested_bytes = st.IsNull(6) ? -1 : st.Int(6);
      int32_t place = 0;
      ClassifyMemoryRow(static_cast<MemoryKind>(st.Int(7)), false, 0, &o.kind, &place);
      o.free_bytes = st.IsNull(8) ? -1 : st.Int(8);
      o.total_bytes = st.IsNull(9) ? -1 : st.Int(9);
      o.from_oom_table = true;
      if (o.correlation) seen.insert(o.correlation);
      t->ooms.push_back(o);
    }
    if (!st.ok()) return st.status();
  }
  // 2 is both cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY.
  ASSIGN_OR_RETURN(Statement st, r.Query("SELECT end_ns, tid, correlation, name_id, return_code "
                                         "FROM api WHERE return_code = 2 ORDER BY start_ns, id"));
  while (st.Step()) {
    StringId name = static_cast<StringId>(st.Int(3));
    uint32_t corr = static_cast<uint32_t>(st.Int(2));
    if (!IsAllocationApi(r.String(name)) || (corr && seen.count(corr))) continue;
    OomEvent o;
    o.ts_ns = st.Int(0);
    o.tid = static_cast<uint32_t>(st.Int(1));
    o.correlation = corr;
    o.api = name;
    o.return_code = static_cast<int32_t>(st.Int(4));
    const std::string& n = r.String(name);
    if (n.find("Host") != std::string::npos) o.kind = SeriesKind::kPinned;
    if (n.find("Managed") != std::string::npos) o.kind = SeriesKind::kManaged;
    t->ooms.push_back(o);
  }
  if (!st.ok()) return st.status();
  std::stable_sort(t->ooms.begin(), t->ooms.end(),
                   [](const OomEvent& a, const OomEvent& b) { return a.ts_ns < b.ts_ns; });
  return OkStatus();
}

}  // namespace

StatusOr<MemoryTrace> LoadMemoryTrace(const TraceReader& r) {
  MemoryTrace t;
  t.finalized = r.finalized();
  RETURN_IF_ERROR(LoadMemoryRows(r, &t).WithContext(r.path() + ": memory table"));
  RETURN_IF_ERROR(LoadHostAllocRows(r, &t).WithContext(r.path() + ": host_alloc table"));
  std::stable_sort(t.events.begin(), t.events.end(),
                   [](const AllocEvent& a, const AllocEvent& b) { return a.ts_ns < b.ts_ns; });
  ASSIGN_OR_RETURN(t.pools, r.MemoryPoolEvents());
  RETURN_IF_ERROR(LoadOoms(r, &t).WithContext(r.path() + ": oom evidence"));
  ASSIGN_OR_RETURN(std::vector<DeviceRecord> devices, r.Devices());
  for (const DeviceRecord& d : devices) t.device_memory_bytes[d.id] = d.global_memory_bytes;

  int64_t v = 0;
  t.start_ns =
      ParseInt64(r.Meta("start_ns"), &v) ? v : (t.events.empty() ? 0 : t.events.front().ts_ns);
  t.end_ns = ParseInt64(r.Meta("end_ns"), &v) ? v : (t.events.empty() ? 0 : t.events.back().ts_ns);
  if (!t.events.empty()) {
    t.start_ns = std::min(t.start_ns, t.events.front().ts_ns);
    t.end_ns = std::max(t.end_ns, t.events.back().ts_ns);
  }
  t.wall_clock_offset_ns = ParseInt64(r.Meta("wall_clock_offset_ns"), &v) ? v : 0;
  t.pid = ParseInt64(r.Meta("pid"), &v) ? static_cast<uint32_t>(v) : 0;
  return t;
}

}  // namespace stepscope::memory
