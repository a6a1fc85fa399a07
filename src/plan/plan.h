// The memory plan of one training step: what a decoder-only transformer keeps
// on each GPU, part by part, before the job runs (`stepscope plan`), and what
// a change of settings would save (`analyze`'s oom finding).
//
// The model, in one paragraph. The step's peak is the larger of two moments:
// the start of the backward pass (parameters, optimizer state, every tensor
// the forward saved for the backward, and the loss's transient: fp32
// log-probabilities, their gradient and the logits' gradient, 12 bytes per
// token per vocabulary entry), and the optimizer step (parameters, gradients,
// optimizer state and the optimizer's temporaries). What the forward saves is
// counted per tensor from how the layer is written (docs/plan.md lists every
// term): for PyTorch eager code (Hugging Face modules, train_gpt.py) and
// calibrated against torch.cuda.max_memory_allocated (docs/PERFORMANCE.md),
// or by the formulas of Korthikanti et al. 2022 for Megatron-LM. Constant
// terms (library workspace, allocator slack, CUDA context) are stated as such.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "plan/model_spec.h"

namespace stepscope::plan {

// fp32/bf16/fp16: parameters and activations in that type. amp-bf16/amp-fp16:
// fp32 parameters under torch.autocast. fp8: bf16 parameters, fp8 matmul inputs (Transformer
// Engine).
enum class Precision { kFp32, kBf16, kFp16, kAmpBf16, kAmpFp16, kFp8 };
// adamw: torch.optim.AdamW default (foreach, one state-sized temporary);
// adamw-fused: fused=True, Apex/TE FusedAdam (no temporary); sgd: with momentum.
enum class Optimizer { kAdamW, kAdamWFused, kSgd };
// selective: the attention core (softmax, its dropout) is recomputed (Megatron);
// full: only each layer's input is kept and the layer is recomputed in the backward.
enum class Recompute { kNone, kSelective, kFull };

struct PlanOptions {
  int64_t micro_batch = 0;
  int64_t seq_len = 0;
  Precision precision = Precision::kBf16;
  bool master_weights = false;  // fp32 master copy and fp32 gradients (Megatron mixed precision)
  Optimizer optimizer = Optimizer::kAdamW;
  int zero = 0;  // ZeRO stage 0..3; Megatron's distributed optimizer is stage 1
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1;
  int64_t microbatches = 0;  // per step (gradient accumulation); 0: as many as pipeline stages
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool offload_activations = false;
  bool offload_optimizer = false;
  int64_t lora_rank = 0;
  std::vector<std::string>
      lora_targets;  // module names: q_proj, k_proj, v_proj, o_proj, gate_proj, ...
  bool cuda_graphs = false;
  double gpu_mem_gib = 0;  // 0: not given
};

// One line of the breakdown. `at_peak`: counted in the predicted peak (the
// other moment's parts are shown for the record).
struct PlanPart {
  std::string group;  // "model state", "activations", "loss", "transient", "overhead"
  std::string name;
  int64_t bytes = 0;
  std::string detail;
  bool at_peak = true;
};

struct Plan {
  ModelSpec model;
  PlanOptions options;
  int64_t parameters = 0;            // whole model
  int64_t trainable_parameters = 0;  // whole model
  std::string stage;                 // pipeline stage the numbers are for ("" without PP)
  std::vector<PlanPart> parts;
  std::string peak_moment;      // "backward start" or "optimizer step"
  int64_t peak_allocated = 0;   // predicted torch.cuda.max_memory_allocated per GPU
  int64_t allocator_slack = 0;  // reserved - allocated (caching allocator rounding, fragmentation)
  int64_t cuda_context = 0;     // CUDA context and kernels, outside the allocator
  int64_t total_bytes = 0;      // peak_allocated + allocator_slack + cuda_context
  std::vector<std::string> warnings;
};

StatusOr<Plan> ComputePlan(const ModelSpec& model, const PlanOptions& options);

// Checks options against the model (heads divisible by TP, layers by PP, ...):
// one line naming the flag and the field.
Status ValidatePlanOptions(const ModelSpec& model, const PlanOptions& options);

// Korthikanti et al. 2022, Table 2: activation bytes of one transformer layer
// (16-bit activations, dropout, no flash attention) for sequence s, micro-batch
// b, hidden h, heads a, tensor parallel t.
double MegatronLayerActivationBytes(double s, double b, double h, double a, double t,
                                    bool sequence_parallel, Recompute recompute);

const char* PrecisionName(Precision p);
const char* OptimizerName(Optimizer o);
const char* RecomputeName(Recompute r);
bool ParsePrecision(const std::string& s, Precision* out);
bool ParseOptimizer(const std::string& s, Optimizer* out);
bool ParseRecompute(const std::string& s, Recompute* out);

// The constant terms, documented in docs/plan.md.
inline constexpr int64_t kCudaContextBytes = 512ll << 20;

}  // namespace stepscope::plan
