// Trace file naming: the -o pattern of `stepscope profile`.
//
//   %p      process id            %h  host name
//   %q{VAR} environment variable  %n  sequence number (1, 2, ...: the first free one)
//   %%      a literal '%'
// ".sqlite" is appended when the pattern has no extension of that name.
//
// Every traced process (ranks, DataLoader workers that exec, children of
// torchrun) expands the pattern itself; CreateTraceFile() claims the name with
// O_CREAT|O_EXCL so two processes never write one file: when the name is
// taken, "-2", "-3", ... is inserted before ".sqlite".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope {

struct PatternContext {
  int pid = 0;
  std::string host;
  std::function<const char*(const std::string&)> getenv;  // nullptr-safe lookup
};

// The one parser of the pattern: calls `visit` with each piece in order,
// kind 'l' for literal text (a %% as "%") and 'p', 'h', 'n' or 'q' for a
// token (the variable's name as text for %q{VAR}). Returns kInvalidInput for
// a malformed pattern, after visiting the pieces before the fault.
Status ParseOutputPattern(const std::string& pattern,
                          const std::function<void(char kind, const std::string& text)>& visit);

// The names of the %q{VAR} variables of the pattern, in order: the
// environment a traced process sends the collector for its trace's name.
std::vector<std::string> PatternVariables(const std::string& pattern);

// Expands every token except %n, which becomes `sequence` (or is removed when
// sequence == 0). Returns kInvalidInput for a malformed pattern.
StatusOr<std::string> ExpandOutputPattern(const std::string& pattern, const PatternContext& ctx,
                                          int sequence);

// True when the pattern contains a per-process token (%p, %q{..}, %n), so
// that several processes of one run get different names.
bool PatternIsPerProcess(const std::string& pattern);

// kInvalidInput when the kernel or SQLite could not create `path` for its
// length: a component over NAME_MAX (255) bytes, counting the "-journal"
// SQLite appends to the file's own name, or the whole over PATH_MAX.
Status CheckTracePathLength(const std::string& path);

// Claims a fresh file for the pattern and returns its path. With
// `overwrite_older_than_ns` > 0, an existing file last modified before that
// time (CLOCK_REALTIME ns) is replaced — a leftover from an earlier run under
// --force-overwrite — while files made during this run are never replaced.
// The file is created with `mode` (less the umask): by default only its owner
// may read it, since a trace holds command lines, paths and Python stacks.
inline constexpr int kTraceFileMode = 0600;
StatusOr<std::string> CreateTraceFile(const std::string& pattern, const PatternContext& ctx,
                                      int64_t overwrite_older_than_ns, int mode = kTraceFileMode);

}  // namespace stepscope
