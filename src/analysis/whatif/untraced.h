// The program's own step time with the tracer not recording, measured in the
// traced run itself (issue 32): with `stepscope profile --steps N`, the
// iteration hook (python/stepscope/_iteration_ranges.py) times the warm-up
// iterations before the recording window — CUPTI attached, nothing recorded —
// and, when the window opens, puts their durations into one NVTX mark,
// "stepscope.untraced_steps_ns D1,D2,..." (common/step_names.h). `analyze` and
// `whatif` show it; with `--untraced-step-ms measured` the what-if engine prices
// at that host speed. Not by default: on the lent H100 and H200 (docs/
// PERFORMANCE.md "Run 4") the warm-up iterations were often still converging,
// and the prices moved closer to the realized savings on one kind, not the other.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stepscope {

class TraceModel;

// AnalyzeOptions::untraced_step_ns: take the trace's own measurement.
inline constexpr int64_t kUntracedMeasured = -1;

struct UntracedSteps {
  int64_t median_ns = 0;      // over the iterations used
  int steps = 0;              // how many
  double max_over_min = 1.0;  // their spread
  // Steady enough to stand for the traced steps. A GPU-bound loop without syncs
  // lets the host run ahead of the GPU until the queue fills, so its first
  // optimizer steps return early, then late: host intervals of 17.7, 88.7, 17.0
  // and 17.9 ms for a 53.6 ms step (external suite gpt2_fp32, H200), 5.2x apart;
  // the steady loops of the same run stayed within 1.02-1.31x.
  static constexpr double kMaxSpread = 1.5;
  bool steady() const { return max_over_min <= kMaxSpread; }
  // What the pricing may scale the host to (--untraced-step-ms measured): steady,
  // and shorter than the traced step (else the tracer's cost is not what it shows).
  bool UsableFor(int64_t traced_step_ns) const { return steady() && median_ns < traced_step_ns; }
};

// The durations of one mark's text (after the prefix): 1 to 64 comma-separated
// positive decimal integers of nanoseconds, nothing else; nullopt otherwise.
// The first is left out when there are 3 or more (the iteration after the first
// optimizer step still warms caches, allocators and autotuners); the median of
// the rest (common/stats.h MedianNs).
std::optional<UntracedSteps> ParseUntracedSteps(std::string_view durations);

// The first such mark of the trace, parsed; nullopt when it has none.
std::optional<UntracedSteps> MeasuredUntracedSteps(const TraceModel& m);

}  // namespace stepscope
