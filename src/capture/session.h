// Session: the per-process state of the injected tracer (the producer side).
//
// The tracer writes no file and keeps no fd. At start it creates a
// shared-memory region (capture/shm_ring.h), hands it to a collector process
// (the `stepscope profile` launcher, or one it starts itself) and closes its
// fds; the collector drains the region and writes the SQLite trace, and
// finalizes it after this process is gone, whatever killed it.
//
// Threads and what they may do:
//  * the program's threads append fixed-layout records to the ring (API
//    callbacks, NVTX handlers): one CAS and a copy; a full ring drops and
//    counts the record;
//  * CUPTI writes activity records into buffer slots of the region;
//  * one small timer thread (all signals blocked, no I/O) asks CUPTI for
//    completed buffers every 0.25 s, runs the --delay/--duration windows and
//    moves host-mem records into the ring; once the program uses unified
//    memory it also samples the driver's migration totals every millisecond
//    (uvm_counters.h) and, while they move, asks CUPTI for its
//    unified-memory records each time: the driver's queue behind them is
//    small and drops what is not drained in time.
//
// The one fd the tracer keeps: /dev/nvidia-uvm-tools, opened at the first
// managed allocation for the driver's totals and never written or read
// through after that call (the driver updates a page of our memory). A program
// that closes it stops the totals, nothing else.
//
// Failure policy: nothing here throws or aborts. Any failure disables the
// session with one warning ("stepscope: warning: ... ; the program runs
// untraced") and every entry point becomes a no-op. A child created by fork()
// without exec is not traced (pthread_atfork handler).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "capture/config.h"
#include "capture/correlation_epochs.h"
#include "capture/shm_ring.h"
#include "capture/uvm_counters.h"
#include "format/records.h"

namespace stepscope {

namespace pm {
struct MetricValue;
}

class Session {
 public:
  // The process-wide session (never destroyed: it must outlive atexit).
  static Session& Get();

  // Starts the session once: config, shared region, collector handshake,
  // timer thread, atexit and fork handlers. False when tracing is off.
  bool EnsureStarted();
  // True when this process traces (started, not disabled, not a fork child).
  bool active() const {
    // acquire: pairs with the store at start, so config_ and shm_ are visible.
    return active_.load(std::memory_order_acquire) &&
           !in_fork_child_.load(std::memory_order_relaxed);
  }
  // True while events should be recorded (inside --delay/--duration/range).
  bool recording() const { return active() && recording_.load(std::memory_order_relaxed); }
  // Read-only after start.
  const CaptureConfig& config() const { return config_; }
  // The nvtx:NAME capture range is still to come (one window only).
  bool nvtx_range_pending() const {
    return config_.range == CaptureConfig::Range::kNvtx &&
           !window_done_.load(std::memory_order_relaxed);
  }
  bool profiler_range_pending() const {
    return config_.range == CaptureConfig::Range::kCudaProfilerApi &&
           !window_done_.load(std::memory_order_relaxed);
  }

  // Disables tracing for the rest of the process with one warning.
  void Disable(const std::string& why);

  // Trace-clock time (CUPTI's clock) for events the tracer stamps itself.
  int64_t NowNs() const { return RealtimeNsForSession() + clock_offset_ns_; }

  // Ring producers (any thread). False/0 when dropped or inactive.
  bool PutApi(const ApiRecord& r);
  // An NVTX range opened (or a mark, kind kMark): returns its id (0: not recorded).
  uint64_t NvtxOpen(int64_t start_ns, uint32_t tid, uint32_t category, uint32_t color,
                    NvtxKind kind, uint8_t depth, std::string_view domain, std::string_view name);
  void NvtxClose(uint64_t id, int64_t end_ns, uint32_t end_tid);
  // `id` was handed out by NvtxOpen (in this process): a range id a program
  // made up is not.
  bool NvtxIssued(uint64_t id) const {
    return id != 0 && id < next_nvtx_id_.load(std::memory_order_relaxed);
  }
  void SetThreadName(uint32_t tid, std::string_view name);
  // The calling thread's Python stack for API call `correlation`
  // (python_callstack.h).
  bool PutPythonStack(uint32_t correlation, uint32_t tid);
  // An allocation failed: the collector commits it at once.
  void AddOom(const OomRecord& o);
  // One PM-sampled GPU metric (pm_sampling.h's decode thread).
  bool PutGpuMetric(const pm::MetricValue& v);

  // CUPTI plumbing (cupti_setup.cc registers these).
  void SetCuptiActive(bool on) { cupti_active_.store(on); }
  bool cupti_active() const { return cupti_active_.load(); }
  // Held around every CUPTI call made outside CUPTI's own callbacks by the
  // timer thread and by a diagnostics detach/attach (cuptiFinalize must not
  // race a flush).
  std::mutex& cupti_mutex() { return cupti_mu_; }
  uint8_t* AllocateBuffer(size_t* size);
  void OnBufferCompleted(uint8_t* buffer, size_t valid, uint64_t dropped);
  // Recording on/off (delay, duration, capture ranges). Calls the hook that
  // enables/disables CUPTI activity kinds.
  void SetRecording(bool on);
  // A recording window opens (--delay's end, the NVTX capture range's push):
  // CUPTI attached first where windows detach it, then recording on.
  void OpenWindow();
  // A recording window closes: recording off, then CUPTI's detach requested.
  void CloseWindow();
  // The id the trace gets for CUPTI's correlation id `raw` (the API records,
  // the activity buffers): ids stay unique across CUPTI detaches.
  uint32_t MapCorrelation(uint32_t raw) { return correlation_epochs_.Map(raw); }
  // Wakes the timer thread now (e.g. to subscribe again after a detach).
  void WakeTimer();
  // CUPTI was finalized at a window's end; `last_raw`: its newest id.
  void NewCorrelationEpoch(uint32_t last_raw) { correlation_epochs_.NewEpoch(last_raw); }
  void SetActivityToggle(void (*toggle)(bool on)) { activity_toggle_.store(toggle); }
  // Unified memory is in use (the first managed allocation, or the first
  // context with `--trace um`): opens the driver's totals for the timer
  // thread to sample. Once; a failure is said with STEPSCOPE_VERBOSE only.
  void StartUvmCounters();

  // Flushes CUPTI into the region and marks a clean exit. Idempotent; runs
  // from atexit in the owning process.
  void Shutdown();

  static void OnForkChild();

 private:
  Session();
  ~Session();
  static int64_t RealtimeNsForSession();
  bool Start();
  bool Handshake(int memfd);
  void TimerLoop();
  void PumpHostMem();
  // Timer thread: the driver's totals moved since the last call -> one um row
  // per moved total; returns true when they moved.
  bool PumpUvmTotals(int64_t now_ns, bool emit);
  // One walk over a completed buffer: copies the strings its records point
  // to into the ring, and maps their correlation ids (MapCorrelation).
  void ScanBuffer(uint8_t* buffer, size_t valid);

  CaptureConfig config_;
  CaptureConfig diag_base_;  // STEPSCOPE_DIAG_CYCLE only: config_ as read at start
  uint64_t windows_ = 0;     // recording windows opened (DIAG_CYCLE)
  std::atomic<bool> active_{false};
  std::atomic<bool> recording_{false};
  std::atomic<bool> warned_{false};
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> window_done_{false};
  static std::atomic<bool> in_fork_child_;
  std::atomic<bool> cupti_active_{false};
  std::mutex cupti_mu_;
  std::atomic<void (*)(bool)> activity_toggle_{nullptr};
  std::once_flag start_once_;
  int64_t clock_offset_ns_ = 0;  // trace clock - CLOCK_REALTIME; set before active_
  int64_t start_ns_ = 0;
  std::atomic<int64_t> recording_since_ns_{0};
  std::atomic<uint64_t> next_nvtx_id_{1};
  CorrelationEpochs correlation_epochs_;

  shm::Header* shm_ = nullptr;  // the mapped region; set before active_
  shm::Geometry geometry_;      // its layout, kept here: the program may write over the header

  // Timer thread.
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;    // guarded by mu_
  bool urgent_ = false;  // guarded by mu_: flush CUPTI now (OOM)
  std::thread thread_;
  void* host_drain_ = nullptr;  // stepscope_hostmem_drain, when the interposer is loaded

  // The driver's unified-memory totals: uvm_ is set by StartUvmCounters
  // before the release store of uvm_on_; the timer thread owns the rest.
  UvmToolsCounters uvm_;
  std::atomic<bool> uvm_on_{false};
  std::once_flag uvm_once_;
  UvmTotals uvm_last_;
  int64_t uvm_last_ns_ = 0;
};

}  // namespace stepscope
