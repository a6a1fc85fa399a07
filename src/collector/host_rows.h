// HostRows: turns what the collector receives about host threads into the
// trace's host tables (schema 1.5, docs/capture.md, "Host capture"):
//  * samples from the HostSampler -> samples rows, their Python stacks
//    interned into frames/callsites; thread names; its native samples ->
//    native_samples rows, their stacks interned the same way (kind native);
//  * osrt rows (source 2, sampled) from runs of samples: a thread seen in
//    the same blocking wait (lock, I/O, sleep, other; not the GIL, not a
//    CUDA call) in >= 2 consecutive samples is one wait from its first such
//    sample to the first sample after it (start and end accurate to one
//    sample period). One sample alone is not a wait: at 200 Hz it could be a
//    5 ms blip as well as a 0.1 ms one;
//  * the tracer's Python stacks at CUDA calls (shm kPyCode/kPyStack) ->
//    api_callsite rows.
// After the API rows are written, MarkCudaWaits (at finish) re-labels the
// samples taken inside a blocking CUDA call of the same thread as
// blocked_cuda with the call's name, and drops sampled osrt rows inside one
// (the futex or poll of a blocking sync is the CUDA call, not an OS wait).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/host_sampler.h"
#include "store/callsite_interner.h"
#include "store/trace_writer.h"

namespace stepscope {

class HostRows {
 public:
  // `wall_offset_ns`: trace time = CLOCK_REALTIME - wall_offset_ns.
  HostRows(TraceWriter* writer, int64_t wall_offset_ns, int hz);

  void AddBatch(HostBatch* batch);
  // Ring records from the tracer.
  void AddPyCode(const uint8_t* p, uint32_t n);
  void AddPyStack(const uint8_t* p, uint32_t n);
  // Closes the waits still open (the process ended).
  void Finish(int64_t end_ns);
  // SQL, after every api row is written: see the file comment.
  Status MarkCudaWaits();

  uint64_t samples() const { return samples_; }
  uint64_t native_samples() const { return native_samples_; }
  uint64_t api_stacks() const { return api_stacks_; }
  uint64_t osrt() const { return osrt_; }
  int64_t max_ns() const { return max_ns_; }
  // Thread names seen by the sampler (comm).
  const std::unordered_map<uint32_t, std::string>& thread_names() const { return names_; }

 private:
  struct Run {
    int64_t start = 0, last = 0;
    ThreadState state = ThreadState::kUnknown;
    std::string name, detail;
    uint32_t callsite = 0;
    int count = 0;
  };
  void CloseRun(uint32_t tid, Run* r, int64_t end_ns);

  TraceWriter* w_;
  CallsiteInterner interner_;
  int64_t wall_offset_ns_;
  int64_t period_ns_;
  std::unordered_map<uint32_t, uint32_t> sampler_stacks_;  // sampler stack id -> callsite
  std::unordered_map<uint32_t, uint32_t> native_stacks_;   // native stack id -> callsite
  std::unordered_map<uint64_t, std::pair<StringId, StringId>> codes_;  // tracer code -> names
  std::unordered_map<std::string, StringId> waits_;
  std::unordered_map<uint32_t, Run> runs_;
  std::unordered_map<uint32_t, std::string> names_;
  uint64_t samples_ = 0, native_samples_ = 0, api_stacks_ = 0, osrt_ = 0;
  int64_t max_ns_ = 0;
};

}  // namespace stepscope
