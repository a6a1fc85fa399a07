// JsonReader: the pull reader of the project's one JSON reading layer:
//   * importers/json_tokenizer.h: the streaming tokenizer for traces of many
//     GB (cuts events at any chunk boundary; parses each into a node array);
//   * this pull reader, over an in-memory text, for files whose shape the
//     caller knows (the PyTorch memory file of docs/memory.md). Values are
//     read where they stand, so a file of a million trace entries costs its
//     entries' structs and nothing more;
//   * common/json_value.h: the small document tree (rank summaries, GPU
//     ceilings, roofline results), built on top of this reader.
// All three lex their tokens with one scanner (common/json_scan.h: strings,
// escapes, numbers, literals, whitespace) and share one error wording:
// "[FILE: ]byte N: what".
//
//   JsonReader j(text, "x.json");
//   RETURN_IF_ERROR(j.Object([&](std::string_view key) {
//     if (key == "pid") return j.Int(&pid);
//     return j.Skip();  // unknown keys are skipped: the format may grow
//   }));
//
// Errors name the file (when given) and the byte offset. Nesting deeper than kMaxDepth is an
// error (so hostile input cannot exhaust the stack). Numbers: integers up to
// int64; Int() also accepts a number with a fraction or exponent and
// truncates it; Double() accepts any number.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/json_scan.h"
#include "common/status.h"

namespace stepscope {

class JsonReader {
 public:
  static constexpr int kMaxDepth = 64;
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject, kEnd, kBad };

  JsonReader(std::string_view text, std::string name) : s_(text), name_(std::move(name)) {}

  Type Peek();
  Status Object(const std::function<Status(std::string_view key)>& member);
  Status Array(const std::function<Status()>& element);
  Status String(std::string* out);
  Status Int(int64_t* out);
  Status Double(double* out);
  Status Bool(bool* out);
  // Int() that also accepts null (-> fallback).
  Status IntOrNull(int64_t* out, int64_t fallback);
  Status Null();
  // The literal text of a number (validated: JSON number syntax).
  Status NumberText(std::string_view* text) { return Number(text); }
  Status Skip();
  // After the top-level value: only whitespace may follow.
  Status End();

  size_t offset() const { return pos_; }
  Status Error(const std::string& what) const;

 private:
  const char* At() const { return s_.data() + pos_; }
  const char* Limit() const { return s_.data() + s_.size(); }
  void Ws();
  // Moves to `stop`; the error `error` there unless r is kOk (the input is
  // whole, so kIncomplete is an error too).
  Status Scanned(JsonScan r, const char* stop, const char* error);
  Status Literal(std::string_view* word);
  Status Number(std::string_view* text);

  std::string_view s_;
  std::string name_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string scratch_;  // decoded strings with escapes
};

}  // namespace stepscope
