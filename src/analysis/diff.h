// Comparing two traces of the same program ("verify the optimization"): the
// step-time speedup, what changed per kernel and per NVTX range, and the new
// top-5 kernels. Library API for `stepscope diff` and the HTML report.
//
// Both traces are reduced to "per step" numbers: the GPU ops launched inside
// steady steps (complete, not warm-up: steps.h) and the NVTX ranges that start
// inside them, divided by the number of those steps, so traces with different step counts
// compare. Without steps in either trace the whole trace is one "step" and
// the step time is the GPU span (first op start to last op end; the trace span
// when there is no GPU activity).
#pragma once

#include <string>

#include "analysis/model/steps.h"
#include "analysis/model/trace_model.h"
#include "common/status.h"
#include "common/table.h"

namespace stepscope {

struct DiffOptions {
  StepOptions steps;
  int limit = 20;                 // rows per change table; 0: all
  double same_pct = 5.0;          // |change| below this is "same"
  TimeUnit unit = TimeUnit::kNs;  // of the summary's time rows (--timeunit in text)
};

struct TraceDiff {
  std::string basis;  // "median step" or "GPU span"
  double before_ns = 0;
  double after_ns = 0;
  double speedup = 0;  // before / after (> 1: after is faster); 0 when unknown
  Table summary;       // metric, unit, before, after, delta, change_pct
  Table kernels;       // per kernel name
  Table nvtx;          // per NVTX range name
  Table top5;          // the after trace's top-5 kernels and their rank before
};

StatusOr<TraceDiff> DiffTraces(const TraceModel& before, const TraceModel& after,
                               const DiffOptions& options);

}  // namespace stepscope
