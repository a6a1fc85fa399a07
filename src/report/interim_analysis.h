// Stand-ins for analysis results the report needs before the analysis library
// (src/analysis/) offers them. Each function names the analysis API that
// replaces it; report_sources.cc is the one place that switches. Keep these
// minimal: the definitions that matter live in the analysis library and
// docs/recipes.md.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "report/report_data.h"
#include "store/trace_reader.h"

namespace stepscope::interim {

// Steps = NVTX ranges named like "step 12", "ProfilerStep#12", "iteration 12"
// (outermost only), ordered by start. Replaced by the analysis step detector.
StatusOr<std::vector<StepRow>> DetectSteps(const TraceReader& reader, std::string* source);

// Fills each step's breakdown, and returns the breakdown over `window`
// ([start, end) absolute ns) when there are no steps. Communication kernels
// are the ones whose name contains "nccl" (any case). Replaced by the
// analysis per-step temporal breakdown.
StatusOr<Breakdown> FillBreakdowns(const TraceReader& reader, std::vector<StepRow>* steps,
                                   int64_t window_start, int64_t window_end);

// Top kernels by total GPU time. Replaced by the cuda_gpu_kern_sum recipe.
StatusOr<std::vector<KernelRow>> TopKernels(const TraceReader& reader, int limit);

}  // namespace stepscope::interim
