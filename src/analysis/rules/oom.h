// The `oom` rule: the process ran out of device memory. It leads the
// findings of `analyze` (and `memory`): what failed (the API, requested vs
// free bytes), the NVTX ranges open when it failed (including ranges the
// dying process never closed), the largest holders of the live set, and the
// changes that would have fit, each with its memory saving and its step-time
// cost. With the model known (`--model CONFIG --micro-batch N --seq-len N`)
// the savings come from the memory planner (plan/); without it, from the live
// set: what was allocated during the failing step (activations, temporaries)
// and what was there before it (parameters, gradients, optimizer state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/model_spec.h"
#include "plan/plan.h"

namespace stepscope {

class TraceModel;
struct Finding;
struct StepSet;

// The training configuration of the traced job, for the planner's fixes.
struct OomModel {
  plan::ModelSpec model;
  plan::PlanOptions options;
};

// One failed allocation, from the `oom` table or an allocation API call that
// returned out-of-memory.
struct OomRow {
  int64_t ts_ns = 0;
  uint32_t tid = 0;
  int32_t device = -1;
  std::string api;
  int64_t requested_bytes = -1;  // -1: unknown
  int64_t free_bytes = -1;
  int64_t total_bytes = -1;
  bool from_oom_table = false;  // false: only an API call's return code
};

// The failed allocations recorded in the trace at `m.path()` (empty for
// in-memory models or traces without them).
std::vector<OomRow> LoadOomRows(const TraceModel& m);

// The innermost NVTX range of `tid` covering `t`, counting ranges never
// closed (end -1) as open; kNone when none.
uint32_t InnermostRangeAt(const TraceModel& m, uint32_t tid, int64_t t);

// The oom finding for the last failed allocation with an `oom` row (else the
// last one): PyTorch's allocator frees its cache and retries after a failure,
// so the last failure is the one the process died of; the others are counted. `step_start_ns`:
// start of the step that failed
// (-1: unknown). `model`: nullptr without --model.
Finding OomFinding(const TraceModel& m, const std::vector<OomRow>& rows, int64_t step_start_ns,
                   int64_t step_number, const OomModel* model);

// The oom finding of a trace (none without failed allocations); the step that
// failed comes from `steps`, else from the outermost NVTX range open at the OOM.
std::vector<Finding> OomFindings(const TraceModel& m, const StepSet& steps, const OomModel* model);

}  // namespace stepscope
