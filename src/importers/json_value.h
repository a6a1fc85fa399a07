// JsonValueParser: a strict, validating parser for ONE JSON value held in
// memory (a trace event, or a small top-level member such as
// deviceProperties). The streaming tokenizer (json_tokenizer.h) cuts the file
// into such values; nothing ever holds a DOM of the whole file.
// Tokens are lexed by the project's one JSON token scanner
// (common/json_scan.h); this parser only builds the node array.
//
// The parsed value is a flat array of nodes (a "DOM of one event") that is
// reused from value to value, so steady-state parsing allocates nothing.
// Strings without escapes are views into the input; strings with escapes are
// decoded into a scratch buffer owned by the parser. Numbers keep their
// literal text so callers can convert them exactly (exact_decimal.h).
//
// Contract: node views stay valid until the next Parse() and while the input
// bytes are alive. Parse() distinguishes "the input ended inside the value"
// (kIncomplete: feed more bytes and parse again from the same start) from a
// syntax error (kError, with the offset of the offending byte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_scan.h"

namespace stepscope {

enum class JsonType : uint8_t { kNull, kFalse, kTrue, kNumber, kString, kArray, kObject };

struct JsonNode {
  JsonType type = JsonType::kNull;
  uint32_t first_child = 0;  // index of the first child; 0 = none (the root is node 0)
  uint32_t next = 0;         // index of the next sibling; 0 = none
  std::string_view key;      // member name when the parent is an object
  // kNumber: the literal; kString: the decoded contents; kArray/kObject: the
  // raw bytes from the opening to the closing bracket.
  std::string_view text;
};

enum class JsonParseOutcome { kOk, kIncomplete, kError };

class JsonValueParser {
 public:
  // Nesting deeper than this is rejected as an error (keeps memory bounded on
  // hostile input; real traces nest 3 levels).
  static constexpr size_t kMaxDepth = 512;

  // Parses one value starting at `begin` (leading whitespace is skipped). On
  // kOk, *consumed is the number of bytes up to and including the value's last
  // byte. On kError, error_offset() (relative to `begin`) and error() say what
  // and where.
  JsonParseOutcome Parse(const char* begin, const char* end, size_t* consumed);

  const JsonNode& root() const { return nodes_[0]; }
  const JsonNode& node(uint32_t i) const { return nodes_[i]; }
  // First member named `key` of an object node, or nullptr.
  const JsonNode* Find(const JsonNode& object, std::string_view key) const;
  size_t size() const { return nodes_.size(); }

  size_t error_offset() const { return error_offset_; }
  const std::string& error() const { return error_; }

 private:
  struct Open {
    uint32_t node;
    uint32_t last_child;
    const char* start;
  };
  uint32_t AddNode(JsonType type, std::string_view key);
  JsonParseOutcome Fail(const char* begin, const char* at, const char* what);
  // kIncomplete as is, else the error `what` at `at`.
  JsonParseOutcome Scanned(JsonScan r, const char* begin, const char* at, const char* what);

  std::vector<JsonNode> nodes_;
  std::vector<Open> stack_;
  std::string scratch_;  // decoded strings; reserved up front so views stay valid
  size_t error_offset_ = 0;
  std::string error_;
};

// Integer value of a number node whose literal has no fraction or exponent
// ("12", "-3"); also accepts "12.0". False when the node is not such a number
// or does not fit.
bool JsonToInt64(const JsonNode* n, int64_t* out);
// Like JsonToInt64, but also accepts a string holding an integer ("7").
bool JsonToInt64Lenient(const JsonNode* n, int64_t* out);

}  // namespace stepscope
