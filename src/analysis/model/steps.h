// Training-step detection and the per-step view (library API: the `steps`
// command, `--step N` filters, the rules, `diff` and the HTML report use it).
//
// Detection, first match wins:
//   1. --step-range REGEX: push/pop NVTX ranges whose name matches;
//   2. the step ranges of common/step_names.h (the one definition shared with
//      memory, roofline and ranks): "step N" (any case, separators
//      " _#:-"), else "ProfilerStep#N", else "iteration N" (the ranges
//      `profile` puts between optimizer steps of a loop that marks none);
//      never GPU-side ranges (Kineto's
//      gpu_user_annotation copies), never zero-length; one thread (the one
//      with the most); nested or overlapping ranges keep the outermost.
//      The same domain/length/thread/nesting rules apply to 1.;
//   3. fallback: a repeating kernel sequence. The anchor is the kernel name that
//      occurs most often at a uniform spacing (every occurrence the same
//      number of kernels after the previous one, within 10%); each occurrence
//      starts a step. Per-layer kernels are not uniform (the step boundary
//      breaks the spacing), the once-per-step optimizer kernel is. When every
//      anchor was launched inside one and the same forward range ("forward"
//      as a word, or torch's "nn.Module: X": the layers of one forward call),
//      there are no steps (StepSet::note says why).
// The step number comes from the name (else the first digit run, else the
// ordinal).
//
// Each step's *window* on the GPU timeline, warm-up steps and what counts in
// the statistics: common/step_windows.h (the one definition, shared with
// `ranks`).
// The breakdown inside a window follows HTA's temporal breakdown (see
// timeline.h). A range left open by a cut-off trace is an incomplete step:
// listed, but left out of the statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/summary.h"
#include "analysis/model/trace_model.h"
#include "common/status.h"
#include "common/step_names.h"

namespace stepscope {

struct StepOptions {
  std::string range_regex;  // --step-range; empty: automatic
  int device = -1;          // breakdown of this device; -1: all devices together
  bool kernel_fallback = true;
};

struct StepKernel {
  StringId name;
  int64_t total_ns;
  int64_t count;
};

struct Step {
  int64_t number = 0;
  std::string name;
  uint32_t nvtx = kNone;  // the step's NVTX range; kNone for the kernel-sequence fallback
  uint32_t tid = 0;
  int64_t range_start_ns = 0;  // host-side range (fallback: the anchor kernels' starts)
  int64_t range_end_ns = 0;
  bool complete = true;  // false: the range never closed (cut-off trace)
  bool warmup = false;   // a leading step much longer than the median
  // Complete, not warm-up, and a window of positive length: counted in the
  // statistics, the rules and diff.
  bool steady() const { return complete && !warmup && end_ns > start_ns; }
  // The one word every front-end shows for a step (steps, the report, the
  // Python API): "open" (never closed), "warm-up", "empty" (no time), "ok".
  const char* status() const {
    return !complete ? "open" : warmup ? "warm-up" : !steady() ? "empty" : "ok";
  }
  int64_t start_ns = 0;  // window on the GPU timeline
  int64_t end_ns = 0;
  int64_t gpu_first_ns = -1;  // first start / last end of the GPU work launched in the step
  int64_t gpu_last_ns = -1;
  int64_t gpu_ops = 0;
  uint32_t first_op = kNone;            // index in gpu_ops() of the step's first-launched op
  Breakdown breakdown;                  // of the window
  std::vector<StepKernel> top_kernels;  // up to 5, by total time in the window
  int64_t duration() const { return end_ns - start_ns; }
};

struct StepSet {
  std::string method;   // "nvtx" or "kernel-sequence" or "" when no steps were found
  std::string pattern;  // the name pattern, or the anchor kernel name
  std::vector<Step> steps;
  StepRangeDrops dropped;  // step-named ranges that are not steps, by reason
  std::string note;        // why no steps were found, when there is more to say
  DurationStats stats;     // durations of the steady steps (complete, not warm-up)
  // Index of the step with this number, or -1.
  int Find(int64_t number) const;
  // Index of the step whose host range contains t (any thread), or -1.
  int AtHostTime(int64_t t) const;
};

// InvalidInput for a bad --step-range regex.
StatusOr<StepSet> DetectSteps(const TraceModel& model, const StepOptions& options);

// For every GPU op, the index of the step it was launched in (by its api
// call's start time), or -1 (no api row, launched outside every step).
std::vector<int32_t> OpSteps(const TraceModel& model, const StepSet& steps);

}  // namespace stepscope
