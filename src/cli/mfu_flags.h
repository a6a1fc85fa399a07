// MFU inputs from the command line, shared by `mfu`, `analyze` (its MFU line)
// and `steps` (its MFU column): the model's FLOPs from the planner's flags
// (plan_flags.h, plan/flops.h), this machine's bench results for the peak,
// and the roofline rows stored in the trace. Header-only so that every
// cmd_*.cc stays a single file.
#pragma once

#include <string>

#include "analysis/mfu.h"
#include "cli/analysis_flags.h"
#include "cli/plan_flags.h"
#include "plan/flops.h"
#include "roofline/mfu_counters.h"

namespace stepscope {

// The model part of MfuOptions from --model and the training flags (the
// caller checks p.Has("--model") first).
inline Status ParseMfuModel(const ArgParser& p, MfuOptions* o) {
  plan::ModelSpec model;
  plan::PlanOptions po;
  RETURN_IF_ERROR(ParsePlanFlags(p, &model, &po));
  ASSIGN_OR_RETURN(plan::StepFlops f, plan::ComputeStepFlops(model, po));
  o->has_model = true;
  o->dtype = plan::PrecisionName(po.precision);
  o->model.total = f.total();
  o->model.gemm = f.layer_matmul + f.head + f.adapters;
  o->model.attention = f.attention;
  const int64_t mb = plan::MicrobatchesPerStep(po);
  o->model.what =
      model.model_type + " " + std::to_string(model.layers) + "x" + std::to_string(model.hidden) +
      ", " + std::to_string(po.micro_batch) + " x " + std::to_string(po.seq_len) + " tokens" +
      (mb > 1 ? " x " + std::to_string(mb) + " micro-batches" : std::string()) +
      (f.model_parallel > 1 ? " / " + std::to_string(f.model_parallel) + " GPUs" : std::string()) +
      ", " + plan::PrecisionName(po.precision) + "; " + f.passes;
  return OkStatus();
}

// The per-trace parts: bench results (peak) and the stored roofline rows.
inline void ApplyMfuTrace(const ArgParser& p, const TraceModel& m, MfuOptions* o) {
  AnalyzeOptions a;
  ApplyCeilings(p, m, &a);
  o->bench = std::move(a.bench);
  o->measured = MeasuredKernelsOf(
      m.path(), p.Has("--ceilings") ? p.Get("--ceilings") : DefaultCeilingsPath());
}

}  // namespace stepscope
