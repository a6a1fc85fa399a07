#include "capture/output_path.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_util.h"
#include "common/strings.h"

namespace stepscope {

StatusOr<std::string> ExpandOutputPattern(const std::string& pattern, const PatternContext& ctx,
                                          int sequence) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= pattern.size()) return InvalidInput("output pattern ends with a lone '%'");
    char t = pattern[++i];
    switch (t) {
      case '%':
        out.push_back('%');
        break;
      case 'p':
        out += std::to_string(ctx.pid);
        break;
      case 'h':
        out += ctx.host;
        break;
      case 'n':
        if (sequence > 0) out += std::to_string(sequence);
        break;
      case 'q': {
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{') {
          return InvalidInput("output pattern: %q must be followed by {VARIABLE}");
        }
        size_t close = pattern.find('}', i + 2);
        if (close == std::string::npos) return InvalidInput("output pattern: unterminated %q{");
        std::string var = pattern.substr(i + 2, close - i - 2);
        const char* v = ctx.getenv ? ctx.getenv(var) : nullptr;
        out += v ? v : "";
        i = close;
        break;
      }
      default:
        return InvalidInput(std::string("output pattern: unknown token %") + t +
                            " (use %p, %h, %q{VAR}, %n or %%)");
    }
  }
  if (out.empty()) return InvalidInput("output pattern expands to an empty name");
  if (!EndsWith(out, ".sqlite")) out += ".sqlite";
  return out;
}

Status CheckTracePathLength(const std::string& path) {
  constexpr size_t kNameMax = 255, kPathMax = 4096;
  constexpr size_t kSqliteSuffix = 8;  // "-journal" (also "-wal", "-shm")
  if (path.size() + kSqliteSuffix >= kPathMax) {
    return InvalidInput("the path is longer than " + std::to_string(kPathMax) + " bytes");
  }
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    const bool last = end == std::string::npos;
    if (last) end = path.size();
    const size_t len = end - begin + (last ? kSqliteSuffix : 0);
    if (len > kNameMax) {
      return InvalidInput(std::string(last ? "the file name" : "a directory name") + " (" +
                          std::to_string(end - begin) + " bytes" +
                          (last ? ", with SQLite's \"-journal\"" : "") + ") is longer than " +
                          std::to_string(kNameMax) + " bytes");
    }
    begin = end + 1;
  }
  return OkStatus();
}

bool PatternIsPerProcess(const std::string& pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '%') {
      char t = pattern[i + 1];
      if (t == 'p' || t == 'q' || t == 'n') return true;
      ++i;
    }
  }
  return false;
}

namespace {

std::string WithSuffix(const std::string& path, int n) {
  std::string stem = path.substr(0, path.size() - std::strlen(".sqlite"));
  return stem + "-" + std::to_string(n) + ".sqlite";
}

// 1: created; 0: exists; -1: other error (errno set).
int TryCreate(const std::string& path, int64_t overwrite_older_than_ns, int mode) {
  int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
  if (fd >= 0) {
    ::close(fd);
    return 1;
  }
  if (errno != EEXIST) return -1;
  if (overwrite_older_than_ns > 0) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      // A live collector holds an exclusive flock on the trace it writes: never
      // replace that one, whatever its age.
      const bool busy = !CheckNotBeingWritten(path).ok();
      if (mtime < overwrite_older_than_ns && !busy) {
        ::unlink(path.c_str());
        ::unlink((path + "-wal").c_str());
        ::unlink((path + "-shm").c_str());
        ::unlink((path + "-journal").c_str());
        fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
        if (fd >= 0) {
          ::close(fd);
          return 1;
        }
        if (errno != EEXIST) return -1;
      }
    }
  }
  return 0;
}

}  // namespace

StatusOr<std::string> CreateTraceFile(const std::string& pattern, const PatternContext& ctx,
                                      int64_t overwrite_older_than_ns, int mode) {
  const bool has_seq = pattern.find("%n") != std::string::npos;
  for (int n = 1; n < 100000; ++n) {
    std::string path;
    if (has_seq) {
      ASSIGN_OR_RETURN(path, ExpandOutputPattern(pattern, ctx, n));
    } else {
      ASSIGN_OR_RETURN(path, ExpandOutputPattern(pattern, ctx, 0));
      if (n > 1) path = WithSuffix(path, n);
    }
    if (Status st = CheckTracePathLength(path); !st.ok()) {
      return InvalidInput(path + ": cannot create trace file: " + st.message());
    }
    int rc = TryCreate(path, overwrite_older_than_ns, mode);
    if (rc == 1) return path;
    if (rc < 0) return IoError(path + ": cannot create trace file: " + std::strerror(errno));
  }
  return IoError("no free trace file name for pattern " + pattern);
}

}  // namespace stepscope
