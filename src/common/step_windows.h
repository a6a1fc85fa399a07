// The one definition of a step's time, shared by `steps` and the rules
// (analysis/model/steps.cc) and `ranks` (ranks/ranks_analysis.cc, from the per-rank
// summaries): every front-end prints the same step count and median.
//
// Each step's *window* on the GPU timeline runs from the end of the previous
// step's GPU work to the end of its own (the work launched while its range was
// open); the first starts at its range start or its first GPU op, whichever is
// earlier; a step without GPU work uses its host range. Windows tile the
// timeline, so the median window is the loop's steady-state period even when
// the host runs ahead of the GPU.
//
// Warm-up: the leading complete steps longer than 1.25x the median of the
// complete steps (the first iterations pay for CUDA context and library
// initialization, allocator growth, autotuning). A step is *steady* when it is
// complete, not warm-up, inside the reader's selection (`ranks --steps`) and its
// window has positive length; only steady steps count in the statistics.
#pragma once

#include <cstdint>
#include <vector>

namespace stepscope {

// What a step is made of, in trace time (ns).
struct StepExtent {
  int64_t range_start_ns = 0;  // host range
  int64_t range_end_ns = 0;
  bool has_gpu = false;      // GPU work was launched in the step
  int64_t gpu_first_ns = 0;  // its first start / last end (when has_gpu)
  int64_t gpu_last_ns = 0;
  bool complete = true;  // false: the range never closed
};

struct StepWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool complete = true;
  bool warmup = false;
  bool selected = true;  // false: outside the reader's step selection (ranks --steps)
  int64_t duration() const { return end_ns - start_ns; }
  bool steady() const { return complete && !warmup && selected && end_ns > start_ns; }
};

// The windows of `steps` (in order), warm-up marked.
std::vector<StepWindow> StepWindows(const std::vector<StepExtent>& steps);

// The durations of the steady windows, in order.
std::vector<int64_t> SteadyDurations(const std::vector<StepWindow>& windows);

}  // namespace stepscope
