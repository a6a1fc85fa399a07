#include "common/file_util.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace stepscope {

AtomicOutput::AtomicOutput(std::string final_path) : final_path_(std::move(final_path)) {
  const std::string base = final_path_ + ".tmp-" + std::to_string(::getpid());
  temp_path_ = base;
  for (int n = 1; n <= 100; ++n) {
    int fd = ::open(temp_path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return;
    }
    if (errno != EEXIST) break;
    temp_path_ = base + "-" + std::to_string(n);
  }
  created_ = false;
}

AtomicOutput::~AtomicOutput() {
  if (!committed_ && created_) {
    ::unlink(temp_path_.c_str());
    // SQLite side files of a temporary database.
    ::unlink((temp_path_ + "-journal").c_str());
    ::unlink((temp_path_ + "-wal").c_str());
    ::unlink((temp_path_ + "-shm").c_str());
  }
}

Status AtomicOutput::Commit() {
  // Again at the last moment: a run may have started on this name since the
  // command checked it.
  RETURN_IF_ERROR(CheckNotBeingWritten(final_path_));
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    return IoError("cannot rename " + temp_path_ + " to " + final_path_ + ": " +
                   std::strerror(errno));
  }
  committed_ = true;
  return OkStatus();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Status CheckNotBeingWritten(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return OkStatus();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return OkStatus();
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if we took it
  if (!busy) return OkStatus();
  return InvalidInput(path +
                      " is being written by a running stepscope profile; wait for it to end or "
                      "choose another -o");
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidInput(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFileAtomic(const std::string& path, const std::string& data) {
  AtomicOutput out(path);
  {
    std::ofstream f(out.temp_path(), std::ios::binary);
    if (!f) return IoError(path + ": cannot create: " + std::strerror(errno));
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    f.close();
    if (!f) return IoError(path + ": write failed: " + std::strerror(errno));
  }
  return out.Commit();
}

std::string ExecutableDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::string FindLibraryBesideExecutable(const std::string& file_name) {
  const std::string dir = ExecutableDir();
  for (const char* rel : {"/../lib/", "/../lib64/"}) {
    std::string p = dir + rel + file_name;
    if (!FileExists(p)) continue;
    char real[4096];
    return ::realpath(p.c_str(), real) ? std::string(real) : p;
  }
  return "";
}

}  // namespace stepscope
