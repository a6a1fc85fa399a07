// Minimal logging to stderr. The injected tracer uses Warn() exactly once per
// failure class ("stepscope: warning: ...") and then stays quiet.
#pragma once

#include <cstdarg>

namespace stepscope {

// printf-style; prefixed with "stepscope: " and terminated with a newline.
void LogInfo(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void LogWarn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void LogError(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Verbose messages only print when STEPSCOPE_VERBOSE=1 is set or the level
// is 1 (the CLI's -v). Level -1 (the CLI's -q) silences LogInfo and LogWarn.
bool VerboseEnabled();
void SetLogLevel(int level);
bool LogQuiet();  // level -1
void LogVerbose(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace stepscope
