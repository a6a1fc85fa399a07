// Temporary directories for tests (no gtest needed): each made with mkdtemp
// (a fresh name, never a left-over directory of an earlier run) and removed
// with everything in it, so no test leaves directories in /tmp (issue 36).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace stepscope {

// PARENT/PREFIX-XXXXXX, removed with its contents when the object goes;
// path() is empty when mkdtemp failed.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& prefix, const std::string& parent = "/tmp") {
    std::string t = parent + "/" + prefix + "-XXXXXX";
    if (::mkdtemp(t.data()) != nullptr) path_ = t;
  }
  ~ScopedTempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A ScopedTempDir that lasts until the test binary exits, for helpers that
// hand out a path ("" when mkdtemp failed).
inline std::string TempDirUntilExit(const std::string& prefix, const std::string& parent = "/tmp") {
  static std::vector<std::unique_ptr<ScopedTempDir>> made;  // removed at exit
  made.push_back(std::make_unique<ScopedTempDir>(prefix, parent));
  return made.back()->path();
}

}  // namespace stepscope
