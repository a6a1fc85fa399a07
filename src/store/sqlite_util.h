// Thin RAII helpers over the SQLite C API, used by the store and by every
// reader (analysis, importers, exporters). Nothing here throws.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stepscope {

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept {
    if (this != &o) {
      sqlite3_finalize(stmt_);
      db_ = o.db_;
      stmt_ = o.stmt_;
      o.stmt_ = nullptr;
    }
    return *this;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Returns true while a row is available; false at the end or on error (see ok()).
  bool Step();
  bool ok() const {
    return last_rc_ == SQLITE_ROW || last_rc_ == SQLITE_DONE || last_rc_ == SQLITE_OK;
  }
  Status status() const;
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  void BindInt(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void BindText(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }

  int64_t Int(int i) const { return sqlite3_column_int64(stmt_, i); }
  double Double(int i) const { return sqlite3_column_double(stmt_, i); }
  bool IsNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  std::string_view Text(int i) const {
    const unsigned char* p = sqlite3_column_text(stmt_, i);
    if (!p) return {};
    return std::string_view(reinterpret_cast<const char*>(p),
                            static_cast<size_t>(sqlite3_column_bytes(stmt_, i)));
  }
  int ColumnCount() const { return sqlite3_column_count(stmt_); }
  const char* ColumnName(int i) const { return sqlite3_column_name(stmt_, i); }
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int last_rc_ = SQLITE_OK;
};

// The Status of a failed call that returned `rc` on `db`: a damaged file
// (SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_FORMAT) is kInvalidInput with one line
// naming the file and what to do; anything else kIoError(`what`).
Status SqliteError(sqlite3* db, int rc, const std::string& what);

// Prepare, Statement::status() and Exec report a damaged file by SqliteError.
StatusOr<Statement> Prepare(sqlite3* db, std::string_view sql);
Status Exec(sqlite3* db, const std::string& sql);
bool TableExists(sqlite3* db, const std::string& table);
// A first read of the schema (sqlite_master): it rolls back a hot journal
// left beside the file, and fails (SqliteError) on a damaged schema page.
Status ProbeSchema(sqlite3* db);

}  // namespace stepscope
