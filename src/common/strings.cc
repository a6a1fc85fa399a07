#include "common/strings.h"

#include <cxxabi.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace stepscope {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (true) {
    size_t pos = s.find(sep, begin);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(begin));
      return out;
    }
    out.emplace_back(s.substr(begin, pos - begin));
    begin = pos + 1;
  }
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out.append(sep);
    out.append(parts[i]);
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r'))
    --e;
  return std::string(s.substr(b, e - b));
}

std::string FormatFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string FormatDuration(int64_t ns) {
  const double a = std::fabs(static_cast<double>(ns));
  char buf[64];
  if (a < 1e3) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 " ns", ns);
  } else if (a < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.2f us", ns / 1e3);
  } else if (a < 1e9) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f s", ns / 1e9);
  }
  return buf;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%" PRIu64 " B", bytes);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f %s", v, kUnits[u]);
  }
  return buf;
}

std::string FormatCount(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n && n % 3 == 0) out.push_back(',');
    out.push_back(*it);
    ++n;
  }
  if (v < 0) out.push_back('-');
  return std::string(out.rbegin(), out.rend());
}

bool ParseInt64(std::string_view s, int64_t* out) {
  std::string str(s);
  if (str.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(str.c_str(), &end, 10);
  if (errno != 0 || end == str.c_str() || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  std::string str(s);
  if (str.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(str.c_str(), &end);
  if (errno != 0 || end == str.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool ParseDurationNs(std::string_view s, int64_t* out_ns) {
  struct Unit {
    const char* suffix;
    double scale;
  };
  static const Unit kUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (const Unit& u : kUnits) {
    if (EndsWith(s, u.suffix)) {
      std::string_view num = s.substr(0, s.size() - std::string_view(u.suffix).size());
      // "ms" also ends with "s": only accept if the number part parses.
      double v;
      if (ParseDouble(num, &v) && v >= 0) {
        *out_ns = static_cast<int64_t>(std::llround(v * u.scale));
        return true;
      }
    }
  }
  double v;
  if (!ParseDouble(s, &v) || v < 0) return false;
  *out_ns = static_cast<int64_t>(std::llround(v * 1e9));
  return true;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  uint32_t v = c & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) v = (v << 6) | (b(k) & 0x3F);
  *cp = v;
  return n;
}

namespace {

template <typename Map>
std::string RewriteUtf8(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t n = DecodeUtf8(s, i, &cp);
    if (n == 0) {
      AppendUtf8(&out, 0xFFFD);
      ++i;
      continue;
    }
    if (!map(cp, &out)) out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

bool PlainAscii(std::string_view s, bool allow_controls) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x7F || (!allow_controls && c < 0x20)) return false;
  }
  return true;
}

}  // namespace

bool IsBidiControl(uint32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string ValidUtf8(std::string_view s) {
  if (PlainAscii(s, true)) return std::string(s);
  return RewriteUtf8(s, [](uint32_t, std::string*) { return false; });
}

std::string PrintableText(std::string_view s) {
  if (PlainAscii(s, false)) return std::string(s);
  return RewriteUtf8(s, [](uint32_t cp, std::string* out) {
    if (cp == '\t' || cp == '\n' || cp == '\r') {
      out->push_back(' ');
      return true;
    }
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
      AppendUtf8(out, 0xFFFD);
      return true;
    }
    if (IsBidiControl(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "<U+%04X>", static_cast<unsigned>(cp));
      out->append(buf);
      return true;
    }
    return false;
  });
}

std::string Demangle(const std::string& mangled) {
  if (!StartsWith(mangled, "_Z")) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> res(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !res) return mangled;
  return std::string(res.get());
}

}  // namespace stepscope
