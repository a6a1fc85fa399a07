#include "common/progress.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "common/log.h"
#include "common/strings.h"

namespace stepscope {

namespace {

bool ProgressWanted() { return ::isatty(2) && !LogQuiet(); }

// Bytes this process has read through read(2) and friends.
uint64_t BytesRead() {
  std::ifstream f("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

}  // namespace

ProgressReporter::ProgressReporter(std::string label, std::function<std::string()> status)
    : label_(std::move(label)), status_(std::move(status)) {
  if (ProgressWanted()) thread_ = std::thread([this] { Run(); });
}

ProgressReporter::~ProgressReporter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void ProgressReporter::Run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (cv_.wait_for(lock, std::chrono::seconds(2), [this] { return done_; })) return;
  do {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\r\033[K%s: %s (%.0f s)", label_.c_str(), status_().c_str(), s);
    std::fflush(stderr);
    drawn_ = true;
  } while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; }));
}

std::function<std::string()> ReadProgress(const std::string& path) {
  struct stat st;
  const uint64_t size = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  const uint64_t base = BytesRead();
  return [size, base]() -> std::string {
    const uint64_t read = BytesRead() - base;
    if (size == 0) return FormatBytes(read) + " read";
    const double pct = std::min(99.0, 100.0 * static_cast<double>(read) / size);
    return FormatFixed(pct, 0) + "% of " + FormatBytes(size) + " read";
  };
}

std::function<std::string()> CountProgress(const std::atomic<size_t>* done, size_t total,
                                           const std::string& what) {
  return [done, total, what] {
    return std::to_string(done->load()) + " of " + std::to_string(total) + " " + what + " done";
  };
}

}  // namespace stepscope
