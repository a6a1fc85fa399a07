// The unified-memory recipes: um_sum, um_total_sum, um_cpu_page_faults_sum
// and um_step_share (docs/recipes.md, docs/um.md). They read the `um` table;
// a trace without unified memory gives empty tables.
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/model/um.h"
#include "analysis/recipes/recipes.h"

namespace stepscope {
namespace {

std::string Hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// The device a UM event concerns (for --device): the GPU end of a migration,
// the faulting GPU; CPU faults concern no device (kept).
bool UmOnDevice(const Scope& s, const UmRecord& u) {
  switch (u.kind) {
    case UmCounterKind::kBytesHtoD:
      return s.HasDevice(u.dst_id);
    case UmCounterKind::kBytesDtoH:
    case UmCounterKind::kGpuPageFault:
      return s.HasDevice(u.src_id);
    default:
      return true;
  }
}

bool InScope(const Scope& s, const UmRecord& u) { return s.InTime(u.start_ns) && UmOnDevice(s, u); }

// Managed allocations (memory rows, kind managed) as [address, address+bytes).
struct Allocation {
  uint64_t address, bytes;
};
std::vector<Allocation> ManagedAllocations(const TraceModel& m) {
  std::vector<Allocation> v;
  for (const MemoryRecord& r : m.memory()) {
    if (r.op == MemoryOp::kAlloc &&
        (r.memory_kind == MemoryKind::kManaged || r.memory_kind == MemoryKind::kManagedStatic))
      v.push_back({r.address, r.bytes});
  }
  std::sort(v.begin(), v.end(),
            [](const Allocation& a, const Allocation& b) { return a.address < b.address; });
  return v;
}

// Index of the allocation holding `addr`, or -1 (system-allocated memory on
// ATS/HMM systems, or an allocation made before the trace started).
int FindAllocation(const std::vector<Allocation>& v, uint64_t addr) {
  auto it = std::upper_bound(v.begin(), v.end(), addr,
                             [](uint64_t a, const Allocation& x) { return a < x.address; });
  if (it == v.begin()) return -1;
  --it;
  return addr < it->address + it->bytes ? static_cast<int>(it - v.begin()) : -1;
}

}  // namespace

// Per managed allocation (the allocation holding each event's address):
// migrated bytes each way, faults. Events outside every recorded managed
// allocation are one row, "not managed": system-allocated memory migrated by
// ATS/HMM (Grace Hopper, HMM-enabled x86) or allocations older than the trace.
StatusOr<Table> UmSum(const TraceModel& m, const RecipeOptions& o) {
  struct Row {
    uint64_t htod = 0, dtoh = 0, dtod = 0;
    int64_t htod_n = 0, dtoh_n = 0, cpu_faults = 0, fault_groups = 0, faults = 0, thrash = 0;
    int64_t migrate_ns = 0;
  };
  const std::vector<Allocation> allocs = ManagedAllocations(m);
  std::map<int, Row> rows;
  for (const UmRecord& u : m.um()) {
    // The driver's totals have no address: um_total_sum shows them.
    if (!InScope(o.scope, u) || IsUmDriverTotal(u.kind)) continue;
    Row& r = rows[FindAllocation(allocs, u.address)];
    switch (u.kind) {
      case UmCounterKind::kBytesHtoD:
        r.htod += u.value, ++r.htod_n, r.migrate_ns += u.end_ns - u.start_ns;
        break;
      case UmCounterKind::kBytesDtoH:
        r.dtoh += u.value, ++r.dtoh_n, r.migrate_ns += u.end_ns - u.start_ns;
        break;
      case UmCounterKind::kBytesDtoD:
        r.dtod += u.value, r.migrate_ns += u.end_ns - u.start_ns;
        break;
      case UmCounterKind::kCpuPageFault:
        ++r.cpu_faults;
        break;
      case UmCounterKind::kGpuPageFault:
        ++r.fault_groups, r.faults += static_cast<int64_t>(u.value);
        break;
      case UmCounterKind::kThrashing:
        ++r.thrash;
        break;
      default:
        break;
    }
  }
  std::vector<std::pair<int, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    const uint64_t x = a.second.htod + a.second.dtoh, y = b.second.htod + b.second.dtoh;
    return x != y ? x > y : a.first < b.first;
  });
  Table t({{"allocation", "Allocation", false},
           {"alloc_mb", "Size (MB)", true},
           {"htod_mb", "HtoD (MB)", true},
           {"htod_count", "HtoD Migrations", true},
           {"dtoh_mb", "DtoH (MB)", true},
           {"dtoh_count", "DtoH Migrations", true},
           {"dtod_mb", "DtoD (MB)", true},
           {"migrate_ns", "Migration Time (ns)", true},
           {"cpu_faults", "CPU Faults", true},
           {"gpu_fault_groups", "GPU Fault Groups", true},
           {"gpu_faults", "GPU Faults", true},
           {"thrashing", "Thrashing", true}});
  const double mb = 1e6;
  for (const auto& [idx, r] : sorted) {
    t.AddRow({idx < 0 ? Cell("not managed") : Cell(Hex(allocs[idx].address)),
              idx < 0 ? Cell("") : Cell(allocs[idx].bytes / mb, 3), Cell(r.htod / mb, 3),
              Cell(r.htod_n), Cell(r.dtoh / mb, 3), Cell(r.dtoh_n), Cell(r.dtod / mb, 3),
              Cell(r.migrate_ns), Cell(r.cpu_faults), Cell(r.fault_groups), Cell(r.faults),
              Cell(r.thrash)});
  }
  return t;
}

// One row per UM event kind: count, total (bytes in MB, or faults), time.
// The driver's totals (driver_*) are rows of their own: count = poll
// intervals in which the total moved, time = those intervals (not copy time:
// no throughput).
StatusOr<Table> UmTotalSum(const TraceModel& m, const RecipeOptions& o) {
  struct Row {
    int64_t count = 0;
    uint64_t value = 0;
    int64_t ns = 0;
  };
  Row rows[kUmCounterKindMax + 1];
  for (const UmRecord& u : m.um()) {
    if (!InScope(o.scope, u)) continue;
    Row& r = rows[static_cast<size_t>(u.kind) % (kUmCounterKindMax + 1)];
    ++r.count;
    r.value += u.kind == UmCounterKind::kCpuPageFault ? 1 : u.value;
    r.ns += u.end_ns - u.start_ns;
  }
  Table t({{"kind", "Kind", false},
           {"count", "Count", true},
           {"total", "Total", true},
           {"unit", "Unit", false},
           {"total_ns", "Total Time (ns)", true},
           {"gb_per_s", "Throughput (GB/s)", true}});
  for (int k = 1; k <= kUmCounterKindMax; ++k) {
    const Row& r = rows[k];
    if (r.count == 0) continue;
    const auto kind = static_cast<UmCounterKind>(k);
    const bool bytes = IsUmMigration(kind) || kind == UmCounterKind::kThrashing ||
                       kind == UmCounterKind::kRemoteMap || IsUmDriverBytes(kind);
    const bool rate = IsUmMigration(kind) && r.ns > 0;
    t.AddRow({UmCounterKindName(kind), Cell(r.count),
              bytes ? Cell(r.value / 1e6, 3) : Cell(static_cast<int64_t>(r.value)),
              bytes ? "MB"
              : kind == UmCounterKind::kGpuPageFault || kind == UmCounterKind::kDriverCpuFaults ||
                      kind == UmCounterKind::kDriverGpuFaults
                  ? "faults"
                  : "events",
              Cell(r.ns), rate ? Cell(static_cast<double>(r.value) / r.ns, 3) : Cell("")});
  }
  return t;
}

// CPU page faults grouped by the faulting instruction (um.value = its PC).
StatusOr<Table> UmCpuPageFaultsSum(const TraceModel& m, const RecipeOptions& o) {
  std::map<uint64_t, std::pair<int64_t, uint64_t>> by_pc;  // pc -> (faults, first address)
  int64_t total = 0;
  for (const UmRecord& u : m.um()) {
    if (u.kind != UmCounterKind::kCpuPageFault || !InScope(o.scope, u)) continue;
    auto [it, fresh] = by_pc.try_emplace(u.value, 0, u.address);
    ++it->second.first;
    ++total;
  }
  std::vector<std::pair<uint64_t, std::pair<int64_t, uint64_t>>> v(by_pc.begin(), by_pc.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
  });
  Table t({{"faults_pct", "Faults (%)", true},
           {"faults", "CPU Page Faults", true},
           {"pc", "CPU Instruction Address", false},
           {"first_address", "First Faulting Address", false}});
  for (const auto& [pc, r] : v) {
    t.AddRow({Cell(100.0 * r.first / total, 1), Cell(r.first), Hex(pc), Hex(r.second)});
  }
  return t;
}

// Per step: UM migrations against explicit copies, by count and by bytes
// (the share of memory operations that involve unified memory). Without
// steps, one row for the whole scope (step "all"). Copies are counted by
// their launching call's step; migrations by their start time inside the
// step's GPU window. The bytes come from the driver's totals when the trace
// has them (complete; CUPTI's records of a fault storm are not), the counts
// from CUPTI's records (blank without them: the totals count no operations).
StatusOr<Table> UmStepShare(const TraceModel& m, const RecipeOptions& o) {
  ASSIGN_OR_RETURN(StepSet steps, DetectSteps(m, o.steps));
  struct Row {
    int64_t copies = 0, migrations = 0;
    uint64_t copy_bytes = 0, um_bytes = 0;
  };
  const bool by_step = !steps.steps.empty();
  std::vector<Row> rows(by_step ? steps.steps.size() : 1);
  std::vector<int32_t> op_step = by_step ? OpSteps(m, steps) : std::vector<int32_t>{};
  const auto& ops = m.gpu_ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != GpuOpKind::kMemcpy || !o.scope.IncludesOp(m, ops[i])) continue;
    const int s = by_step ? op_step[i] : 0;
    if (s < 0) continue;
    ++rows[s].copies;
    rows[s].copy_bytes += m.memcpys()[ops[i].index].bytes;
  }
  bool driver = false, cupti = false;
  for (const UmRecord& u : m.um()) {
    driver |= IsUmDriverBytes(u.kind);
    cupti |= IsUmMigration(u.kind);
  }
  for (const UmRecord& u : m.um()) {
    const bool counted = IsUmMigration(u.kind);                     // CUPTI: one operation
    const bool bytes = driver ? IsUmDriverBytes(u.kind) : counted;  // the complete source
    if ((!counted && !bytes) || !InScope(o.scope, u)) continue;
    int s = 0;
    if (by_step) {
      s = -1;
      for (size_t k = 0; k < steps.steps.size() && s < 0; ++k) {
        if (u.start_ns >= steps.steps[k].start_ns && u.start_ns < steps.steps[k].end_ns)
          s = static_cast<int>(k);
      }
      if (s < 0) continue;
    }
    if (counted) ++rows[s].migrations;
    if (bytes) rows[s].um_bytes += u.value;
  }
  Table t({{"step", "Step", false},
           {"copies", "Copies", true},
           {"copy_mb", "Copy (MB)", true},
           {"um_migrations", "UM Migrations", true},
           {"um_mb", "UM (MB)", true},
           {"um_ops_pct", "UM Ops (%)", true},
           {"um_bytes_pct", "UM Bytes (%)", true}});
  auto pct = [](double a, double b) { return a + b > 0 ? Cell(100.0 * a / (a + b), 1) : Cell(""); };
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    t.AddRow(
        {by_step ? Cell(std::to_string(steps.steps[k].number)) : Cell("all"), Cell(r.copies),
         Cell(r.copy_bytes / 1e6, 3), cupti ? Cell(r.migrations) : Cell(""),
         Cell(r.um_bytes / 1e6, 3),
         cupti ? pct(static_cast<double>(r.migrations), static_cast<double>(r.copies)) : Cell(""),
         pct(static_cast<double>(r.um_bytes), static_cast<double>(r.copy_bytes))});
  }
  return t;
}

}  // namespace stepscope
