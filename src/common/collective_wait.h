// The wait inside collectives that counts as waiting for a straggler: one
// definition for `stepscope ranks` (a step's caused wait, src/ranks/verdict.cc)
// and the single-rank rule collective_wait (src/analysis/rules/collective_wait.cc).
#pragma once

#include <algorithm>
#include <cstdint>

namespace stepscope {

inline constexpr int64_t kMinWaitFloorNs = 500000;
// 10%: on two H200s running the reference workload's DDP with no slow rank,
// one rank systematically arrived last by ~1.3 ms per 15.8 ms step (8%):
// that is jitter, not a straggler (docs/ranks.md).
inline constexpr double kMinWaitStepFraction = 0.10;

// A step's wait in collectives is a straggler's when it reaches the larger of
// 0.5 ms and 10% of the median step.
inline int64_t MinStragglerWaitNs(double median_step_ns) {
  return std::max<int64_t>(kMinWaitFloorNs,
                           static_cast<int64_t>(median_step_ns * kMinWaitStepFraction));
}

}  // namespace stepscope
