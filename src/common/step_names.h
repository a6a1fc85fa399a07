// The one definition of a training step's NVTX range, shared by `steps` and
// the rules (analysis/model/steps.h), the memory view (analysis/memory), `roofline`
// step selection and the per-rank summaries (ranks/summarize.cc).
//
// A step is a push/pop (or start/end) range
//   * named "step N" (any case; the separators ' ', '_', '#', ':', '-' or
//     none: "step 3", "Step_3", "step#3", "step3"; spaces around the name are
//     ignored), else, when the trace has none of those, "ProfilerStep#N"
//     (torch.profiler), else "iteration N": the ranges `stepscope profile`
//     puts between two calls of the program's optimizer step, with no code
//     change (python/stepscope/_iteration_ranges.py: iteration N ends when
//     optimizer.step() returns for the N-th time); N is 1 to 18 decimal digits;
//   * on the host: ranges of the GPU-side domain `gpu_user_annotation` (Kineto
//     copies each ProfilerStep#N onto the GPU timeline) are never steps;
//   * of positive length (zero-length ranges are not steps);
//   * on the thread with the most step ranges (ties: the earliest);
//   * not starting inside a step already taken: nested and overlapping
//     ranges keep the outermost/earliest one.
// Every range left out is counted by reason (StepRangeDrops). The
// kernel-sequence fallback, for traces without step ranges, needs the GPU
// timeline and lives in analysis/model/steps.cc.
//
// The matcher is hand-written and linear: NVTX names are untrusted input and
// a recursive regex overflows the stack on a name of 50,000 digits.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stepscope {

// In order of precedence: a trace's ranges of the first kind it has are its steps.
enum class StepNameKind : uint8_t { kNone = 0, kStep = 1, kProfilerStep = 2, kIteration = 3 };
inline constexpr int kStepNameKinds = 4;

// The kind of step name and its number; kNone when `name` is not one.
StepNameKind ParseStepName(std::string_view name, int64_t* number);
// "step N" / "ProfilerStep#N" / "iteration N" / "".
const char* StepNamePattern(StepNameKind kind);
// The name of the N-th iteration range (what the profile hook emits).
inline constexpr std::string_view kIterationPrefix = "iteration ";
// The NVTX mark in which the iteration hook hands over the durations of the
// warm-up iterations it timed before a `--steps` window (analysis/whatif/untraced.h).
inline constexpr std::string_view kUntracedStepsMark = "stepscope.untraced_steps_ns ";
// The NVTX range `stepscope profile --loader-ranges on` (the default) puts around each
// batch a PyTorch DataLoader hands the program (python/stepscope/_loader_ranges.py);
// the rule data_loading and the ranks verdict read it.
inline constexpr std::string_view kLoaderRangeName = "DataLoader.__next__";
// The NVTX mark the iteration hook puts in the trace (at the first optimizer step's
// return, and again when a `--steps` window opens) when those DataLoader ranges are
// installed: a trace with it and without one DataLoader range comes from a program
// that took no batch from a torch DataLoader (the rule data_loading).
inline constexpr std::string_view kLoaderRangesOnMark = "stepscope.loader_ranges on";

// The NVTX domain of Kineto's GPU-side copies of host annotations.
inline constexpr std::string_view kGpuSideDomain = "gpu_user_annotation";

struct StepRangeDrops {
  int64_t gpu_side = 0;      // step names in the GPU-side domain
  int64_t zero_length = 0;   // end <= start
  int64_t other_kind = 0;    // a kind of lower precedence than the one taken
  int64_t other_thread = 0;  // not on the steps' thread
  int64_t overlapping = 0;   // nested in or overlapping a step already taken
  int64_t total() const { return gpu_side + zero_length + other_kind + other_thread + overlapping; }
};

struct NvtxStepRange {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // for an open range: the caller's end (e.g. the trace end)
  bool open = false;   // never closed (a cut-off trace)
  uint32_t tid = 0;
  int64_t number = -1;
  uint32_t index = 0;  // the caller's index of the range (e.g. its nvtx row)
};

// Feed every push/pop range; Finish() applies the definition above.
class StepRangeFinder {
 public:
  // Name-based detection. Marks are the caller's to skip.
  void Add(std::string_view name, std::string_view domain, const NvtxStepRange& r);
  // A range the caller matched itself (`--step-range REGEX`): the same
  // domain, length, thread and nesting rules apply; number -1 when none.
  void AddMatched(std::string_view domain, const NvtxStepRange& r);
  // The steps sorted by start.
  std::vector<NvtxStepRange> Finish(StepNameKind* kind, StepRangeDrops* drops);

 private:
  std::vector<NvtxStepRange> by_kind_[kStepNameKinds];
  StepRangeDrops drops_;
};

}  // namespace stepscope
