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

}  // namespace stepscope
