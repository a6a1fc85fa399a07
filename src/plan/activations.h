// What the forward pass keeps for the backward, per part of a transformer
// layer, in bytes per token of one micro-batch on one GPU (internal to plan/).
#pragma once

#include <string>
#include <vector>

#include "plan/model_spec.h"
#include "plan/plan.h"

namespace stepscope::plan {

// One saved tensor group: bytes per token (tokens = micro_batch * seq / cp).
struct ActTerm {
  std::string name;
  double bytes_per_token = 0;
  std::string detail;
};

// Byte widths of one precision setting.
struct Widths {
  double param = 2;   // parameter element
  double act = 2;     // activations computed by matmuls and elementwise ops
  double stream = 2;  // the residual stream between layers
  double mm_in = 2;   // a matmul input saved for the weight gradient
  bool amp = false;
};
Widths WidthsFor(Precision p);

// Terms of one layer without recompute (eager PyTorch or Megatron formulas).
std::vector<ActTerm> LayerTerms(const ModelSpec& m, const PlanOptions& o);
// Terms outside the layers that live until the backward: embedding dropout,
// rotary tables, final norm, the output head's input.
std::vector<ActTerm> ModelTerms(const ModelSpec& m, const PlanOptions& o, bool last_stage);
// Bytes per token of the layer input that full recompute keeps.
double CheckpointBytesPerToken(const ModelSpec& m, const PlanOptions& o);
// Gradient buffers alive while one layer runs its backward.
double LayerBackwardTransientPerToken(const ModelSpec& m, const PlanOptions& o);
// The loss's transient at the start of the backward, per token.
double LossTransientPerToken(const ModelSpec& m, const PlanOptions& o);

// LoRA adapter parameters of one layer; error names an unknown target module.
StatusOr<int64_t> LoraLayerParameters(const ModelSpec& m, const PlanOptions& o);

}  // namespace stepscope::plan
