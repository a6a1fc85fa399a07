#include "store/timeline_rows.h"

#include <string>

#include "format/records.h"

namespace stepscope {

StatusOr<std::optional<int64_t>> EarliestEventTime(sqlite3* db) {
  std::optional<int64_t> earliest;
  for (const char* sql : {"SELECT MIN(start_ns) FROM kernels", "SELECT MIN(start_ns) FROM memcpy",
                          "SELECT MIN(start_ns) FROM memset", "SELECT MIN(start_ns) FROM api",
                          "SELECT MIN(start_ns) FROM nvtx", "SELECT MIN(ts_ns) FROM memory",
                          "SELECT MIN(start_ns) FROM thread_sched",
                          "SELECT MIN(ts_ns) FROM samples", "SELECT MIN(start_ns) FROM osrt"}) {
    ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
    if (st.Step() && !st.IsNull(0))
      earliest = earliest ? std::min(*earliest, st.Int(0)) : st.Int(0);
    RETURN_IF_ERROR(st.status());
  }
  return earliest;
}

StatusOr<std::vector<int64_t>> LatestEventTimes(sqlite3* db) {
  std::vector<int64_t> out;
  for (const char* sql :
       {"SELECT MAX(end_ns) FROM kernels", "SELECT MAX(end_ns) FROM memcpy",
        "SELECT MAX(end_ns) FROM memset", "SELECT MAX(end_ns) FROM api",
        "SELECT MAX(MAX(end_ns), MAX(start_ns)) FROM nvtx", "SELECT MAX(ts_ns) FROM memory"}) {
    ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
    if (st.Step() && !st.IsNull(0)) out.push_back(st.Int(0));
  }
  return out;
}

StatusOr<bool> HasUnendedNvtx(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, "SELECT 1 FROM nvtx WHERE end_ns < 0 LIMIT 1"));
  const bool found = st.Step();
  RETURN_IF_ERROR(st.status());
  return found;
}

StatusOr<std::vector<uint32_t>> GpuCorrelationIds(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st,
                   Prepare(db,
                           "SELECT correlation FROM kernels WHERE correlation != 0 UNION ALL "
                           "SELECT correlation FROM memcpy WHERE correlation != 0 UNION ALL "
                           "SELECT correlation FROM memset WHERE correlation != 0"));
  std::vector<uint32_t> ids;
  while (st.Step()) ids.push_back(static_cast<uint32_t>(st.Int(0)));
  RETURN_IF_ERROR(st.status());
  return ids;
}

StatusOr<RowCursor<uint32_t>> ApiCorrelationIds(sqlite3* db) {
  return PrepareCursor<uint32_t>(
      db, "SELECT correlation FROM api WHERE correlation != 0",
      [](const Statement& s, uint32_t* c) { *c = static_cast<uint32_t>(s.Int(0)); });
}

StatusOr<std::vector<int64_t>> TimelineThreadIds(sqlite3* db, int64_t skip_domain_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      Prepare(db,
              "SELECT tid FROM api UNION SELECT tid FROM nvtx WHERE domain_id IS "
              "NOT " +
                  std::to_string(skip_domain_id) + " UNION SELECT tid FROM threads ORDER BY 1"));
  std::vector<int64_t> out;
  while (st.Step()) out.push_back(st.Int(0));
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> GpuStreamKeys(sqlite3* db) {
  ASSIGN_OR_RETURN(
      Statement st,
      Prepare(db,
              "SELECT device, stream FROM kernels UNION SELECT device, stream FROM memcpy "
              "UNION SELECT device, stream FROM memset ORDER BY 1, 2"));
  std::vector<std::pair<int64_t, int64_t>> out;
  while (st.Step()) out.emplace_back(st.Int(0), st.Int(1));
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<RowCursor<NvtxSliceRow>> NvtxSlices(sqlite3* db, int64_t unended_end_ns) {
  return PrepareCursor<NvtxSliceRow>(
      db,
      "SELECT start_ns, CASE WHEN end_ns < 0 THEN " + std::to_string(unended_end_ns) +
          " ELSE end_ns END AS e, tid, kind, name_id, domain_id FROM nvtx "
          "ORDER BY start_ns, e DESC",
      [](const Statement& s, NvtxSliceRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4), s.Int(5)};
      });
}

StatusOr<RowCursor<ApiSliceRow>> ApiSlices(sqlite3* db) {
  return PrepareCursor<ApiSliceRow>(
      db,
      "SELECT start_ns, end_ns, tid, correlation, name_id, return_code "
      "FROM api ORDER BY start_ns, end_ns DESC",
      [](const Statement& s, ApiSliceRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4), s.Int(5)};
      });
}

StatusOr<RowCursor<KernelSliceRow>> KernelSlices(sqlite3* db) {
  return PrepareCursor<KernelSliceRow>(
      db,
      "SELECT start_ns, end_ns, device, stream, correlation, name_id, grid_x, grid_y, "
      "grid_z, block_x, block_y, block_z, registers_per_thread, "
      "static_smem_bytes + dynamic_smem_bytes FROM kernels ORDER BY start_ns, end_ns DESC",
      [](const Statement& s, KernelSliceRow* r) {
        *r = {s.Int(0),
              s.Int(1),
              s.Int(2),
              s.Int(3),
              s.Int(4),
              s.Int(5),
              {s.Int(6), s.Int(7), s.Int(8)},
              {s.Int(9), s.Int(10), s.Int(11)},
              s.Int(12),
              s.Int(13)};
      });
}

StatusOr<RowCursor<MemcpySliceRow>> MemcpySlices(sqlite3* db) {
  return PrepareCursor<MemcpySliceRow>(
      db,
      "SELECT start_ns, end_ns, device, stream, correlation, bytes, copy_kind, "
      "src_kind, dst_kind FROM memcpy ORDER BY start_ns, end_ns DESC",
      [](const Statement& s, MemcpySliceRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4),
              s.Int(5), s.Int(6), s.Int(7), s.Int(8)};
      });
}

StatusOr<RowCursor<MemsetSliceRow>> MemsetSlices(sqlite3* db) {
  return PrepareCursor<MemsetSliceRow>(
      db,
      "SELECT start_ns, end_ns, device, stream, correlation, bytes, "
      "value FROM memset ORDER BY start_ns, end_ns DESC",
      [](const Statement& s, MemsetSliceRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4), s.Int(5), s.Int(6)};
      });
}

StatusOr<KernelExtent> LoadKernelExtent(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st,
                   Prepare(db, "SELECT MIN(start_ns), MAX(end_ns), COUNT(*) FROM kernels"));
  if (!st.Step() || st.Int(2) == 0) return KernelExtent{};
  return KernelExtent{st.Int(0), st.Int(1), st.Int(2)};
}

StatusOr<RowCursor<KernelSpanRow>> KernelSpansByStart(sqlite3* db) {
  return PrepareCursor<KernelSpanRow>(
      db, "SELECT device, start_ns, end_ns FROM kernels ORDER BY start_ns",
      [](const Statement& s, KernelSpanRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2)};
      });
}

StatusOr<RowCursor<DeviceMemoryRow>> DeviceMemoryRows(sqlite3* db) {
  return PrepareCursor<DeviceMemoryRow>(
      db,
      "SELECT ts_ns, op, address, bytes, device FROM memory WHERE memory_kind NOT IN (" +
          std::to_string(static_cast<int>(MemoryKind::kPageable)) + "," +
          std::to_string(static_cast<int>(MemoryKind::kPinned)) + ") ORDER BY ts_ns, id",
      [](const Statement& s, DeviceMemoryRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4)};
      });
}

}  // namespace stepscope
