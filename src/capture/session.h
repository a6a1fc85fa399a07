// Session: the per-process state of the injected tracer.
//
// Threads and what they may do:
//  * the traced program's threads only append: NVTX events go into a
//    mutex-guarded vector (AddNvtx); CUPTI fills its own activity buffers;
//  * CUPTI's worker thread hands completed buffers over (OnBufferCompleted);
//  * one background writer thread decodes buffers, writes rows through
//    TraceWriter and commits at least every commit_interval (default 0.5 s),
//    so a kill -9 loses at most about a second of events.
//
// Failure policy: nothing here throws or aborts. Any failure disables the
// session with one warning ("stepscope: warning: ... ; the program runs
// untraced") and every entry point becomes a no-op. A child created by fork()
// without exec never touches the parent's trace: the session is disabled in
// the child by a pthread_atfork handler.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture/config.h"
#include "common/status.h"
#include "format/records.h"

namespace stepscope {

class TraceWriter;
class ActivityDecoder;
namespace hostmem {
class HostAllocSink;
}

// An NVTX event as captured on a program thread; strings are interned later
// on the writer thread.
struct PendingNvtx {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  uint32_t end_tid;
  uint32_t category;
  uint32_t color;
  NvtxKind kind;
  uint8_t depth;
  std::string domain;
  std::string name;
};

class Session {
 public:
  // The process-wide session (never destroyed: it must outlive atexit).
  static Session& Get();

  // Starts the session once: config, trace file, writer thread, atexit and
  // fork handlers. Returns false when tracing is off in this process.
  bool EnsureStarted();
  // True when this process traces (started, not disabled, not a fork child).
  bool active() const { return active_.load(std::memory_order_relaxed) && !in_fork_child_; }
  // True while events should be recorded (inside --delay/--duration/range).
  bool recording() const { return active() && recording_.load(std::memory_order_relaxed); }
  const CaptureConfig& config() const { return config_; }

  // Disables tracing for the rest of the process with one warning.
  void Disable(const std::string& why);

  // Trace-clock time (CUPTI's clock) for events the tracer stamps itself.
  int64_t NowNs() const;

  void AddNvtx(PendingNvtx&& e);
  void SetThreadName(uint32_t tid, const std::string& name);
  // An allocation failed: queued and committed by the writer at once.
  void AddOom(const OomRecord& o);

  // CUPTI plumbing (cupti_setup.cc registers these).
  void SetCuptiActive(bool on) { cupti_active_ = on; }
  uint8_t* AllocateBuffer(size_t* size);
  void OnBufferCompleted(uint8_t* buffer, size_t valid, uint64_t dropped);
  // Recording on/off (delay, duration, capture ranges). Calls the hook that
  // enables/disables CUPTI activity kinds.
  void SetRecording(bool on);
  void SetActivityToggle(void (*toggle)(bool on)) { activity_toggle_ = toggle; }

  // Flushes, finalizes the trace and reports it in the manifest. Idempotent;
  // runs from atexit in the owning process.
  void Shutdown();

  static void OnForkChild();

 private:
  Session();
  ~Session();
  bool Start();
  void WriterLoop();
  void Drain();
  void WriteNvtx(const PendingNvtx& e);
  void FinalizeTrace();
  Status CommitNow();

  CaptureConfig config_;
  std::string path_;
  std::atomic<bool> active_{false};
  std::atomic<bool> recording_{false};
  std::atomic<bool> warned_{false};
  std::atomic<bool> shut_down_{false};
  static std::atomic<bool> in_fork_child_;
  bool cupti_active_ = false;
  void (*activity_toggle_)(bool on) = nullptr;
  std::once_flag start_once_;
  int64_t clock_offset_ns_ = 0;  // trace clock - CLOCK_REALTIME
  int64_t start_ns_ = 0;
  int64_t recording_since_ns_ = 0;
  bool delay_pending_ = false;

  // Guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PendingNvtx> nvtx_;
  std::vector<std::pair<uint8_t*, size_t>> buffers_;
  std::vector<std::pair<uint32_t, std::string>> thread_names_;
  std::vector<OomRecord> ooms_;
  bool urgent_commit_ = false;
  bool stop_ = false;

  std::atomic<size_t> buffer_memory_{0};
  std::atomic<uint64_t> dropped_records_{0};
  std::atomic<uint64_t> refused_buffers_{0};
  std::atomic<uint64_t> nvtx_events_{0};

  // Writer-thread state.
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<ActivityDecoder> decoder_;
  std::unique_ptr<hostmem::HostAllocSink> host_sink_;  // --trace host-mem
  std::vector<uint8_t*> free_buffers_;                 // guarded by mu_
  std::thread thread_;
  std::vector<uint32_t> nvtx_threads_;
  int64_t max_nvtx_ns_ = 0;
};

}  // namespace stepscope
