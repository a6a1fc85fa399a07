#include "plan/plan.h"

#include <algorithm>
#include <cmath>

#include "common/strings.h"
#include "plan/activations.h"

namespace stepscope::plan {
namespace {

// What stays allocated between steps beside parameters and optimizer state:
// the cuBLAS/cuBLASLt workspaces PyTorch allocates through its caching
// allocator (one per handle and stream; the forward's main thread and the
// backward's autograd thread use different handles, 32 MiB each on Hopper)
// and small buffers. Measured 72-145 MiB, median 79 MiB, on an H200 across the
// calibration's Hugging Face runs (docs/PERFORMANCE.md); one constant.
constexpr int64_t kWorkspaceBytes = 80ll << 20;
// The caching allocator's reserved memory above the allocated peak (block
// rounding and fragmentation), as a fraction of the peak (docs/plan.md).
constexpr double kAllocatorSlack = 0.05;

int64_t Round(double v) { return static_cast<int64_t>(std::llround(std::max(v, 0.0))); }

std::string Num(int64_t v) { return FormatCount(v); }

// Model state on one GPU of one pipeline stage.
struct StageState {
  double params = 0;     // parameters held by this GPU (before ZeRO-3 sharding)
  double trainable = 0;  // trainable parameters among them
  double matmul = 0;     // matmul weights (autocast copies)
  double layer_params = 0;
  double tied_head = 0;  // head parameters that share the embedding (gradient transient)
};

StageState StageParameters(const ModelSpec& m, const PlanOptions& o, bool first, bool last,
                           int64_t lora_layer) {
  StageState s;
  double layers = static_cast<double>(m.layers) / o.pp;
  double layer_matmul = static_cast<double>(LayerMatmulParameterCount(m));
  double expert_matmul = 0;
  if (m.experts > 0) {
    int64_t one = (m.kind == LayerKind::kLlama ? 3 : 2) * m.hidden * m.ffn;
    expert_matmul = static_cast<double>(one) * m.experts;
    layer_matmul -= expert_matmul;
  }
  double layer_rest = static_cast<double>(LayerParameterCount(m)) - layer_matmul - expert_matmul;
  double per_layer = layer_matmul / o.tp + expert_matmul / (o.tp * o.ep) + layer_rest;
  s.layer_params = per_layer;
  s.params = layers * per_layer;
  s.matmul = layers * (layer_matmul / o.tp + expert_matmul / (o.tp * o.ep));
  double vocab_h = static_cast<double>(m.vocab) * m.hidden / o.tp;
  if (first) s.params += vocab_h + static_cast<double>(m.max_positions) * m.hidden;
  if (last) {
    s.params += m.kind == LayerKind::kLlama ? m.hidden : 2.0 * m.hidden;
    if (!m.tied_embeddings) s.params += vocab_h;
    if (m.tied_embeddings && !first) s.params += vocab_h;  // the head's copy of the embedding
    s.matmul += vocab_h;
    if (m.tied_embeddings) s.tied_head = vocab_h;
  }
  s.trainable = o.lora_rank > 0 ? layers * lora_layer : s.params;
  return s;
}

void Add(Plan* p, const char* group, std::string name, double bytes, std::string detail,
         bool at_peak) {
  p->parts.push_back({group, std::move(name), Round(bytes), std::move(detail), at_peak});
}

// Fills p->parts for one stage and returns the predicted allocated peak.
int64_t BuildStage(const ModelSpec& m, const PlanOptions& o, bool first, bool last,
                   int64_t lora_layer, Plan* p) {
  Widths w = WidthsFor(o.precision);
  StageState st = StageParameters(m, o, first, last, lora_layer);
  bool lora = o.lora_rank > 0;
  double dp = std::max(o.dp, 1);
  double zero_opt = o.zero >= 1 ? dp : 1, zero_grad = o.zero >= 2 ? dp : 1;
  double zero_param = o.zero >= 3 ? dp : 1;

  // Model state.
  double base = lora ? st.params : st.params;
  double param_bytes = base * w.param / zero_param + (lora ? st.trainable * 4 : 0) / zero_param;
  double grad_width = lora ? 4 : (o.master_weights ? 4 : w.param);
  double grads = st.trainable * grad_width / zero_grad;
  bool master = o.master_weights && !lora && w.param < 4;
  double state_width = (master || lora) ? 4 : w.param;
  double states = o.optimizer == Optimizer::kSgd ? 1 : 2;
  double opt_bytes = o.offload_optimizer ? 0 : states * st.trainable * state_width / zero_opt;
  double master_bytes = master && !o.offload_optimizer ? st.trainable * 4 / zero_opt : 0;
  double opt_temp = o.optimizer == Optimizer::kAdamW && !o.offload_optimizer
                        ? st.trainable * state_width / zero_opt
                        : 0;
  double copies = w.amp ? 2 * st.matmul : 0;
  double gather = o.zero >= 3 ? 2 * st.layer_params * w.param : 0;
  double tied_temp = (!lora && st.tied_head > 0) ? st.tied_head * grad_width : 0;

  // Activations.
  double tokens = static_cast<double>(o.micro_batch) * o.seq_len / o.cp;
  double layers = static_cast<double>(m.layers) / o.pp;
  int64_t mb = o.microbatches > 0 ? o.microbatches : o.pp;
  double in_flight = first ? std::min<double>(o.pp, static_cast<double>(mb)) : 1;
  if (o.vpp > 1 && o.pp > 1) in_flight *= 1.0 + (o.pp - 1.0) / (o.pp * o.vpp);
  std::vector<ActTerm> layer = LayerTerms(m, o);
  double layer_bytes = 0;
  for (const ActTerm& t : layer) layer_bytes += t.bytes_per_token * tokens;
  double kept_layers = layers * in_flight;
  double act_total = 0, recompute_temp = 0;
  std::string factor = FormatFixed(kept_layers, kept_layers == std::floor(kept_layers) ? 0 : 2);
  if (o.offload_activations) {
    Add(p, "activations", "layers (offloaded to host)", 0,
        "activations of " + factor + " layers in host memory", true);
    recompute_temp = layer_bytes;
  } else if (o.recompute == Recompute::kFull) {
    double ckpt = CheckpointBytesPerToken(m, o) * tokens * kept_layers;
    Add(p, "activations", "layer inputs (full recompute)", ckpt, factor + " layers x input", true);
    act_total += ckpt;
    recompute_temp = layer_bytes;
  } else {
    for (const ActTerm& t : layer) {
      double b = t.bytes_per_token * tokens * kept_layers;
      Add(p, "activations", t.name, b, factor + " layers; " + t.detail, true);
      act_total += b;
    }
  }
  for (const ActTerm& t : ModelTerms(m, o, last)) {
    double b = t.bytes_per_token * tokens * (first ? in_flight : 1);
    Add(p, "activations", t.name, b, t.detail, true);
    act_total += b;
  }
  double loss = last ? LossTransientPerToken(m, o) * tokens : 0;
  // The forward's end: the fp32 logits and the log-probabilities (the backward
  // adds a third buffer), and every autocast weight copy, still in autocast's cache.
  double loss_fwd = last && m.impl == Implementation::kEager ? loss * 8 / 12 : 0;
  double layer_bwd = LayerBackwardTransientPerToken(m, o) * tokens + recompute_temp;
  double start_temp = std::max(loss, layer_bwd);
  // Weight copies made inside recomputed layers, or offloaded with the other saved
  // tensors, are gone when autocast exits: only the head's copy reaches the backward.
  double copies_kept = copies;
  if (copies > 0 && (o.recompute == Recompute::kFull || o.offload_activations)) {
    copies_kept = last ? 2.0 * m.vocab * m.hidden / o.tp : 0;
  }

  double state = param_bytes + master_bytes + opt_bytes + gather;
  double at_fwd = state + copies + act_total + loss_fwd;
  double at_start = state + copies_kept + act_total + start_temp;
  double at_step = state + grads + opt_temp + tied_temp;
  enum { kFwd, kStart, kStep } moment = kStart;
  double peak = at_start;
  if (at_fwd > peak) moment = kFwd, peak = at_fwd;
  if (at_step > peak) moment = kStep, peak = at_step;
  static const char* kMoments[] = {"forward end", "backward start", "optimizer step"};
  p->peak_moment = kMoments[moment];

  std::string pdetail = Num(Round(base)) + " x " + FormatFixed(w.param, 0) + " B";
  if (lora) pdetail += " + " + Num(Round(st.trainable)) + " LoRA x 4 B";
  if (zero_param > 1) pdetail += ", ZeRO-3 / " + Num(o.dp);
  Add(p, "model state", "parameters", param_bytes, pdetail, true);
  if (master_bytes > 0) {
    Add(p, "model state", "master weights", master_bytes, "fp32 copy of the trainable", true);
  }
  Add(p, "model state", "gradients", grads,
      Num(Round(st.trainable)) + " x " + FormatFixed(grad_width, 0) + " B" +
          (zero_grad > 1 ? ", ZeRO / " + Num(o.dp) : ""),
      moment == kStep);
  Add(p, "model state", "optimizer state", opt_bytes,
      std::string(OptimizerName(o.optimizer)) + ": " + FormatFixed(states, 0) + " x " +
          FormatFixed(state_width, 0) + " B per trainable parameter" +
          (o.offload_optimizer ? " (offloaded)" : "") +
          (zero_opt > 1 ? ", sharded / " + Num(o.dp) : ""),
      true);
  if (copies_kept > 0) {
    Add(p, "model state", "autocast weight copies", copies_kept,
        "16-bit copies of matmul weights kept for the backward", moment != kStep);
  }
  if (copies > copies_kept) {
    Add(p, "model state", "autocast weight copies (forward)", copies - copies_kept,
        "in autocast's cache until the forward ends", moment == kFwd);
  }
  if (gather > 0) {
    Add(p, "transient", "ZeRO-3 gathered layer", gather, "prefetch of 2 layers", true);
  }
  // Model state first, for reading order.
  std::stable_partition(p->parts.begin(), p->parts.end(),
                        [](const PlanPart& x) { return x.group == "model state"; });
  if (moment == kStep) {
    for (PlanPart& part : p->parts) {
      if (part.group == "activations") part.at_peak = false;
    }
  }
  if (loss > 0) {
    bool fwd = moment == kFwd;
    Add(p, "loss", "logits and loss", fwd ? loss_fwd : loss,
        m.impl == Implementation::kMegatron ? "fp32 logits (4sbv/t)"
        : fwd                               ? "fp32 logits and log-probs (forward)"
                                            : "fp32 log-probs, their gradient, logits gradient",
        fwd || (moment == kStart && loss >= layer_bwd));
  }
  Add(p, "transient",
      o.recompute == Recompute::kFull ? "layer backward (recomputed layer)" : "layer backward",
      layer_bwd, "gradient buffers of one layer", moment == kStart && layer_bwd > loss);
  if (opt_temp > 0) {
    Add(p, "transient", "optimizer step", opt_temp, "foreach AdamW's sqrt(v) temporary",
        moment == kStep);
  }
  if (tied_temp > 0) {
    Add(p, "transient", "tied embedding gradient", tied_temp, "head + embedding gradients summed",
        moment == kStep);
  }
  Add(p, "overhead", "library workspace", kWorkspaceBytes,
      "cuBLAS/cuBLASLt workspaces and buffers (measured)", true);
  return Round(peak) + kWorkspaceBytes;
}

}  // namespace

Status ValidatePlanOptions(const ModelSpec& m, const PlanOptions& o) {
  auto bad = [](const std::string& s) { return InvalidInput(s); };
  if (o.micro_batch <= 0) return bad("--micro-batch: expected a positive number, e.g. 4");
  if (o.seq_len <= 0) return bad("--seq-len: expected a positive number, e.g. 2048");
  if (o.micro_batch > (1 << 20) || o.seq_len > (1 << 24) || o.lora_rank > (1 << 16) ||
      o.microbatches > (1 << 20)) {
    return bad("--micro-batch, --seq-len, --lora-rank or --microbatches: too large");
  }
  for (auto [name, v] : {std::pair{"--tp", o.tp},
                         {"--pp", o.pp},
                         {"--dp", o.dp},
                         {"--cp", o.cp},
                         {"--ep", o.ep},
                         {"--vpp", o.vpp}}) {
    if (v < 1 || v > 65536) return bad(std::string(name) + ": expected a number >= 1");
  }
  if (o.zero < 0 || o.zero > 3) return bad("--zero: expected 0, 1, 2 or 3");
  std::string where = m.source + ": ";
  if (m.heads % o.tp != 0) {
    return bad(where + "num_attention_heads (" + Num(m.heads) + ") is not divisible by --tp " +
               Num(o.tp));
  }
  if (m.kv_heads % o.tp != 0 && o.tp % m.kv_heads != 0) {
    return bad(where + "num_key_value_heads (" + Num(m.kv_heads) + ") and --tp " + Num(o.tp) +
               " do not divide each other");
  }
  if (m.layers % o.pp != 0) {
    return bad(where + "num_hidden_layers (" + Num(m.layers) + ") is not divisible by --pp " +
               Num(o.pp));
  }
  if (o.vpp > 1 && (m.layers / o.pp) % o.vpp != 0) {
    return bad(where + "layers per pipeline stage (" + Num(m.layers / o.pp) +
               ") are not divisible by --vpp " + Num(o.vpp));
  }
  if (m.experts > 0 && m.experts % o.ep != 0) {
    return bad(where + "num_local_experts (" + Num(m.experts) + ") is not divisible by --ep " +
               Num(o.ep));
  }
  if (m.experts == 0 && o.ep > 1) return bad("--ep " + Num(o.ep) + ": the model has no experts");
  if (o.seq_len % o.cp != 0) {
    return bad("--seq-len " + Num(o.seq_len) + " is not divisible by --cp " + Num(o.cp));
  }
  if (o.lora_rank < 0) return bad("--lora-rank: expected a number >= 0");
  if (o.lora_rank > 0 && o.lora_targets.empty()) {
    return bad("--lora-targets: expected module names with --lora-rank, e.g. q_proj,v_proj");
  }
  if (o.zero > 0 && o.dp < 2) {
    return bad("--zero " + Num(o.zero) + " shards over data-parallel ranks; give --dp N (>= 2)");
  }
  return OkStatus();
}

StatusOr<Plan> ComputePlan(const ModelSpec& m, const PlanOptions& o) {
  RETURN_IF_ERROR(ValidateModelSpec(m));
  RETURN_IF_ERROR(ValidatePlanOptions(m, o));
  int64_t lora_layer = 0;
  if (o.lora_rank > 0) {
    ASSIGN_OR_RETURN(lora_layer, LoraLayerParameters(m, o));
  }
  Plan best;
  std::vector<std::pair<bool, bool>> stages = {{true, true}};
  if (o.pp > 1) stages = {{true, false}, {false, true}};
  bool have = false;
  for (auto [first, last] : stages) {
    Plan p;
    p.model = m;
    p.options = o;
    p.parameters = ParameterCount(m);
    p.trainable_parameters = o.lora_rank > 0 ? lora_layer * m.layers : p.parameters;
    if (o.pp > 1) p.stage = first ? "first pipeline stage" : "last pipeline stage";
    p.peak_allocated = BuildStage(m, o, first, last, lora_layer, &p);
    if (!have || p.peak_allocated > best.peak_allocated) best = std::move(p);
    have = true;
  }
  best.allocator_slack = Round(best.peak_allocated * kAllocatorSlack);
  best.cuda_context = kCudaContextBytes;
  best.total_bytes = best.peak_allocated + best.allocator_slack + best.cuda_context;
  best.parts.push_back({"overhead", "allocator slack", best.allocator_slack,
                        "reserved above allocated, 5% of the peak", true});
  best.parts.push_back({"overhead", "CUDA context", best.cuda_context,
                        "outside the allocator (not in max_memory_allocated)", true});
  return best;
}

double MegatronLayerActivationBytes(double s, double b, double h, double a, double t,
                                    bool sequence_parallel, Recompute recompute) {
  if (recompute == Recompute::kFull) return 2 * s * b * h / (sequence_parallel ? t : 1);
  double scores = recompute == Recompute::kSelective ? 0 : 5 * a * s / (h * t);
  if (sequence_parallel) return s * b * h * (34 / t + scores);
  return s * b * h * (10 + 24 / t + scores);
}

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kAmpBf16:
      return "amp-bf16";
    case Precision::kAmpFp16:
      return "amp-fp16";
    case Precision::kFp8:
      return "fp8";
  }
  return "?";
}

const char* OptimizerName(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kAdamWFused:
      return "adamw-fused";
    case Optimizer::kSgd:
      return "sgd";
  }
  return "?";
}

const char* RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

bool ParsePrecision(const std::string& s, Precision* out) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kFp16, Precision::kAmpBf16,
                      Precision::kAmpFp16, Precision::kFp8}) {
    if (s == PrecisionName(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

bool ParseOptimizer(const std::string& s, Optimizer* out) {
  for (Optimizer o : {Optimizer::kAdamW, Optimizer::kAdamWFused, Optimizer::kSgd}) {
    if (s == OptimizerName(o)) {
      *out = o;
      return true;
    }
  }
  return false;
}

bool ParseRecompute(const std::string& s, Recompute* out) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (s == RecomputeName(r)) {
      *out = r;
      return true;
    }
  }
  return false;
}

}  // namespace stepscope::plan
