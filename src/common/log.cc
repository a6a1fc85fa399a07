#include "common/log.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/env_contract.h"

namespace stepscope {
namespace {

int g_level = 0;  // -1 quiet, 0 normal, 1 verbose

void Emit(const char* level, const char* fmt, va_list ap) {
  // Format into one buffer and write(2) it at once so that lines from several
  // processes (ranks, workers) do not interleave mid-line.
  char buf[2048];
  int n = std::snprintf(buf, sizeof(buf), "stepscope: %s", level);
  if (n < 0) return;
  int m = std::vsnprintf(buf + n, sizeof(buf) - static_cast<size_t>(n) - 1, fmt, ap);
  if (m < 0) return;
  size_t len = std::strlen(buf);
  buf[len++] = '\n';
  ssize_t ignored = ::write(2, buf, len);
  (void)ignored;
}

}  // namespace

void SetLogLevel(int level) { g_level = level; }
bool LogQuiet() { return g_level < 0; }

void LogInfo(const char* fmt, ...) {
  if (g_level < 0) return;
  va_list ap;
  va_start(ap, fmt);
  Emit("", fmt, ap);
  va_end(ap);
}

void LogWarn(const char* fmt, ...) {
  if (g_level < 0) return;
  va_list ap;
  va_start(ap, fmt);
  Emit("warning: ", fmt, ap);
  va_end(ap);
}

void LogError(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Emit("error: ", fmt, ap);
  va_end(ap);
}

bool VerboseEnabled() {
  if (g_level > 0) return true;
  static const bool enabled = [] {
    const char* v = std::getenv(kEnvVerbose);
    return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void LogVerbose(const char* fmt, ...) {
  if (!VerboseEnabled()) return;
  va_list ap;
  va_start(ap, fmt);
  Emit("", fmt, ap);
  va_end(ap);
}

}  // namespace stepscope
