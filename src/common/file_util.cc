#include "common/file_util.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace stepscope {

AtomicOutput::AtomicOutput(std::string final_path) : final_path_(std::move(final_path)) {
  temp_path_ = final_path_ + ".tmp-" + std::to_string(::getpid());
  ::unlink(temp_path_.c_str());
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) {
    ::unlink(temp_path_.c_str());
    // SQLite side files of a temporary database.
    ::unlink((temp_path_ + "-journal").c_str());
    ::unlink((temp_path_ + "-wal").c_str());
    ::unlink((temp_path_ + "-shm").c_str());
  }
}

Status AtomicOutput::Commit() {
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    return IoError("cannot rename " + temp_path_ + " to " + final_path_ + ": " +
                   std::strerror(errno));
  }
  committed_ = true;
  return OkStatus();
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
