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

std::string Demangle(const std::string& mangled) {
  if (!StartsWith(mangled, "_Z")) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> res(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !res) return mangled;
  return std::string(res.get());
}

}  // namespace stepscope
