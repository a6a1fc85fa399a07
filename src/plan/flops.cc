#include "plan/flops.h"

#include "plan/activations.h"

namespace stepscope::plan {
namespace {

// Matmul weights one token passes through in one layer: the planner's count,
// with a mixture of experts' unrouted experts taken out (the router stays).
double ActiveLayerMatmulParameters(const ModelSpec& m) {
  const double all = static_cast<double>(LayerMatmulParameterCount(m));
  if (m.experts <= 0) return all;
  ModelSpec one = m;
  one.experts = 0;
  ModelSpec none = one;
  none.ffn = 0;
  const double expert = static_cast<double>(LayerMatmulParameterCount(one)) -
                        static_cast<double>(LayerMatmulParameterCount(none));
  const int64_t routed = m.experts_per_token > 0 ? m.experts_per_token : 1;
  return all - static_cast<double>(m.experts - routed) * expert;
}

}  // namespace

int64_t MicrobatchesPerStep(const PlanOptions& o) {
  return o.microbatches > 0 ? o.microbatches : o.pp;
}

StatusOr<StepFlops> ComputeStepFlops(const ModelSpec& m, const PlanOptions& o) {
  RETURN_IF_ERROR(ValidateModelSpec(m));
  if (o.micro_batch <= 0 || o.seq_len <= 0) {
    return InvalidInput("model FLOPs need --micro-batch and --seq-len");
  }
  StepFlops f;
  const double s = static_cast<double>(o.seq_len);
  const double layers = static_cast<double>(m.layers);
  f.tokens = static_cast<double>(o.micro_batch) * s * static_cast<double>(MicrobatchesPerStep(o));
  // Forward FLOPs per token, by part.
  const double mm = 2.0 * layers * ActiveLayerMatmulParameters(m);
  const double att = 4.0 * s * static_cast<double>(m.heads * m.head_dim) * layers;
  const double head = 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
  f.per_token_forward = mm + att + head;
  const bool lora = o.lora_rank > 0;
  const bool full = o.recompute == Recompute::kFull;
  const bool selective = o.recompute == Recompute::kSelective;
  // Passes: forward 1 + input gradient 1 + weight gradient 1 (none for frozen
  // weights) + the recomputed forward.
  const double mm_passes = 2.0 + (lora ? 0.0 : 1.0) + (full ? 1.0 : 0.0);
  const double att_passes = 3.0 + (full || selective ? 1.0 : 0.0);
  const double head_passes = 2.0 + (lora ? 0.0 : 1.0);
  f.layer_matmul = f.tokens * mm * mm_passes;
  f.attention = f.tokens * att * att_passes;
  f.head = f.tokens * head * head_passes;
  if (lora) {
    ASSIGN_OR_RETURN(int64_t adapter, LoraLayerParameters(m, o));
    f.adapters = f.tokens * 2.0 * layers * static_cast<double>(adapter) * (3.0 + (full ? 1 : 0));
  }
  f.model_parallel = o.tp * o.pp * o.cp;
  if (f.model_parallel > 1) {
    const double k = 1.0 / f.model_parallel;
    f.layer_matmul *= k, f.attention *= k, f.head *= k, f.adapters *= k;
  }
  f.passes = std::string("forward x1, backward x") +
             (lora ? "1 (frozen weights: no weight "
                     "gradient; LoRA adapters x2)"
                   : "2") +
             (full        ? ", recompute x1 (full)"
              : selective ? ", attention core recomputed (selective)"
                          : "");
  return f;
}

}  // namespace stepscope::plan
