#include "store/sqlite_util.h"

namespace stepscope {

Status SqliteError(sqlite3* db, int rc, const std::string& what) {
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT) {
    // A damaged file is bad input like any other (exit 2), and the message
    // names the file: SQLite's own ("database disk image is malformed") does not.
    const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
    return InvalidInput(std::string(file && *file ? file : "the SQLite file") +
                        ": the file is damaged (sqlite: " + sqlite3_errstr(rc) +
                        "; cut short or overwritten?): record it again, or salvage what is left "
                        "with 'sqlite3 FILE .recover'");
  }
  return IoError(what);
}

bool Statement::Step() {
  last_rc_ = sqlite3_step(stmt_);
  return last_rc_ == SQLITE_ROW;
}

Status Statement::status() const {
  if (ok()) return OkStatus();
  return SqliteError(db_, last_rc_, std::string("sqlite: ") + sqlite3_errmsg(db_));
}

StatusOr<Statement> Prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqliteError(db, sqlite3_extended_errcode(db), "");
    if (st.code() == StatusCode::kInvalidInput) return st;
    // A table or column the statement names is missing: the file read is not what it
    // claims to be (a damaged nsys export or trace; the fuzz campaign, issue 36). Exit 2.
    const std::string msg = sqlite3_errmsg(db);
    // "unsupported file format": a header byte (the schema format) says another SQLite.
    if (msg.rfind("no such table", 0) == 0 || msg.rfind("no such column", 0) == 0 ||
        msg.rfind("unsupported file format", 0) == 0) {
      return InvalidInput("the file lacks what is read (" + msg +
                          "): damaged or not this kind of file");
    }
    return Internal(std::string("sqlite prepare failed: ") + sqlite3_errmsg(db) +
                    " in: " + std::string(sql.substr(0, 120)));
  }
  return Statement(db, stmt);
}

Status Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return SqliteError(db, sqlite3_extended_errcode(db), "sqlite: " + msg);
  }
  return OkStatus();
}

Status ProbeSchema(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, "SELECT COUNT(*) FROM sqlite_master"));
  if (!st.Step()) return st.status();
  return OkStatus();
}

bool TableExists(sqlite3* db, const std::string& table) {
  auto st = Prepare(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  if (!st.ok()) return false;
  st->BindText(1, table);
  return st->Step();
}

}  // namespace stepscope
