#include "importers/nsys_um.h"

#include <set>
#include <string>
#include <vector>

#include "store/sqlite_util.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

// SELECT of the named columns; a column the table lacks reads as NULL.
StatusOr<Statement> SelectColumns(sqlite3* db, const std::string& table,
                                  const std::vector<const char*>& cols) {
  ASSIGN_OR_RETURN(Statement info, Prepare(db, "PRAGMA table_info(\"" + table + "\")"));
  std::set<std::string> have;
  while (info.Step()) have.insert(std::string(info.Text(1)));
  RETURN_IF_ERROR(info.status());
  std::string sql = "SELECT ";
  for (size_t i = 0; i < cols.size(); ++i) {
    sql += (i ? ", " : "") +
           (have.count(cols[i]) ? "\"" + std::string(cols[i]) + "\"" : std::string("NULL"));
  }
  return Prepare(db, sql + " FROM \"" + table + "\" ORDER BY 1");
}

UmCounterKind ToKind(int64_t v) {
  return v >= 0 && v <= 8 ? static_cast<UmCounterKind>(v) : UmCounterKind::kUnknown;
}

}  // namespace

Status ImportNsysUnifiedMemory(sqlite3* src, TraceWriter* w, ImportStats* stats) {
  const size_t rows_idx = stats->Add("um_rows", "unified-memory events imported (um table)");
  const size_t bad_idx =
      stats->Add("um_bad_time", "unified-memory rows skipped: NULL start or end < start");
  struct Source {
    const char* table;
    std::vector<const char*> cols;  // start, end, kind, value, address, src, dst, flags
    int fixed_kind;                 // -1: from the kind column
  };
  const Source sources[] = {
      {"CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER",
       {"start", "end", "counterKind", "value", "address", "srcId", "dstId", "flags"},
       -1},
      {"CUDA_UM_CPU_PAGE_FAULT_EVENTS",
       {"start", "start", "NULL", "originalFaultPc", "address", "NULL", "NULL", "NULL"},
       static_cast<int>(UmCounterKind::kCpuPageFault)},
      {"CUDA_UM_GPU_PAGE_FAULT_EVENTS",
       {"start", "end", "NULL", "numberOfPageFaults", "address", "deviceId", "NULL",
        "faultAccessType"},
       static_cast<int>(UmCounterKind::kGpuPageFault)},
  };
  for (const Source& s : sources) {
    if (!TableExists(src, s.table)) continue;
    ASSIGN_OR_RETURN(Statement st, SelectColumns(src, s.table, s.cols));
    while (st.Step()) {
      UmRecord r{};
      r.start_ns = st.Int(0);
      r.end_ns = st.IsNull(1) ? r.start_ns : st.Int(1);
      r.kind = s.fixed_kind >= 0 ? static_cast<UmCounterKind>(s.fixed_kind) : ToKind(st.Int(2));
      // Point events: CUPTI leaves `end` undefined.
      if (r.kind == UmCounterKind::kCpuPageFault || r.kind == UmCounterKind::kThrashing ||
          r.kind == UmCounterKind::kRemoteMap)
        r.end_ns = r.start_ns;
      if (st.IsNull(0) || r.end_ns < r.start_ns) {
        stats->Bump(bad_idx);
        continue;
      }
      r.value = static_cast<uint64_t>(st.Int(3));
      r.address = static_cast<uint64_t>(st.Int(4));
      r.src_id = static_cast<uint32_t>(st.Int(5));
      r.dst_id = static_cast<uint32_t>(st.Int(6));
      r.flags = static_cast<uint32_t>(st.Int(7));
      w->AddUm(r);
      stats->Bump(rows_idx);
    }
    if (!st.ok())
      return InvalidInput(std::string("table ") + s.table + ": " + st.status().message());
  }
  return w->status();
}

}  // namespace stepscope
