// Model FLOPs of one training step from a model spec: the numerator of MFU
// (model FLOPs utilization, `stepscope mfu`, docs/flops.md).
//
// The count is the one of Narayanan et al. 2021 ("Efficient Large-Scale
// Language Model Training on GPU Clusters Using Megatron-LM", SC'21, section
// 5.1, eq. 3): only the matrix multiplications, the backward pass twice the
// forward, the forward counted again when activations are recomputed:
//
//   F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))     (with full recompute)
//
// for batch B, sequence s, l layers, hidden h, vocabulary V, a plain MLP of
// 4h and h = heads * head_dim. Written per part so that it also holds for the
// layers ModelSpec describes (grouped-query attention, gated MLPs of any
// width, mixtures of experts), with the planner's own parameter counts
// (model_spec.h), per token:
//   layer matmuls   2 * P_layer          (P_layer: the matmul weights a token
//                                          passes through: attention + the
//                                          experts it is routed to + router)
//   attention       4 * s * heads * head_dim  (Q K^T and scores x V; causal
//                                          masking not subtracted, as Megatron)
//   output head     2 * h * V
// times the passes: forward 1, backward 2 (input gradient 1 + weight gradient
// 1), recompute +1 forward for the layers (full) or for the attention core
// only (selective, Korthikanti et al. 2022); the head is never recomputed.
// Weights frozen under LoRA have no weight gradient: their backward is 1; the
// adapters count 6 FLOPs per parameter per token. With the eq.'s assumptions
// (4h MLP, no GQA, dense) the sum is eq. 3 exactly (flops_test).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "plan/model_spec.h"
#include "plan/plan.h"

namespace stepscope::plan {

struct StepFlops {
  double tokens = 0;             // per GPU per step: micro-batch x seq x micro-batches
  double layer_matmul = 0;       // FLOPs of the layers' GEMMs (all passes)
  double attention = 0;          // FLOPs of the attention core (scores, scores x V)
  double head = 0;               // FLOPs of the output head (logits)
  double adapters = 0;           // LoRA adapters
  double per_token_forward = 0;  // forward FLOPs per token (all parts)
  double total() const { return layer_matmul + attention + head + adapters; }
  // Model parallel: the step's FLOPs are split over tp * pp * cp GPUs.
  int model_parallel = 1;
  // "train: fwd x1 + bwd x2 + recompute x1 (full)" style, for the output.
  std::string passes;
};

// FLOPs one GPU does per training step (the whole step: every micro-batch of
// a gradient-accumulating or pipelined step). Needs micro_batch and seq_len.
StatusOr<StepFlops> ComputeStepFlops(const ModelSpec& m, const PlanOptions& o);

// Micro-batches per step as the plan counts them: --microbatches, else one
// per pipeline stage.
int64_t MicrobatchesPerStep(const PlanOptions& o);

}  // namespace stepscope::plan
