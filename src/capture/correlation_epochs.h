// Correlation ids across CUPTI detaches (issue 33).
//
// With the windows detached outside them (STEPSCOPE_DETACH, cupti_setup.cc),
// each window after a cuptiFinalize runs under a new CUPTI subscription (an
// epoch). Whether CUPTI's correlation counter starts again from 1 after a
// finalize is not documented (not checked on a GPU yet), and the trace joins
// API calls to kernels and copies by correlation id over the whole trace
// (store/schema.cc's correlation indexes), so a repeat would join a window's
// kernels to another window's launches. The tracer therefore hands the trace
// mapped ids: raw + the epoch's offset, the offset chosen at the first id of
// the epoch: unchanged when the ids go on (the first id is above the last one
// of the previous epoch), else past every id handed out before. Both the API
// callbacks (ApiRecord, Python stacks, OOMs) and the activity buffers (kernel,
// memcpy, memset, sync, memory records) map through the same object.
//
// Cost: without a detach (whole-run tracing, the first window) the offset is 0
// and Map is one relaxed load; nothing is rewritten in the buffers.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace stepscope {

class CorrelationEpochs {
 public:
  // The id the trace gets for CUPTI's `raw` id of the current epoch.
  uint32_t Map(uint32_t raw) {
    if (pending_.load(std::memory_order_acquire)) Decide(raw);
    return raw + offset_.load(std::memory_order_relaxed);
  }
  // The offset of the current epoch (0: ids as CUPTI gives them).
  uint32_t offset() const { return offset_.load(std::memory_order_relaxed); }

  // CUPTI was finalized; `last_raw` is the newest raw id of the ending epoch
  // (the API call at whose exit callback the detach ran). The next epoch's
  // offset is decided by its first id.
  void NewEpoch(uint32_t last_raw) {
    std::lock_guard<std::mutex> lk(mu_);
    prev_last_raw_ = last_raw;
    prev_last_mapped_ = last_raw + offset_.load(std::memory_order_relaxed);
    pending_.store(true, std::memory_order_release);
  }

 private:
  void Decide(uint32_t raw) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!pending_.load(std::memory_order_relaxed)) return;  // another thread decided
    // Ids that go on need nothing; ids that start again are moved past every
    // id handed out (kMargin: ids taken by calls the ending epoch never reported).
    if (raw <= prev_last_raw_)
      offset_.store(prev_last_mapped_ + kMargin, std::memory_order_relaxed);
    pending_.store(false, std::memory_order_release);
  }

  static constexpr uint32_t kMargin = 1024;
  std::atomic<bool> pending_{false};
  std::atomic<uint32_t> offset_{0};
  std::mutex mu_;
  uint32_t prev_last_raw_ = 0;
  uint32_t prev_last_mapped_ = 0;
};

}  // namespace stepscope
