// File helpers. AtomicOutput implements the CLI rule "never leave a half-written
// output file": write to a temporary name beside the target, then rename.
#pragma once

#include <string>

#include "common/status.h"

namespace stepscope {

class AtomicOutput {
 public:
  // `final_path` is where the file lands on Commit(); until then the data goes
  // to temp_path() (same directory, so rename(2) is atomic). The temporary
  // file is created here, empty, with O_EXCL (a name another process or a
  // planted symlink holds is never opened: the next free name is taken); if it
  // cannot be created the writer's own open reports why.
  explicit AtomicOutput(std::string final_path);
  ~AtomicOutput();  // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }
  Status Commit();

 private:
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
  bool created_ = true;  // false: the name was not ours; never remove it
};

bool FileExists(const std::string& path);
// An error when `path` is a trace that a running `stepscope profile` is
// writing (its collector holds an exclusive flock on it until the trace is
// finalized): no command replaces or renames over it, -f or not. The one
// check of every command that writes an output (CheckOverwrite) and of
// profile's fixed -o.
Status CheckNotBeingWritten(const std::string& path);
// Whether both paths exist and are the same file (device and inode: links,
// "./x" and "x" alike).
bool SameFile(const std::string& a, const std::string& b);
StatusOr<std::string> ReadFile(const std::string& path);
// Writes `data` to `path` atomically (temp + rename).
Status WriteFileAtomic(const std::string& path, const std::string& data);
// Directory of the running executable (from /proc/self/exe).
std::string ExecutableDir();
// A library installed beside the executable: <exe dir>/../lib/NAME or
// ../lib64/NAME, resolved with realpath; "" when neither exists. The one
// lookup of the injected libraries (profile, roofline, host-mem).
std::string FindLibraryBesideExecutable(const std::string& file_name);

}  // namespace stepscope
