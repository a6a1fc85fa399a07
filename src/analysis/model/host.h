// Host-model analysis (docs/host.md): what each CPU thread did, from the best
// evidence the trace holds, shared by the host recipes (thread_states,
// osrt_sum, python_hotspots), `analyze`'s per-step host split and the rules'
// Python lines, the Perfetto export and the report.
//
// A thread's timeline is a list of segments in one state, from (first match):
//   1. thread_sched (exact, nsys): running intervals, and off-CPU intervals
//      split by the OS runtime waits (osrt) and blocking CUDA calls of the
//      thread that overlap them (which give their state: blocked_lock,
//      blocked_io, blocked_cuda...);
//   2. samples: each covers [ts, ts + period) (1 / meta.sample_hz; without a
//      rate, the gap to the thread's next sample, the last one the median gap);
//   3. osrt waits and blocking CUDA calls alone (the rest of the thread's time
//      is not covered: no segment, no invented state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/summary.h"
#include "analysis/model/trace_model.h"

namespace stepscope {

// The state an OS-runtime wait stands for: pthread_cond_wait / futex / sem_wait
// -> blocked_lock, read / poll / recv -> blocked_io, nanosleep -> sleep, a
// CUDA call -> blocked_cuda, "GIL" -> blocked_gil, else blocked_other.
ThreadState OsrtState(std::string_view name);

struct HostSegment {
  int64_t start_ns;
  int64_t end_ns;
  ThreadState state;
  StringId wait;      // what it waited in (osrt name, CUDA call, sample's wait), 0 none
  uint32_t callsite;  // stack at the segment (samples, osrt), 0 none
};

enum class HostSource { kNone, kSamples, kSched, kWaits };
const char* HostSourceName(HostSource s);  // "samples", "sched", "waits", "none"

// The samples of thread `tid` as segments (with their stacks), by start.
std::vector<HostSegment> SampleSegments(const TraceModel& m, uint32_t tid);
// Segments of thread `tid`, by start, and the source they came from.
std::vector<HostSegment> ThreadSegments(const TraceModel& m, uint32_t tid, HostSource* source);
// Threads with any host evidence (samples, sched, osrt, api calls), ascending.
std::vector<uint32_t> HostThreads(const TraceModel& m);
// True when the trace has a host model at all (any host table non-empty).
bool HasHostModel(const TraceModel& m);

// Length of [s, e) inside the sorted, disjoint windows (all of it when empty).
int64_t InWindows(int64_t s, int64_t e, const std::vector<Interval>& windows);
// Time of [s, e) covered by `intervals` (sorted by start, disjoint); 0 when there are none.
int64_t Overlap(int64_t s, int64_t e, const std::vector<Interval>& intervals);

// True when the stack of `callsite` is in PyTorch's DataLoader (a frame in
// torch/utils/data, or a function named like _next_data / DataLoader).
bool IsDataLoaderStack(const TraceModel& m, uint32_t callsite);

// Python lines by time: from samples (source "samples": self = the innermost
// Python frame, total = anywhere on the stack), else from python_function
// spans (source "python_function spans": self time = the span minus its
// nested spans). Ranked by self time.
struct PythonLine {
  std::string label;  // "train.py:152 train_step" / the span's name
  int64_t self_ns = 0;
  int64_t total_ns = 0;
  int64_t self_samples = 0;  // samples only
  int64_t running_samples = 0;
};
struct PythonHotspots {
  std::string source;  // "samples", "python_function spans", or "" (no evidence)
  int64_t total_ns = 0;
  std::vector<PythonLine> lines;
};
// tid 0: every thread; windows empty: all time.
PythonHotspots ComputePythonHotspots(const TraceModel& m, uint32_t tid,
                                     const std::vector<Interval>& windows);

}  // namespace stepscope
