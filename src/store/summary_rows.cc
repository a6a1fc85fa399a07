#include "store/summary_rows.h"

#include "store/sqlite_util.h"

namespace stepscope {

StatusOr<KernelTotals> LoadKernelTotals(sqlite3* db) {
  ASSIGN_OR_RETURN(
      Statement st,
      Prepare(db, "SELECT COUNT(*), COALESCE(SUM(end_ns - start_ns), 0) FROM kernels"));
  if (!st.Step()) {
    RETURN_IF_ERROR(st.status());
    return KernelTotals{};
  }
  return KernelTotals{st.Int(0), st.Int(1)};
}

StatusOr<int64_t> CountNvtxRows(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, "SELECT COUNT(*) FROM nvtx"));
  if (st.Step()) return st.Int(0);
  RETURN_IF_ERROR(st.status());
  return int64_t{0};
}

namespace {

StatusOr<std::vector<StatsTableRow>> StatRows(sqlite3* db, const char* sql) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
  std::vector<StatsTableRow> out;
  while (st.Step()) out.push_back({std::string(st.Text(0)), st.Int(1), std::string(st.Text(2))});
  RETURN_IF_ERROR(st.status());
  return out;
}

}  // namespace

StatusOr<std::vector<StatsTableRow>> LoadStats(sqlite3* db) {
  return StatRows(db, "SELECT name, value, doc FROM stats ORDER BY name");
}

StatusOr<std::vector<StatsTableRow>> LoadDropStats(sqlite3* db) {
  return StatRows(db,
                  "SELECT name, value, doc FROM stats WHERE (name LIKE 'dropped\\_%' ESCAPE '\\' "
                  "OR name = 'cupti_dropped_records') AND value > 0 ORDER BY value DESC");
}

StatusOr<UmTotals> LoadUmTotals(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st,
                   Prepare(db,
                           "SELECT COALESCE(SUM(CASE kind WHEN 1 THEN value END), 0), "
                           "COALESCE(SUM(CASE kind WHEN 2 THEN value END), 0), "
                           "COALESCE(SUM(kind = 4), 0), COUNT(*) FROM um"));
  if (!st.Step()) {
    RETURN_IF_ERROR(st.status());
    return UmTotals{};
  }
  return UmTotals{st.Int(0), st.Int(1), st.Int(2), st.Int(3)};
}

StatusOr<std::vector<KernelNameTotal>> LoadTopKernelNames(sqlite3* db, int limit) {
  ASSIGN_OR_RETURN(Statement st,
                   Prepare(db,
                           "SELECT name_id, SUM(end_ns - start_ns) AS total, COUNT(*) FROM kernels "
                           "GROUP BY name_id ORDER BY total DESC LIMIT ?1"));
  st.BindInt(1, limit);
  std::vector<KernelNameTotal> out;
  while (st.Step()) out.push_back({st.Int(0), st.Int(1), st.Int(2)});
  RETURN_IF_ERROR(st.status());
  return out;
}

}  // namespace stepscope
