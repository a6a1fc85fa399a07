#include "analysis/memory/memory_load.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "store/memory_rows.h"

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
  ASSIGN_OR_RETURN(RowCursor<MemoryApiRow> rows, MemoryWithApiRows(r.db()));
  while (rows.Next()) {
    const MemoryApiRow& m = rows.row();
    AllocEvent e;
    e.ts_ns = m.ts_ns;
    e.op = m.op == 1 ? MemoryOp::kAlloc : m.op == 2 ? MemoryOp::kFree : MemoryOp::kUnknown;
    e.address = static_cast<uint64_t>(m.address);
    e.bytes = static_cast<uint64_t>(std::max<int64_t>(0, m.bytes));
    ClassifyMemoryRow(static_cast<MemoryKind>(m.memory_kind), m.is_async != 0,
                      static_cast<uint32_t>(m.device), &e.kind, &e.place);
    e.stream = static_cast<uint32_t>(m.stream);
    e.correlation = static_cast<uint32_t>(m.correlation);
    e.api = static_cast<StringId>(m.api_name_id);
    e.tid = static_cast<uint32_t>(m.api_tid);
    e.call_ns = m.api_start_ns;
    t->events.push_back(e);
    ++t->memory_rows;
  }
  return rows.status();
}

Status LoadHostAllocRows(const TraceReader& r, MemoryTrace* t) {
  if (!TableExists(r.db(), "host_alloc")) return OkStatus();
  t->has_host_alloc = true;
  ASSIGN_OR_RETURN(std::vector<HostAllocRecord> rows, LoadHostAllocs(r.db()));
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
  ASSIGN_OR_RETURN(std::vector<OomTableRow> oom_rows, LoadOomTable(r.db()));
  for (const OomTableRow& row : oom_rows) {
    OomEvent o;
    o.ts_ns = row.ts_ns;
    o.tid = static_cast<uint32_t>(row.tid);
    o.device = static_cast<int32_t>(row.device);
    o.correlation = static_cast<uint32_t>(row.correlation);
    o.api = static_cast<StringId>(row.name_id);
    o.return_code = static_cast<int32_t>(row.return_code);
    o.requested_bytes = row.requested_bytes;
    int32_t place = 0;
    ClassifyMemoryRow(static_cast<MemoryKind>(row.memory_kind), false, 0, &o.kind, &place);
    o.free_bytes = row.free_bytes;
    o.total_bytes = row.total_bytes;
    o.from_oom_table = true;
    if (o.correlation) seen.insert(o.correlation);
    t->ooms.push_back(o);
  }
  // 2 is both cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY.
  ASSIGN_OR_RETURN(std::vector<FailedApiRow> failed, LoadOutOfMemoryApiCalls(r.db()));
  for (const FailedApiRow& a : failed) {
    StringId name = static_cast<StringId>(a.name_id);
    uint32_t corr = static_cast<uint32_t>(a.correlation);
    if (!IsAllocationApi(r.String(name)) || (corr && seen.count(corr))) continue;
    OomEvent o;
    o.ts_ns = a.end_ns;
    o.tid = static_cast<uint32_t>(a.tid);
    o.correlation = corr;
    o.api = name;
    o.return_code = static_cast<int32_t>(a.return_code);
    const std::string& n = r.String(name);
    if (n.find("Host") != std::string::npos) o.kind = SeriesKind::kPinned;
    if (n.find("Managed") != std::string::npos) o.kind = SeriesKind::kManaged;
    t->ooms.push_back(o);
  }
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
