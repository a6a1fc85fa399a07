// JsonValue: the small JSON document tree shared by the stages
// that read or write small JSON files (rank summaries, GPU ceilings, roofline
// results). Not for traces: the Kineto importer has its own streaming
// tokenizer, because those files reach gigabytes.
//
// `stepscope ranks` reads a thousand summaries, so the parser is a single pass over the bytes
// with no intermediate token list. Integers without a fraction or exponent
// are kept exactly as int64 (trace times are ~1.7e18 ns and do not survive a
// round trip through double); other numbers are doubles.
//
// Contract: ParseJson never crashes on any input (a fuzz target checks it);
// malformed input gives kInvalidInput with the byte offset of the problem.
// Nesting deeper than kMaxJsonDepth is refused rather than recursed into.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json_scan.h"
#include "common/status.h"

namespace stepscope {

inline constexpr int kMaxJsonDepth = 64;

class JsonValue {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  JsonValue() = default;
  static JsonValue Bool(bool b);
  static JsonValue Int(int64_t v);
  static JsonValue Double(double v);
  static JsonValue String(std::string s);
  static JsonValue Array();
  static JsonValue Object();

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_number() const { return type_ == Type::kInt || type_ == Type::kDouble; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  // Typed reads; a value of another type reads as the fallback.
  bool AsBool(bool fallback = false) const;
  int64_t AsInt(int64_t fallback = 0) const;  // doubles are truncated
  double AsDouble(double fallback = 0) const;
  const std::string& AsString() const;  // "" for non-strings

  // Arrays.
  const std::vector<JsonValue>& items() const { return items_; }
  void Append(JsonValue v) { items_.push_back(std::move(v)); }

  // Objects keep their members in document order; lookups are linear (our
  // objects have a handful of keys). Get returns nullptr when absent.
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  const JsonValue* Get(std::string_view key) const;
  void Set(std::string key, JsonValue v) { members_.emplace_back(std::move(key), std::move(v)); }

  // Member `key` as a number / string, or `fallback` when absent or of another type.
  double NumberOr(std::string_view key, double fallback) const;
  std::string StringOr(std::string_view key, const std::string& fallback) const;

  // Compact serialization; integers exact, doubles round-trip safe.
  std::string Dump() const;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses one JSON document (surrounding whitespace allowed), on the pull
// reader of common/json_reader.h. Errors read "byte N: what was expected".
StatusOr<JsonValue> ParseJson(std::string_view text);

// DecodeJsonEscape (the escape decoder) lives in common/json_scan.h.

// Shortest round-trip-safe text of a double, "null" for NaN/inf.
std::string JsonNumber(double v);

}  // namespace stepscope
