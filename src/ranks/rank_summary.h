// RankSummary: the small per-rank digest of one trace that `stepscope ranks`
// compares across ranks (docs/ranks.md, "The summary file").
//
// A summary keeps, per training step, what cross-rank analysis needs and no
// more: step times, per-kernel-name and per-NVTX-section totals/medians, every
// NCCL collective kernel with its start and end, the host launch lateness on
// the critical stream and the communication/computation overlap. It is
// written as JSON (SummaryToJson) beside the trace, so that a job's thousand
// summaries can be collected and analyzed without moving the traces.
//
// Times are int64 ns on the trace's own clock; add clock_offset_ns to put
// them on the shared timeline (Unix-epoch ns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope {

// Version 2 added collectives[].free_ns; version 3 the host thread's CPU per
// step (steps[].host_cpu_ns, host_ready_ns), kernels[].threads and python[];
// version 4 kernels[].step_threads (the launch size per step). Versions 1-3
// are still read (what they lack is unknown: -1, empty).
inline constexpr int kRankSummaryVersion = 4;
inline constexpr int kRankSummaryOldestVersion = 1;
inline constexpr const char* kRankSummaryFormat = "stepscope-rank-summary";
inline constexpr int64_t kNoStep = -1;

// One training step of one rank.
struct StepSummary {
  int64_t step = kNoStep;  // N of the NVTX range "step N" / "ProfilerStep#N"
  int64_t start_ns = 0;    // host range [start, end) on the trace clock
  int64_t end_ns = 0;
  int64_t gpu_start_ns = 0;  // first start / last end of the step's kernels (0: none)
  int64_t gpu_end_ns = 0;
  int64_t compute_ns = 0;      // union of the step's non-NCCL kernel intervals, per device, summed
  int64_t comm_ns = 0;         // union of the step's NCCL kernel intervals
  int64_t overlap_ns = 0;      // comm time during which a compute kernel ran on the same device
  int64_t launch_late_ns = 0;  // host launch lateness on the critical stream (docs/ranks.md)
  int64_t kernels = 0;         // kernels attributed to the step
  // The main thread's CPU time in the step (its samples' cpu_ns), and the
  // time it was runnable without a CPU (between two running samples: the
  // interval minus the CPU it got); -1: unknown (no samples).
  int64_t host_cpu_ns = -1;
  int64_t host_ready_ns = -1;

  int64_t host_ns() const { return end_ns - start_ns; }
  int64_t gpu_ns() const { return gpu_end_ns - gpu_start_ns; }
};

// Per-step times of one kernel name or one NVTX section. Vectors are parallel
// to RankSummary::steps (index i = steps[i]).
struct NamedTimes {
  std::string name;
  bool nccl = false;               // kernels only: an NCCL collective kernel
  std::vector<int64_t> total_ns;   // sum of durations in the step
  std::vector<int64_t> count;      // instances in the step
  std::vector<int64_t> median_ns;  // median instance duration in the step (0 when count is 0)
  int64_t threads = -1;  // kernels only: median threads per launch (grid x block); -1 unknown
  // Kernels only (version 4): the median threads per launch in each step, 0
  // where it did not run; empty: unknown (then `threads` stands for every step).
  std::vector<int64_t> step_threads;
};

// One NCCL collective kernel execution.
struct CollectiveSummary {
  std::string name;  // kernel name up to '(' (e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL)
  uint32_t device = 0;
  uint32_t stream = 0;
  int32_t stream_index = 0;  // ordinal of its stream among this trace's NCCL streams, by first use
  int64_t seq = 0;           // per (device, stream, name), from 0, in start order
  int64_t step = kNoStep;    // step number of the kernel, kNoStep when outside every step
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Compute-free time: the part of [start, end) during which no non-NCCL
  // kernel of the same device ran; -1 when unknown (a version 1 summary).
  int64_t free_ns = -1;
};

struct RankSummary {
  std::string trace;  // the trace it was made from, as named on the command line
  int64_t rank = -1;  // -1: the trace did not record one
  int64_t local_rank = -1;
  int64_t world_size = -1;
  std::string host;
  int64_t pid = 0;
  std::string clock;
  int64_t clock_offset_ns = 0;  // meta.wall_clock_offset_ns
  // "nvtx" (step N), "profiler" (ProfilerStep#N), "iteration", "kernel-sequence"
  // (no step ranges: the repeating kernel sequence, common/kernel_sequence.h) or "none"
  std::string step_source;
  int64_t main_tid = 0;  // the thread host_cpu_ns and python describe (0: none)
  uint32_t critical_device = 0;
  uint32_t critical_stream = 0;
  std::vector<StepSummary> steps;  // in step order
  std::vector<NamedTimes> kernels;
  std::vector<NamedTimes> sections;
  // The main thread's CPU time per Python function ("caller > function (file)"
  // of its sampled stacks; total_ns: the samples' cpu_ns, count: samples), at
  // most 64, the largest first.
  std::vector<NamedTimes> python;
  std::vector<CollectiveSummary> collectives;  // in start order
};

// The JSON form (docs/ranks.md documents every key).
std::string SummaryToJson(const RankSummary& s);
// The largest summary file `ranks` reads (docs/ranks.md): summarize writes
// ~3.7 KB per step of a 72-kernel DDP run, so 64 MiB holds ~17,000 steps.
// Parsing builds a document tree of up to ~17x the file (integer arrays:
// a 26 MB summary peaks at 457 MB), so a file at the limit needs ~1.1 GB.
// A larger file is refused (exit 2) before it is read.
inline constexpr int64_t kMaxRankSummaryBytes = int64_t{64} << 20;
// Parses a summary; `origin` names the file in errors (kInvalidInput).
StatusOr<RankSummary> SummaryFromJson(std::string_view json, const std::string& origin);

// "run_0.sqlite" -> "run_0.summary.json" (a name without .sqlite gets the suffix appended).
std::string DefaultSummaryPath(const std::string& trace_path);

}  // namespace stepscope
