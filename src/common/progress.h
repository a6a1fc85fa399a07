// ProgressReporter: one status line on stderr for work that takes a while.
//
//   ProgressReporter progress("import", ReadProgress(path));
//   ... long work ...
//   // the destructor clears the line
//
// It shows only when stderr is a terminal, -q is off (log level >= 0), and
// the work has run for 2 s; then it redraws "\r<label>: <status> (N s)"
// twice a second from a background thread, so the work itself needs no hook.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace stepscope {

class ProgressReporter {
 public:
  ProgressReporter(std::string label, std::function<std::string()> status);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

 private:
  void Run();

  std::string label_;
  std::function<std::string()> status_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

// A status for reading the file at `path`: the share of its size this
// process has read so far (/proc/self/io), e.g. "41% of 2.1 GB read".
std::function<std::string()> ReadProgress(const std::string& path);
// A status counting finished items: "3 of 8 traces".
std::function<std::string()> CountProgress(const std::atomic<size_t>* done, size_t total,
                                           const std::string& what);

}  // namespace stepscope
