// Saved-tensor accounting. For eager PyTorch every term is a tensor the
// autograd graph holds between the forward and the backward, as the modules
// are written in Hugging Face transformers and train_gpt.py (docs/plan.md
// walks through each). Autograd saves an input only when the gradient that
// needs it is wanted, so frozen weights (LoRA) save less. For Megatron the
// terms are those of Korthikanti et al. 2022, Section 4, generalized to
// grouped-query attention, SwiGLU and any MLP width.
#include "plan/activations.h"

#include <algorithm>

namespace stepscope::plan {
namespace {

bool FullFineTune(const PlanOptions& o) { return o.lora_rank == 0; }

// Input width of a LoRA target module (0: not a projection of this layer).
int64_t LoraInputWidth(const ModelSpec& m, const std::string& name) {
  int64_t h = m.hidden, q = m.heads * m.head_dim, f = m.ffn;
  if (m.kind == LayerKind::kLlama) {
    if (name == "q_proj" || name == "k_proj" || name == "v_proj" || name == "gate_proj" ||
        name == "up_proj") {
      return h;
    }
    if (name == "o_proj") return q;
    if (name == "down_proj") return f;
    return 0;
  }
  if (name == "c_attn" || name == "query_key_value" || name == "c_fc" || name == "dense_h_to_4h") {
    return h;
  }
  if (name == "c_proj" || name == "dense") return q;
  if (name == "dense_4h_to_h") return f;
  return 0;
}

// peft keeps its adapters in fp32 and casts each adapter's input to fp32 (a
// copy per target in 16-bit training; under autocast lora_A keeps a 16-bit
// cast instead), plus lora_B's rank-wide input.
double LoraTermPerToken(const ModelSpec& m, const PlanOptions& o) {
  if (FullFineTune(o)) return 0;
  Widths w = WidthsFor(o.precision);
  double copy = w.amp ? 2 : (w.act < 4 ? 4 : 0);
  double sum = 0;
  for (const std::string& name : o.lora_targets) {
    sum += copy * LoraInputWidth(m, name) + 4.0 * o.lora_rank;
  }
  return sum;
}

// Activation functions written as several elementwise ops in Python (each
// keeps a tensor): gelu_new and gelu_fast keep x, tanh(..), 0.5x and 1+tanh(..).
bool CompositeActivation(const std::string& a) {
  return a == "gelu_new" || a == "gelu_fast" || a == "quick_gelu";
}

double Shard(double v, double parts) { return parts > 1 ? v / parts : v; }

std::vector<ActTerm> EagerLlamaLayer(const ModelSpec& m, const PlanOptions& o) {
  Widths w = WidthsFor(o.precision);
  double h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim, i = m.ffn;
  double tp = o.tp, rep = o.sequence_parallel ? o.tp : 1;
  bool full = FullFineTune(o);
  std::vector<ActTerm> t;
  // RMSNorm upcasts to fp32 (kept for pow and the normalization), keeps the
  // normalized tensor for the weight's gradient, and its output is the matmul input.
  double norm = 4 * h + (full ? w.stream * h : 0);
  t.push_back({"attention norm", Shard(norm, rep), "fp32 input, normalized copy"});
  // Under autocast each projection casts the fp32 input itself and keeps its own
  // 16-bit copy (autocast caches casts of weights only): three for q/k/v, two for gate/up.
  double attn_casts = w.amp ? 3 : 1, mlp_casts = w.amp ? 2 : 1;
  if (full) {
    t.push_back({"attention input", Shard(attn_casts * w.mm_in * h, rep),
                 w.amp ? "a 16-bit copy per q/k/v projection" : "saved by q/k/v"});
  }
  t.push_back({"q, k, v", Shard(w.act * (q + 2 * kv), tp), "saved by attention"});
  t.push_back({"attention output", Shard(w.act * q + 4 * m.heads, tp), "and log-sum-exp"});
  if (!m.flash_attention && o.recompute == Recompute::kNone) {
    double s = static_cast<double>(o.seq_len) / o.cp;
    t.push_back({"attention scores", Shard(w.act * m.heads * s, tp), "softmax output"});
  }
  if (double lora = LoraTermPerToken(m, o); lora > 0) {
    t.push_back({"LoRA adapter inputs", lora, "fp32 copies peft makes for the adapters"});
  }
  t.push_back({"MLP norm", Shard(norm, rep), "fp32 input, normalized copy"});
  if (full) {
    t.push_back({"MLP input", Shard(mlp_casts * w.mm_in * h, rep),
                 w.amp ? "a 16-bit copy per gate/up projection" : "saved by gate/up"});
  }
  // gate output (SiLU input), up output and SiLU output (the product's inputs),
  // the product (down projection's input, only when its weight trains).
  double mlp = 3 * w.act * i + (full ? w.mm_in * i : 0);
  if (m.experts > 0) {
    double k = m.experts_per_token;
    t.push_back({"MoE router", 4.0 * m.experts * 2, "fp32 logits, softmax"});
    t.push_back({"MoE expert inputs", k * w.mm_in * h, "tokens gathered per expert"});
    t.push_back({"MLP (experts)", Shard(k * mlp, tp), "gate, up, SiLU, product per routed token"});
  } else {
    t.push_back({"MLP", Shard(mlp, tp), "gate, up, SiLU, product"});
  }
  return t;
}

std::vector<ActTerm> EagerGptLayer(const ModelSpec& m, const PlanOptions& o) {
  Widths w = WidthsFor(o.precision);
  double h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim, f = m.ffn;
  double tp = o.tp, rep = o.sequence_parallel ? o.tp : 1;
  bool full = FullFineTune(o);
  bool drop = m.hidden_dropout > 0;
  std::vector<ActTerm> t;
  // LayerNorm keeps its input and fp32 mean/rstd; its output is the matmul input.
  t.push_back({"attention norm", Shard(w.stream * h + 8, rep), "input, mean, rstd"});
  if (full)
    t.push_back({"attention input", Shard(w.mm_in * h, rep), "saved by the QKV projection"});
  if (double lora = LoraTermPerToken(m, o); lora > 0) {
    t.push_back({"LoRA adapter inputs", lora, "fp32 copies peft makes for the adapters"});
  }
  double qkv = w.act * (q + 2 * kv);
  if (m.model_type == "gpt_neox") qkv += w.act * (q + kv);  // rotary copies of q and k
  t.push_back({"q, k, v", Shard(qkv, tp), "views of the fused projection, saved by attention"});
  t.push_back({"attention output", Shard(w.act * q + 4 * m.heads, tp), "and log-sum-exp"});
  if (!m.flash_attention && o.recompute == Recompute::kNone) {
    double s = static_cast<double>(o.seq_len) / o.cp;
    t.push_back({"attention scores", Shard(w.act * m.heads * s, tp), "softmax output"});
  }
  if (drop) t.push_back({"dropout masks", Shard(2 * h, rep), "1 byte per element, 2 per layer"});
  double norm2 = m.parallel_residual ? 8 : w.stream * h + 8;
  t.push_back({"MLP norm", Shard(norm2, rep), "input, mean, rstd"});
  if (full) t.push_back({"MLP input", Shard(w.mm_in * h, rep), "saved by fc1"});
  double act = CompositeActivation(m.activation) ? 4 * w.act * f : w.act * f;
  t.push_back({"MLP activation", Shard(act, tp), m.activation + " input (and its temporaries)"});
  if (full) {
    t.push_back({"MLP fc2 input", Shard(w.mm_in * f, tp), "activation output"});
  }
  return t;
}

// Korthikanti et al. 2022 per part (16-bit activations, 1-byte dropout masks),
// generalized: K and V at the key/value width, MLP at width f (SwiGLU keeps two
// f-wide projections and their product).
std::vector<ActTerm> MegatronLayer(const ModelSpec& m, const PlanOptions& o) {
  double h = m.hidden, kv = m.kv_heads * m.head_dim, f = m.ffn, a = m.heads;
  double s = static_cast<double>(o.seq_len) / o.cp;
  double tp = o.tp, rep = o.sequence_parallel ? o.tp : 1;
  bool drop = m.hidden_dropout > 0;
  std::vector<ActTerm> t;
  t.push_back({"layer norms", Shard(4 * h, rep), "2 inputs, 2 bytes each"});
  t.push_back({"attention input", Shard(2 * h, rep), "QKV projection input"});
  t.push_back({"q, k, v", Shard(2 * h + 4 * kv, tp), "2sbh for Q, K and V at kv width"});
  bool scores = !m.flash_attention && o.recompute == Recompute::kNone;
  if (scores) {
    // 2as^2b softmax output + as^2b dropout mask + 2as^2b dropout output, per token 5as.
    t.push_back({"attention scores", Shard(5 * a * s, tp), "softmax, dropout mask, dropout"});
  }
  t.push_back({"attention output", Shard(2 * h, tp), "output projection input"});
  bool swiglu = m.kind == LayerKind::kLlama;
  t.push_back({"MLP input", Shard(2 * h, rep), "fc1 input"});
  t.push_back({"MLP", Shard(swiglu ? 6 * f : 4 * f, tp),
               swiglu ? "gate, up, SwiGLU output" : "GeLU input, fc2 input"});
  if (drop) t.push_back({"dropout masks", Shard(2 * h, rep), "attention and MLP"});
  return t;
}

}  // namespace

Widths WidthsFor(Precision p) {
  Widths w;
  switch (p) {
    case Precision::kFp32:
      w = {4, 4, 4, 4, false};
      break;
    case Precision::kBf16:
    case Precision::kFp16:
      w = {2, 2, 2, 2, false};
      break;
    case Precision::kAmpBf16:
    case Precision::kAmpFp16:
      w = {4, 2, 4, 2, true};
      break;
    case Precision::kFp8:
      w = {2, 2, 2, 1, false};
      break;
  }
  return w;
}

std::vector<ActTerm> LayerTerms(const ModelSpec& m, const PlanOptions& o) {
  if (m.impl == Implementation::kMegatron) return MegatronLayer(m, o);
  return m.kind == LayerKind::kLlama ? EagerLlamaLayer(m, o) : EagerGptLayer(m, o);
}

std::vector<ActTerm> ModelTerms(const ModelSpec& m, const PlanOptions& o, bool last_stage) {
  Widths w = WidthsFor(o.precision);
  double h = m.hidden, rep = o.sequence_parallel ? o.tp : 1;
  std::vector<ActTerm> t;
  bool full = FullFineTune(o);
  if (m.impl == Implementation::kMegatron) {
    if (m.hidden_dropout > 0) t.push_back({"embedding dropout", Shard(h, rep), "mask"});
    if (last_stage) {
      t.push_back({"final norm + head input", Shard(4 * h, rep), "norm input, head input"});
    }
    return t;
  }
  if (m.kind == LayerKind::kGpt && m.hidden_dropout > 0) {
    t.push_back({"embedding dropout", Shard(h, rep), "mask"});
  }
  if (m.kind == LayerKind::kLlama) {
    t.push_back({"rotary cos/sin", 2 * m.head_dim * w.stream, "shared by the layers"});
  }
  if (last_stage) {
    double norm =
        m.kind == LayerKind::kLlama ? 4 * h + (full ? w.stream * h : 0) : w.stream * h + 8;
    t.push_back({"final norm", Shard(norm, rep), ""});
    if (full) t.push_back({"head input", Shard(w.mm_in * h, rep), "saved by the output head"});
  }
  return t;
}

double CheckpointBytesPerToken(const ModelSpec& m, const PlanOptions& o) {
  double rep = o.sequence_parallel ? o.tp : 1;
  if (m.impl == Implementation::kMegatron) return Shard(2.0 * m.hidden, rep);
  return Shard(WidthsFor(o.precision).stream * m.hidden, rep);
}

double LayerBackwardTransientPerToken(const ModelSpec& m, const PlanOptions& o) {
  // The gradients of the widest intermediate and its input, and of the stream.
  Widths w = WidthsFor(o.precision);
  double width = m.kind == LayerKind::kLlama ? 2.0 * m.ffn : m.ffn;
  if (m.experts > 0) width *= m.experts_per_token;
  return Shard(2 * w.act * width, o.tp) + 2 * w.stream * m.hidden;
}

double LossTransientPerToken(const ModelSpec& m, const PlanOptions& o) {
  double v = static_cast<double>(m.vocab) / o.tp;
  // Megatron's fused vocab-parallel cross entropy keeps fp32 logits (paper: 4sbv/t).
  if (m.impl == Implementation::kMegatron) return 4 * v;
  // Eager: log_softmax keeps its fp32 output; the backward adds its gradient and the
  // logits' gradient, all fp32, before the cast back.
  return 12 * v;
}

StatusOr<int64_t> LoraLayerParameters(const ModelSpec& m, const PlanOptions& o) {
  int64_t h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim, f = m.ffn;
  int64_t r = o.lora_rank, n = 0;
  for (const std::string& name : o.lora_targets) {
    int64_t in = 0, out = 0, count = 1;
    if (m.kind == LayerKind::kLlama) {
      if (name == "q_proj")
        in = h, out = q;
      else if (name == "k_proj" || name == "v_proj")
        in = h, out = kv;
      else if (name == "o_proj")
        in = q, out = h;
      else if (name == "gate_proj" || name == "up_proj")
        in = h, out = f;
      else if (name == "down_proj")
        in = f, out = h;
      if (m.experts > 0 && (name == "gate_proj" || name == "up_proj" || name == "down_proj")) {
        count = m.experts;
      }
    } else {
      if (name == "c_attn" || name == "query_key_value")
        in = h, out = q + 2 * kv;
      else if (name == "c_proj" || name == "dense")
        in = q, out = h;
      else if (name == "c_fc" || name == "dense_h_to_4h")
        in = h, out = f;
      else if (name == "dense_4h_to_h")
        in = f, out = h;
    }
    if (in == 0) {
      return InvalidInput("--lora-targets: '" + name + "' is not a projection of a " +
                          m.model_type + " layer; e.g. " +
                          (m.kind == LayerKind::kLlama ? "q_proj,v_proj" : "c_attn"));
    }
    n += count * r * (in + out);
  }
  return n;
}

}  // namespace stepscope::plan
