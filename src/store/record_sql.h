// SQL generated from the column lists of format/record_fields.h: a record
// table's schema columns, its INSERT and binds, its SELECT and row decoding.
// Everything is expanded at compile time field by field, so a generated
// insert binds exactly what a hand-written one did.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "format/record_fields.h"
#include "store/schema.h"
#include "store/sqlite_util.h"

namespace stepscope {
namespace record_sql {

template <typename F>
inline constexpr bool kIsExtra = std::is_same_v<std::remove_cvref_t<F>, Extra>;

template <typename R, typename Fn>
constexpr void ForEachField(Fn&& fn) {
  std::apply([&](const auto&... f) { (fn(f), ...); }, RecordFormat<R>::kFields);
}

template <typename R>
constexpr size_t ExtraCount() {
  size_t n = 0;
  ForEachField<R>([&](const auto& f) { n += kIsExtra<decltype(f)> ? 1 : 0; });
  return n;
}

template <typename F>
constexpr const char* SqlType(const F& f) {
  if constexpr (!kIsExtra<F>) {
    if constexpr (std::is_array_v<typename F::Member>) return "TEXT";
    if constexpr (std::is_floating_point_v<typename F::Member>) return "REAL";
  }
  return f.opts.sql_type;
}

}  // namespace record_sql

// The table's columns in order, as written and read (`id` included).
template <typename R>
std::vector<std::string> RecordColumnNames() {
  std::vector<std::string> out;
  record_sql::ForEachField<R>([&](const auto& f) { out.emplace_back(f.column); });
  return out;
}

// The schema's columns of the table (the `id` primary key is the schema's own).
template <typename R>
std::vector<ColumnDef> RecordColumns() {
  std::vector<ColumnDef> out;
  record_sql::ForEachField<R>([&](const auto& f) {
    if (std::string_view(f.column) != "id")
      out.push_back({f.column, record_sql::SqlType(f), f.doc});
  });
  return out;
}

// "INSERT INTO t(a,b) VALUES(?,?)"; `verb` e.g. "INSERT OR REPLACE".
template <typename R>
std::string RecordInsertSql(const char* verb = "INSERT") {
  std::string cols, params;
  for (const std::string& c : RecordColumnNames<R>()) {
    cols += (cols.empty() ? "" : ",") + c;
    params += params.empty() ? "?" : ",?";
  }
  return std::string(verb) + " INTO " + RecordFormat<R>::kTable + "(" + cols + ") VALUES(" +
         params + ")";
}

// "SELECT a,b FROM t": columns in the order DecodeRecord reads them.
template <typename R>
std::string RecordSelectSql() {
  std::string cols;
  for (const std::string& c : RecordColumnNames<R>()) cols += (cols.empty() ? "" : ",") + c;
  return "SELECT " + cols + " FROM " + RecordFormat<R>::kTable;
}

// 0-based position of `column` in the insert and the select; -1 when absent.
template <typename R>
constexpr int RecordColumnIndex(std::string_view column) {
  int i = 0, found = -1;
  record_sql::ForEachField<R>([&](const auto& f) {
    if (found < 0 && column == f.column) found = i;
    ++i;
  });
  return found;
}

namespace record_sql {

// The per-field steps are forced inline (no lambdas: GCC keeps those out of
// line), so that a record's insert is a straight sequence of binds, as a
// hand-written one.
template <typename R, typename M>
[[gnu::always_inline]] inline void BindField(Statement& s, int i, const Col<R, M>& f, const R& r,
                                             const int64_t*, int&) {
  const auto& v = r.*(f.member);
  if constexpr (std::is_array_v<M>) {
    s.BindText(i, std::string_view(v, strnlen(v, sizeof(v))));
  } else if constexpr (std::is_floating_point_v<M>) {
    s.BindDouble(i, static_cast<double>(v));
  } else {
    const int64_t x = static_cast<int64_t>(v);
    if (f.opts.null == NullAs::kSentinel && x == f.opts.null_value) {
      s.BindNull(i);
    } else {
      s.BindInt(i, x);
    }
  }
}

template <typename R>
[[gnu::always_inline]] inline void BindField(Statement& s, int i, const Extra&, const R&,
                                             const int64_t* extra, int& next_extra) {
  s.BindInt(i, extra[next_extra++]);
}

template <typename R, typename M>
[[gnu::always_inline]] inline void DecodeField(const Statement& s, int i, const Col<R, M>& f,
                                               R& r) {
  auto& v = r.*(f.member);
  if constexpr (std::is_array_v<M>) {
    std::string_view text = s.Text(i);
    std::memcpy(v, text.data(), std::min(text.size(), sizeof(v) - 1));
  } else if constexpr (std::is_floating_point_v<M>) {
    v = static_cast<M>(s.Double(i));
  } else {
    int64_t x = f.opts.null != NullAs::kZero && s.IsNull(i) ? f.opts.null_value : s.Int(i);
    if (f.opts.read != nullptr) x = f.opts.read(x);
    v = static_cast<M>(x);
  }
}

template <typename R>
[[gnu::always_inline]] inline void DecodeField(const Statement&, int, const Extra&, R&) {}

template <typename R, size_t... I>
[[gnu::always_inline]] inline void BindFields(Statement& s, const R& r, const int64_t* extra,
                                              std::index_sequence<I...>) {
  int next_extra = 0;
  (BindField(s, static_cast<int>(I) + 1, std::get<I>(RecordFormat<R>::kFields), r, extra,
             next_extra),
   ...);
}

template <typename R, size_t... I>
[[gnu::always_inline]] inline void DecodeFields(const Statement& s, R& r,
                                                std::index_sequence<I...>) {
  (DecodeField(s, static_cast<int>(I), std::get<I>(RecordFormat<R>::kFields), r), ...);
}

template <typename R>
using FieldIndices = std::make_index_sequence<
    std::tuple_size_v<std::remove_cv_t<decltype(RecordFormat<R>::kFields)>>>;

}  // namespace record_sql

// Binds `r` (and the values of the Extra columns, in order) to an insert
// prepared from RecordInsertSql<R>().
template <typename R, typename... X>
[[gnu::always_inline]] inline void BindRecord(Statement& s, const R& r, X... extras) {
  static_assert(sizeof...(X) == record_sql::ExtraCount<R>(), "one value per Extra column");
  const int64_t extra[] = {static_cast<int64_t>(extras)..., 0};
  record_sql::BindFields(s, r, extra, record_sql::FieldIndices<R>{});
}

// Fills `r` from a row of RecordSelectSql<R>() (Extra columns are left to the caller).
template <typename R>
void DecodeRecord(const Statement& s, R& r) {
  record_sql::DecodeFields(s, r, record_sql::FieldIndices<R>{});
}

struct NoFixup {
  template <typename R>
  void operator()(const Statement&, R&) const {}
};

// Every row of RecordSelectSql<R>() + `tail` (ORDER BY ...), decoded; then
// fixup(statement, record) for what depends on more than one column.
template <typename R, typename Fixup = NoFixup>
StatusOr<std::vector<R>> LoadRecords(sqlite3* db, std::string_view tail, Fixup fixup = {}) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, RecordSelectSql<R>() + std::string(tail)));
  std::vector<R> out;
  while (st.Step()) {
    R r{};
    DecodeRecord(st, r);
    fixup(st, r);
    out.push_back(r);
  }
  if (!st.ok()) return st.status();
  return out;
}

}  // namespace stepscope
