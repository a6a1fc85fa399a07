#include "store/string_ids.h"

#include "store/sqlite_util.h"

namespace stepscope {

StatusOr<int64_t> FindStringId(sqlite3* db, std::string_view value) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, "SELECT id FROM strings WHERE value = ?1 LIMIT 1"));
  st.BindText(1, value);
  if (st.Step()) return st.Int(0);
  RETURN_IF_ERROR(st.status());
  return int64_t{-1};
}

StatusOr<int64_t> InternStringRow(sqlite3* db, std::string_view value) {
  if (value.empty()) return int64_t{0};
  ASSIGN_OR_RETURN(int64_t id, FindStringId(db, value));
  if (id >= 0) return id;
  ASSIGN_OR_RETURN(Statement ins, Prepare(db, "INSERT INTO strings(value) VALUES(?1)"));
  ins.BindText(1, value);
  ins.Step();
  if (!ins.ok()) return ins.status();
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db));
}

}  // namespace stepscope
