#include "store/memory_rows.h"

#include "store/record_sql.h"
#include "store/sqlite_util.h"

namespace stepscope {

StatusOr<RowCursor<MemoryApiRow>> MemoryWithApiRows(sqlite3* db) {
  // The api join is restricted to the correlations that memory rows use, so
  // that a trace with millions of launches does not pay for them.
  return PrepareCursor<MemoryApiRow>(
      db,
      "SELECT m.ts_ns, m.op, m.address, m.bytes, m.memory_kind, m.device, m.stream, "
      "m.correlation, m.is_async, COALESCE(a.name_id, 0), COALESCE(a.tid, 0), "
      "COALESCE(a.start_ns, m.ts_ns) FROM memory m LEFT JOIN (SELECT correlation, "
      "MIN(name_id) AS name_id, MIN(tid) AS tid, MIN(start_ns) AS start_ns FROM api "
      "WHERE correlation IN (SELECT correlation FROM memory WHERE correlation != 0) "
      "GROUP BY correlation) a ON a.correlation = m.correlation AND m.correlation != 0 "
      "ORDER BY m.ts_ns, m.id",
      [](const Statement& s, MemoryApiRow* r) {
        *r = {s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4),  s.Int(5),
              s.Int(6), s.Int(7), s.Int(8), s.Int(9), s.Int(10), s.Int(11)};
      });
}

StatusOr<std::vector<HostAllocRecord>> LoadHostAllocs(sqlite3* db) {
  return LoadRecords<HostAllocRecord>(db, " ORDER BY ts_ns, id");
}

StatusOr<std::vector<OomTableRow>> LoadOomTable(sqlite3* db) {
  if (!TableExists(db, "oom")) return std::vector<OomTableRow>{};
  ASSIGN_OR_RETURN(Statement st, Prepare(db,
                                         "SELECT ts_ns, tid, device, correlation, name_id, "
                                         "return_code, requested_bytes, memory_kind, "
                                         "free_bytes, total_bytes FROM oom ORDER BY ts_ns, id"));
  std::vector<OomTableRow> out;
  while (st.Step()) {
    out.push_back({st.Int(0), st.Int(1), st.Int(2), st.Int(3), st.Int(4), st.Int(5),
                   st.IsNull(6) ? -1 : st.Int(6), st.Int(7), st.IsNull(8) ? -1 : st.Int(8),
                   st.IsNull(9) ? -1 : st.Int(9)});
  }
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<std::vector<FailedApiRow>> LoadOutOfMemoryApiCalls(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db,
                                         "SELECT end_ns, tid, correlation, name_id, return_code "
                                         "FROM api WHERE return_code = 2 ORDER BY start_ns, id"));
  std::vector<FailedApiRow> out;
  while (st.Step()) out.push_back({st.Int(0), st.Int(1), st.Int(2), st.Int(3), st.Int(4)});
  RETURN_IF_ERROR(st.status());
  return out;
}

}  // namespace stepscope
