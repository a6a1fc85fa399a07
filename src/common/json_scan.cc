#include "common/json_scan.h"

#include <cstdint>

#include "common/strings.h"

namespace stepscope {

namespace {

// The code unit of "\uXXXX" at s[i], or -1 when s[i..i+6) is not one (cut
// short: *short_input says so; else *bad_at is the offending byte's offset).
int64_t UnicodeEscape(std::string_view s, size_t i, bool* short_input, size_t* bad_at) {
  *short_input = false;
  *bad_at = i;
  if (i + 2 > s.size()) {
    *short_input = true;
    return -1;
  }
  if (s[i] != '\\' || s[i + 1] != 'u') return -1;
  uint32_t v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    if (k >= s.size()) {
      *short_input = true;
      return -1;
    }
    int d = HexDigitValue(s[k]);
    if (d < 0) {
      *bad_at = k;
      return -1;
    }
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

}  // namespace

JsonScan DecodeJsonEscape(std::string_view s, std::string* out, size_t* used, const char** error) {
  if (s.size() < 2) return JsonScan::kIncomplete;
  char simple = 0;
  switch (s[1]) {
    case '"':
      simple = '"';
      break;
    case '\\':
      simple = '\\';
      break;
    case '/':
      simple = '/';
      break;
    case 'b':
      simple = '\b';
      break;
    case 'f':
      simple = '\f';
      break;
    case 'n':
      simple = '\n';
      break;
    case 'r':
      simple = '\r';
      break;
    case 't':
      simple = '\t';
      break;
    case 'u':
      break;
    default:
      *used = 1;
      *error = "unknown escape in a string";
      return JsonScan::kBad;
  }
  if (simple != 0) {
    out->push_back(simple);
    *used = 2;
    return JsonScan::kOk;
  }
  bool short_input = false;
  size_t bad_at = 0;
  int64_t cp = UnicodeEscape(s, 0, &short_input, &bad_at);
  if (cp < 0) {
    if (short_input) return JsonScan::kIncomplete;
    *used = bad_at;
    *error = "bad \\u escape: expected 4 hex digits";
    return JsonScan::kBad;
  }
  *used = 6;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    int64_t lo = UnicodeEscape(s, 6, &short_input, &bad_at);
    if (short_input) {
      // Only "\" or "\u" plus fewer than 4 digits, or nothing, follows: a
      // low surrogate may still come.
      bool may_continue = s.size() == 6 || s[6] == '\\';
      if (may_continue && (s.size() < 8 || s[7] == 'u')) return JsonScan::kIncomplete;
    }
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      *used = 12;
    } else {
      cp = 0xFFFD;
    }
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    cp = 0xFFFD;
  }
  AppendUtf8(out, static_cast<uint32_t>(cp));
  return JsonScan::kOk;
}

namespace json_scan_internal {

JsonScan ScanStringSlow(const char* s, const char* p, const char* end, std::string* scratch,
                        std::string_view* out, const char** stop, const char** error) {
  const size_t out_start = scratch->size();
  auto give_up = [&](JsonScan r, const char* at, const char* what) {
    scratch->resize(out_start);
    *stop = at;
    *error = what;
    return r;
  };
  scratch->append(s, static_cast<size_t>(p - s));
  for (;;) {
    if (p == end) return give_up(JsonScan::kIncomplete, end, "unterminated string");
    const char c = *p;
    if (c == '"') break;
    if (static_cast<unsigned char>(c) < 0x20)
      return give_up(JsonScan::kBad, p, "control character inside a string");
    if (c != '\\') {
      const char* run = p;
      while (p < end && !kStringStop.stop[static_cast<unsigned char>(*p)]) ++p;
      scratch->append(run, static_cast<size_t>(p - run));
      continue;
    }
    size_t used = 0;
    const char* what = "";
    switch (DecodeJsonEscape(std::string_view(p, static_cast<size_t>(end - p)), scratch, &used,
                             &what)) {
      case JsonScan::kOk:
        p += used;
        continue;
      case JsonScan::kIncomplete:
        return give_up(JsonScan::kIncomplete, end, "unterminated string");
      case JsonScan::kBad:
        return give_up(JsonScan::kBad, p + used, what);
    }
  }
  *out = std::string_view(scratch->data() + out_start, scratch->size() - out_start);
  *stop = p + 1;
  return JsonScan::kOk;
}

}  // namespace json_scan_internal
}  // namespace stepscope
