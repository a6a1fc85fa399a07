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

Status ParseOutputPattern(const std::string& pattern,
                          const std::function<void(char kind, const std::string& text)>& visit) {
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) visit('l', literal);
    literal.clear();
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      literal.push_back(c);
      continue;
    }
    if (i + 1 >= pattern.size()) {
      flush();
      return InvalidInput("output pattern ends with a lone '%'");
    }
    char t = pattern[++i];
    if (t == '%') {
      literal.push_back('%');
      continue;
    }
    flush();
    switch (t) {
      case 'p':
      case 'h':
      case 'n':
        visit(t, "");
        break;
      case 'q': {
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{') {
          return InvalidInput("output pattern: %q must be followed by {VARIABLE}");
        }
        size_t close = pattern.find('}', i + 2);
        if (close == std::string::npos) return InvalidInput("output pattern: unterminated %q{");
        visit('q', pattern.substr(i + 2, close - i - 2));
        i = close;
        break;
      }
      default:
        return InvalidInput(std::string("output pattern: unknown token %") + t +
                            " (use %p, %h, %q{VAR}, %n or %%)");
    }
  }
  flush();
  return OkStatus();
}

std::vector<std::string> PatternVariables(const std::string& pattern) {
  std::vector<std::string> vars;
  (void)ParseOutputPattern(pattern, [&](char kind, const std::string& text) {
    if (kind == 'q') vars.push_back(text);
  });
  return vars;
}

StatusOr<std::string> ExpandOutputPattern(const std::string& pattern, const PatternContext& ctx,
                                          int sequence) {
  std::string out;
  RETURN_IF_ERROR(ParseOutputPattern(pattern, [&](char kind, const std::string& text) {
    switch (kind) {
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
        const char* v = ctx.getenv ? ctx.getenv(text) : nullptr;
        out += v ? v : "";
        break;
      }
      default:
        out += text;
    }
  }));
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
  bool per_process = false;
  (void)ParseOutputPattern(pattern, [&](char kind, const std::string&) {
    per_process |= kind == 'p' || kind == 'q' || kind == 'n';
  });
  return per_process;
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
  bool has_seq = false;
  (void)ParseOutputPattern(pattern, [&](char kind, const std::string&) { has_seq |= kind == 'n'; });
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
