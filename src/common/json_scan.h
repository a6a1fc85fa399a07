// The token scanner of the project's one JSON reading layer. Every JSON token
// (whitespace, string, number, literal) is lexed and validated here, once;
// the readers on top only walk the structure:
//   * common/json_reader.h: the pull reader over a whole text in memory;
//   * common/json_value.h: the small document tree, built on the pull reader;
//   * importers/json_value.h: the flat-node parser of one trace event, fed by
//     the streaming Chrome-trace tokenizer (importers/json_tokenizer.h).
//
// The scanners work on [p, end) and say whether the input ended inside the
// token (kIncomplete: a streaming reader waits for more bytes; a reader of a
// whole text reports *error at `end`) or the token is bad (kBad: *stop is the
// offending byte, *error says what). Errors are worded once, here; readers
// prefix them with "[FILE: ]byte N: ".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stepscope {

enum class JsonScan { kOk, kIncomplete, kBad };

inline bool IsJsonWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline const char* SkipJsonWs(const char* p, const char* end) {
  while (p < end && IsJsonWs(*p)) ++p;
  return p;
}

// One escape sequence inside a JSON string. `s` starts at the backslash. kOk:
// the decoded UTF-8 is appended to *out and *used is the bytes consumed (2, 6
// or 12). A high surrogate is combined with a following low one; a lone
// surrogate becomes U+FFFD. kIncomplete: `s` ends inside the escape, or right
// after a high surrogate where a low one could still follow. kBad: *used is
// the offset of the offending byte, *error says what.
using JsonEscape = JsonScan;
JsonScan DecodeJsonEscape(std::string_view s, std::string* out, size_t* used, const char** error);

namespace json_scan_internal {
// Bytes that end the fast scan of a string: the closing quote, an escape, and
// control characters (invalid inside JSON strings).
struct StringStopTable {
  bool stop[256];
  constexpr StringStopTable() : stop() {
    for (int c = 0; c < 0x20; ++c) stop[c] = true;
    stop[static_cast<unsigned char>('"')] = true;
    stop[static_cast<unsigned char>('\\')] = true;
  }
};
inline constexpr StringStopTable kStringStop;

JsonScan ScanStringSlow(const char* s, const char* p, const char* end, std::string* scratch,
                        std::string_view* out, const char** stop, const char** error);
}  // namespace json_scan_internal

// A string whose opening quote is at `p`. kOk: *stop is past the closing
// quote and *out its contents: a view into the input when there is no escape,
// else the decoded text appended to *scratch (the caller keeps enough capacity
// reserved for earlier views into *scratch to stay valid). On kIncomplete and
// kBad *scratch is left as it was.
inline JsonScan ScanJsonString(const char* p, const char* end, std::string* scratch,
                               std::string_view* out, const char** stop, const char** error) {
  const char* s = ++p;  // past the opening quote
  while (p < end && !json_scan_internal::kStringStop.stop[static_cast<unsigned char>(*p)]) ++p;
  if (p < end && *p == '"') {
    *out = std::string_view(s, static_cast<size_t>(p - s));
    *stop = p + 1;
    return JsonScan::kOk;
  }
  return json_scan_internal::ScanStringSlow(s, p, end, scratch, out, stop, error);
}

// A number whose first byte ('-' or a digit) is at `p`, to JSON's grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. kOk: *stop is past its last
// byte (a streaming reader treats *stop == end as "may continue").
inline JsonScan ScanJsonNumber(const char* p, const char* end, const char** stop,
                               const char** error) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto need_digit = [&](const char* what) {
    *stop = p;
    *error = what;
    return p == end ? JsonScan::kIncomplete : JsonScan::kBad;
  };
  if (*p == '-') ++p;
  if (p < end && *p == '0') {
    ++p;
  } else if (p < end && digit(*p)) {
    while (p < end && digit(*p)) ++p;
  } else {
    return need_digit("invalid number: expected a digit");
  }
  if (p < end && *p == '.') {
    ++p;
    if (p == end || !digit(*p)) return need_digit("invalid number: expected a digit after '.'");
    while (p < end && digit(*p)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p == end || !digit(*p))
      return need_digit("invalid number: expected a digit in the exponent");
    while (p < end && digit(*p)) ++p;
  }
  *stop = p;
  return JsonScan::kOk;
}

// The literal true, false or null at `p`. kOk: *stop is past it and *word is
// the literal; kIncomplete: the input ends inside one.
inline JsonScan ScanJsonLiteral(const char* p, const char* end, std::string_view* word,
                                const char** stop, const char** error) {
  std::string_view w = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
  const size_t have = static_cast<size_t>(end - p);
  const size_t cmp = have < w.size() ? have : w.size();
  *stop = p;
  *error = "invalid literal (expected true, false or null)";
  if (std::string_view(p, cmp) != w.substr(0, cmp)) return JsonScan::kBad;
  if (have < w.size()) {
    *stop = end;
    return JsonScan::kIncomplete;
  }
  *word = w;
  *stop = p + w.size();
  return JsonScan::kOk;
}

}  // namespace stepscope
