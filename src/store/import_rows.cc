#include "store/import_rows.h"

#include "store/sqlite_util.h"

namespace stepscope {

StatusOr<std::vector<NvtxSpanRow>> LoadNvtxSpansInDomain(sqlite3* db, int64_t domain_id) {
  ASSIGN_OR_RETURN(Statement st,
                   Prepare(db,
                           "SELECT tid, start_ns, end_ns, name_id FROM nvtx WHERE domain_id = ? "
                           "ORDER BY tid, start_ns, end_ns DESC, id"));
  st.BindInt(1, domain_id);
  std::vector<NvtxSpanRow> out;
  while (st.Step()) out.push_back({st.Int(0), st.Int(1), st.Int(2), st.Int(3)});
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<std::string> LoadStringValue(sqlite3* db, int64_t id) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, "SELECT value FROM strings WHERE id = ?"));
  st.BindInt(1, id);
  std::string text = st.Step() ? std::string(st.Text(0)) : std::string();
  RETURN_IF_ERROR(st.status());
  return text;
}

StatusOr<std::vector<ApiCallRow>> LoadApiCallsByThread(sqlite3* db) {
  ASSIGN_OR_RETURN(
      Statement st,
      Prepare(db, "SELECT tid, start_ns, correlation FROM api ORDER BY tid, start_ns, id"));
  std::vector<ApiCallRow> out;
  while (st.Step()) out.push_back({st.Int(0), st.Int(1), st.Int(2)});
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<std::pair<int64_t, int64_t>> MaxFrameAndCallsiteIds(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db,
                                         "SELECT (SELECT COALESCE(MAX(id), 0) FROM frames), "
                                         "(SELECT COALESCE(MAX(id), 0) FROM callsites)"));
  std::pair<int64_t, int64_t> ids{0, 0};
  if (st.Step()) ids = {st.Int(0), st.Int(1)};
  RETURN_IF_ERROR(st.status());
  return ids;
}

}  // namespace stepscope
