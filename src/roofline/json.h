// A small JSON reader for the roofline stage's own files: the ceilings store
// (~/.cache/stepscope/ceilings.json), the kernel targets handed to the
// injected profiler and the result lines it writes back.
//
// Contract: Parse() accepts RFC 8259 JSON (one value, surrounded by optional
// whitespace) and returns a DOM, or a one-line error naming the byte offset.
// Nesting is limited to 64 levels so hostile input cannot exhaust the stack.
// Numbers are doubles; object members keep their order (duplicate keys: the
// first wins in Find()). Strings are UTF-8; \uXXXX escapes are decoded,
// surrogate pairs included; a lone surrogate becomes U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stepscope {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  static JsonValue Bool(bool b);
  static JsonValue Number(double d);
  static JsonValue String(std::string s);
  static JsonValue Array();
  static JsonValue Object();

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool bool_value() const { return bool_; }
  double number() const { return number_; }
  const std::string& str() const { return string_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }

  // Object member by key, or nullptr (also for non-objects).
  const JsonValue* Find(std::string_view key) const;
  // Convenience accessors with a fallback when absent or of another type.
  double NumberOr(std::string_view key, double fallback) const;
  std::string StringOr(std::string_view key, const std::string& fallback) const;

  // Builders.
  void Push(JsonValue v) { items_.push_back(std::move(v)); }
  void Set(std::string key, JsonValue v);

  // Compact serialization (numbers with up to 17 significant digits).
  std::string Dump() const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses one JSON document. Errors are kInvalidInput: "offset N: what".
StatusOr<JsonValue> ParseJson(std::string_view text);

// Shortest round-trip-safe text of a double ("%.17g" trimmed), "null" for NaN/inf.
std::string JsonNumber(double v);

}  // namespace stepscope
