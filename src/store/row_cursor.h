// RowCursor<Row>: a query's rows read one at a time as a plain struct, for
// callers that stream a table instead of holding it (the timeline exporter,
// the counter series). The store's typed loads make them; callers see rows,
// never SQL.
#pragma once

#include <string_view>
#include <utility>

#include "common/status.h"
#include "store/sqlite_util.h"

namespace stepscope {

template <typename Row>
class RowCursor {
 public:
  using Decode = void (*)(const Statement&, Row*);
  RowCursor(Statement st, Decode decode) : st_(std::move(st)), decode_(decode) {}

  // Steps to the next row and decodes it into row(); false at the end or on
  // an error (status() tells which).
  bool Next() {
    if (!st_.Step()) return false;
    decode_(st_, &row_);
    return true;
  }
  const Row& row() const { return row_; }
  Status status() const { return st_.status(); }

 private:
  Statement st_;
  Decode decode_;
  Row row_{};
};

// A cursor over the rows of `sql`, each decoded by `decode`.
template <typename Row>
StatusOr<RowCursor<Row>> PrepareCursor(sqlite3* db, std::string_view sql,
                                       typename RowCursor<Row>::Decode decode) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
  return RowCursor<Row>(std::move(st), decode);
}

}  // namespace stepscope
