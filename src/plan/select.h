// Configuration selection: which settings fit a GPU, ranked by the expected
// step time, and Megatron-LM's best-practice checks as warnings.
//
// The step-time costs are documented estimates (docs/plan.md), not
// measurements of this model: full recompute reruns the forward (+33%),
// selective recompute the attention core (+3%), a halved micro-batch with
// twice the gradient accumulation loses kernel efficiency (+4% per halving),
// tensor parallelism adds communication (+6% per doubling inside a node),
// ZeRO-3 gathers parameters (+15%), offloading activations (+20%) or the
// optimizer (+40%) moves data over PCIe, pipeline stages add the bubble
// (stages - 1) / micro-batches.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace stepscope::plan {

struct Candidate {
  PlanOptions options;
  int64_t peak_allocated = 0;
  int64_t total_bytes = 0;
  double relative_time = 1;  // estimated step time relative to the given settings
  std::string changes;       // "micro-batch 4 -> 2, recompute full"
};

// Settings derived from `base` (micro-batch halvings, recompute, ZeRO stage,
// tensor parallelism, offload) whose total fits `capacity_bytes`, fastest
// first; at most `limit`. `base` itself is included when it fits.
std::vector<Candidate> FittingCandidates(const ModelSpec& m, const PlanOptions& base,
                                         int64_t capacity_bytes, size_t limit);

// Relative step-time estimate of `o` against `base` (1.0 = same).
double RelativeStepTime(const ModelSpec& m, const PlanOptions& base, const PlanOptions& o);
// "micro-batch 4 -> 2, recompute none -> full"; "" when nothing changed.
std::string DescribeChanges(const PlanOptions& base, const PlanOptions& o);

// Megatron-LM best practice: TP within a node, PP smaller than TP or DP,
// context parallelism from 4k tokens, virtual stages dividing the layers,
// CUDA graphs captured after warm-up iterations.
std::vector<std::string> BestPracticeWarnings(const ModelSpec& m, const PlanOptions& o,
                                              const Plan& plan);

}  // namespace stepscope::plan
