#include "plan/model_spec.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "common/json_value.h"
#include "common/strings.h"

namespace stepscope::plan {
namespace {

// ---- Hugging Face config.json

// Field reader over one JSON object that names the file and field in every error.
class HfFields {
 public:
  HfFields(const JsonValue& obj, std::string name) : obj_(obj), name_(std::move(name)) {}

  // A required positive integer; the first of `keys` present wins.
  Status Int(std::initializer_list<const char*> keys, int64_t* out) const {
    for (const char* k : keys) {
      if (const JsonValue* v = obj_.Get(k); v && !v->is_null()) return ToInt(k, *v, out);
    }
    return InvalidInput(name_ + ": missing field '" + *keys.begin() +
                        "'; add it to the config or pass --set " + *keys.begin() + "=N");
  }
  // An optional integer (fallback when absent or null).
  Status IntOr(const char* key, int64_t fallback, int64_t* out) const {
    const JsonValue* v = obj_.Get(key);
    if (!v || v->is_null()) {
      *out = fallback;
      return OkStatus();
    }
    return ToInt(key, *v, out);
  }
  bool Bool(const char* key, bool fallback) const {
    const JsonValue* v = obj_.Get(key);
    if (!v || v->is_null()) return fallback;
    if (v->type() == JsonValue::Type::kBool) return v->AsBool();
    if (v->is_number()) return v->AsDouble() != 0;
    return fallback;
  }
  double Number(const char* key, double fallback) const { return obj_.NumberOr(key, fallback); }
  std::string String(const char* key, const std::string& fallback) const {
    return obj_.StringOr(key, fallback);
  }

 private:
  Status ToInt(const char* key, const JsonValue& v, int64_t* out) const {
    double d = v.AsDouble(-1);
    if (!v.is_number() || d != std::floor(d) || d < 0 || d > 1e12) {
      return InvalidInput(name_ + ": field '" + key + "' is " + v.Dump() +
                          "; expected a non-negative integer");
    }
    *out = static_cast<int64_t>(d);
    return OkStatus();
  }
  const JsonValue& obj_;
  std::string name_;
};

JsonValue OverrideValue(const std::string& text) {
  auto parsed = ParseJson(text);
  if (parsed.ok()) return std::move(parsed).value();
  return JsonValue::String(text);
}

StatusOr<ModelSpec> FromHf(const JsonValue& in, const std::string& name,
                           const std::vector<Override>& overrides) {
  if (!in.is_object()) return InvalidInput(name + ": expected a JSON object (a config.json)");
  JsonValue obj = JsonValue::Object();
  for (const auto& member : in.members()) {
    const std::string& key = member.first;  // named: clang 14 cannot capture a structured binding
    bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                [&](const Override& o) { return o.first == key; });
    if (!replaced) obj.Set(key, member.second);
  }
  for (const auto& [k, v] : overrides) obj.Set(k, OverrideValue(v));
  HfFields f(obj, name);
  ModelSpec m;
  m.source = name;
  m.model_type = obj.StringOr("model_type", "");
  if (m.model_type.empty()) {
    return InvalidInput(name +
                        ": missing field 'model_type'; expected one of llama, mistral, "
                        "qwen2, mixtral, gpt2, gpt_neox (or a Megatron argument file)");
  }
  const std::string& t = m.model_type;
  if (t == "llama" || t == "mistral" || t == "qwen2" || t == "mixtral") {
    m.kind = LayerKind::kLlama;
    RETURN_IF_ERROR(f.Int({"hidden_size"}, &m.hidden));
    RETURN_IF_ERROR(f.Int({"num_hidden_layers"}, &m.layers));
    RETURN_IF_ERROR(f.Int({"num_attention_heads"}, &m.heads));
    RETURN_IF_ERROR(f.IntOr("num_key_value_heads", m.heads, &m.kv_heads));
    RETURN_IF_ERROR(f.Int({"intermediate_size"}, &m.ffn));
    RETURN_IF_ERROR(f.Int({"vocab_size"}, &m.vocab));
    RETURN_IF_ERROR(f.IntOr("head_dim", m.heads > 0 ? m.hidden / m.heads : 0, &m.head_dim));
    m.tied_embeddings = f.Bool("tie_word_embeddings", false);
    m.qkv_bias = t == "qwen2" ? true : f.Bool("attention_bias", false);
    m.activation = f.String("hidden_act", "silu");
    m.hidden_dropout = 0;
    if (t == "mixtral") {
      RETURN_IF_ERROR(f.Int({"num_local_experts"}, &m.experts));
      RETURN_IF_ERROR(f.IntOr("num_experts_per_tok", 2, &m.experts_per_token));
    }
  } else if (t == "gpt2") {
    m.kind = LayerKind::kGpt;
    RETURN_IF_ERROR(f.Int({"n_embd", "hidden_size"}, &m.hidden));
    RETURN_IF_ERROR(f.Int({"n_layer", "num_hidden_layers"}, &m.layers));
    RETURN_IF_ERROR(f.Int({"n_head", "num_attention_heads"}, &m.heads));
    RETURN_IF_ERROR(f.Int({"vocab_size"}, &m.vocab));
    RETURN_IF_ERROR(f.IntOr("n_inner", 4 * m.hidden, &m.ffn));
    RETURN_IF_ERROR(f.IntOr("n_positions", 1024, &m.max_positions));
    m.kv_heads = m.heads;
    m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
    m.tied_embeddings = f.Bool("tie_word_embeddings", true);
    m.qkv_bias = m.linear_bias = true;
    m.activation = f.String("activation_function", "gelu_new");
    m.hidden_dropout = f.Number("resid_pdrop", 0.1);
  } else if (t == "gpt_neox") {
    m.kind = LayerKind::kGpt;
    RETURN_IF_ERROR(f.Int({"hidden_size"}, &m.hidden));
    RETURN_IF_ERROR(f.Int({"num_hidden_layers"}, &m.layers));
    RETURN_IF_ERROR(f.Int({"num_attention_heads"}, &m.heads));
    RETURN_IF_ERROR(f.Int({"intermediate_size"}, &m.ffn));
    RETURN_IF_ERROR(f.Int({"vocab_size"}, &m.vocab));
    m.kv_heads = m.heads;
    m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
    m.tied_embeddings = f.Bool("tie_word_embeddings", false);
    m.qkv_bias = m.linear_bias = f.Bool("attention_bias", true);
    m.parallel_residual = f.Bool("use_parallel_residual", true);
    m.activation = f.String("hidden_act", "gelu");
    m.hidden_dropout = f.Number("hidden_dropout", 0.0);
  } else {
    return InvalidInput(name + ": field 'model_type' is '" + t +
                        "', not a supported family; expected llama, mistral, qwen2, mixtral, "
                        "gpt2 or gpt_neox");
  }
  return m;
}

// ---- Megatron-LM argument file

// "--num-layers 24 --swiglu ..." (any whitespace, '#' comments, a trailing '\' per line).
std::map<std::string, std::string> MegatronArgs(const std::string& text) {
  std::vector<std::string> tokens;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (w != "\\") tokens.push_back(w);
    }
  }
  std::map<std::string, std::string> args;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!StartsWith(tokens[i], "--")) continue;
    std::string key = tokens[i].substr(2);
    std::string value;
    if (size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key.resize(eq);
    } else if (i + 1 < tokens.size() && !StartsWith(tokens[i + 1], "--")) {
      value = tokens[++i];
    }
    std::replace(key.begin(), key.end(), '_', '-');
    args[key] = value;
  }
  return args;
}

StatusOr<ModelSpec> FromMegatron(const std::string& text, const std::string& name,
                                 const std::vector<Override>& overrides) {
  auto args = MegatronArgs(text);
  for (auto [k, v] : overrides) {
    std::replace(k.begin(), k.end(), '_', '-');
    args[k] = v;
  }
  auto get_int = [&](const char* key, int64_t fallback, bool required, int64_t* out) -> Status {
    auto it = args.find(key);
    if (it == args.end()) {
      if (required) {
        return InvalidInput(name + ": missing argument '--" + std::string(key) +
                            "'; add it to the file or pass --set " + key + "=N");
      }
      *out = fallback;
      return OkStatus();
    }
    if (!ParseInt64(it->second, out) || *out < 0) {
      return InvalidInput(name + ": argument '--" + std::string(key) + "' is '" + it->second +
                          "'; expected a non-negative integer");
    }
    return OkStatus();
  };
  ModelSpec m;
  m.source = name;
  m.model_type = "megatron";
  m.impl = Implementation::kMegatron;
  RETURN_IF_ERROR(get_int("num-layers", 0, true, &m.layers));
  RETURN_IF_ERROR(get_int("hidden-size", 0, true, &m.hidden));
  RETURN_IF_ERROR(get_int("num-attention-heads", 0, true, &m.heads));
  RETURN_IF_ERROR(get_int("ffn-hidden-size", 4 * m.hidden, false, &m.ffn));
  int64_t vocab = 0, divisible = 128;
  auto padded = args.find("padded-vocab-size");
  RETURN_IF_ERROR(
      get_int(padded != args.end() ? "padded-vocab-size" : "vocab-size", 0, true, &vocab));
  RETURN_IF_ERROR(get_int("make-vocab-size-divisible-by", 128, false, &divisible));
  m.vocab = vocab;
  if (padded == args.end() && divisible > 0) {
    // Megatron pads the vocabulary to a multiple of divisible * TP.
    int64_t tp = 1;
    RETURN_IF_ERROR(get_int("tensor-model-parallel-size", 1, false, &tp));
    int64_t mult = divisible * std::max<int64_t>(tp, 1);
    m.vocab = (vocab + mult - 1) / mult * mult;
  }
  m.kv_heads = m.heads;
  if (args.count("group-query-attention")) {
    RETURN_IF_ERROR(get_int("num-query-groups", m.heads, false, &m.kv_heads));
  }
  RETURN_IF_ERROR(get_int("kv-channels", m.heads > 0 ? m.hidden / m.heads : 0, false, &m.head_dim));
  bool swiglu = args.count("swiglu") > 0;
  m.kind = swiglu ? LayerKind::kLlama : LayerKind::kGpt;
  m.activation = swiglu ? "swiglu" : "gelu";
  m.tied_embeddings = args.count("untie-embeddings-and-output-weights") == 0;
  std::string pos =
      args.count("position-embedding-type") ? args["position-embedding-type"] : "learned_absolute";
  if (pos == "learned_absolute") {
    RETURN_IF_ERROR(get_int("max-position-embeddings", 0, false, &m.max_positions));
    if (m.max_positions == 0) RETURN_IF_ERROR(get_int("seq-length", 0, false, &m.max_positions));
  }
  m.qkv_bias = m.linear_bias = args.count("disable-bias-linear") == 0;
  m.hidden_dropout = 0.1;
  if (args.count("hidden-dropout")) ParseDouble(args["hidden-dropout"], &m.hidden_dropout);
  RETURN_IF_ERROR(get_int("num-experts", 0, false, &m.experts));
  RETURN_IF_ERROR(get_int("moe-router-topk", m.experts > 0 ? 2 : 0, false, &m.experts_per_token));
  m.megatron_args = args;
  m.flash_attention = args.count("use-flash-attn") > 0 ||
                      (args.count("attention-backend") && args["attention-backend"] != "unfused");
  return m;
}

bool LooksLikeJson(const std::string& text) {
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

}  // namespace

StatusOr<ModelSpec> ParseModelSpec(const std::string& text, const std::string& name,
                                   const std::vector<Override>& overrides) {
  StatusOr<ModelSpec> m = InvalidInput("");
  if (LooksLikeJson(text)) {
    auto json = ParseJson(text);
    if (!json.ok()) return InvalidInput(name + ": not valid JSON: " + json.status().message());
    m = FromHf(*json, name, overrides);
  } else if (text.find("--num-layers") != std::string::npos ||
             text.find("--hidden-size") != std::string::npos) {
    m = FromMegatron(text, name, overrides);
  } else {
    return InvalidInput(name +
                        ": neither a Hugging Face config.json nor a Megatron argument file "
                        "(expected '{' or '--num-layers ...')");
  }
  if (!m.ok()) return m;
  RETURN_IF_ERROR(ValidateModelSpec(*m));
  return m;
}

StatusOr<ModelSpec> LoadModelSpec(const std::string& path, const std::vector<Override>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidInput(path + ": cannot open the model config; check the path");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > (64u << 20)) return InvalidInput(path + ": larger than 64 MiB; not a config");
  return ParseModelSpec(text, path, overrides);
}

Status ValidateModelSpec(const ModelSpec& m) {
  auto positive = [&](const char* field, int64_t v) -> Status {
    if (v > 0) return OkStatus();
    return InvalidInput(m.source + ": field '" + field + "' is " + std::to_string(v) +
                        "; expected a positive integer");
  };
  RETURN_IF_ERROR(positive("hidden_size", m.hidden));
  RETURN_IF_ERROR(positive("num_hidden_layers", m.layers));
  RETURN_IF_ERROR(positive("num_attention_heads", m.heads));
  RETURN_IF_ERROR(positive("num_key_value_heads", m.kv_heads));
  RETURN_IF_ERROR(positive("intermediate_size", m.ffn));
  RETURN_IF_ERROR(positive("vocab_size", m.vocab));
  RETURN_IF_ERROR(positive("head_dim", m.head_dim));
  // Far above any real model, low enough that products of sizes stay exact in int64.
  for (auto [field, v, limit] : {std::tuple{"hidden_size", m.hidden, 1ll << 20},
                                 {"num_hidden_layers", m.layers, 1ll << 16},
                                 {"num_attention_heads", m.heads, 1ll << 16},
                                 {"intermediate_size", m.ffn, 1ll << 22},
                                 {"vocab_size", m.vocab, 1ll << 24},
                                 {"head_dim", m.head_dim, 1ll << 16},
                                 {"num_local_experts", m.experts, 1ll << 12},
                                 {"max_position_embeddings", m.max_positions, 1ll << 24}}) {
    if (v > limit) {
      return InvalidInput(m.source + ": field '" + field + "' is " + std::to_string(v) +
                          "; larger than any model this planner knows (limit " +
                          std::to_string(limit) + ")");
    }
  }
  double h = static_cast<double>(m.hidden), hd = static_cast<double>(m.head_dim);
  double per_layer = h * hd * (2.0 * m.heads + 2.0 * m.kv_heads) +
                     3.0 * h * m.ffn * std::max<double>(1, static_cast<double>(m.experts));
  if (m.layers * per_layer + 2 * h * (m.vocab + m.max_positions) > 1e15) {
    return InvalidInput(m.source +
                        ": the model would have more than 10^15 parameters; check "
                        "hidden_size, intermediate_size, num_hidden_layers and vocab_size");
  }
  if (m.heads % m.kv_heads != 0) {
    return InvalidInput(m.source + ": field 'num_key_value_heads' (" + std::to_string(m.kv_heads) +
                        ") does not divide num_attention_heads (" + std::to_string(m.heads) + ")");
  }
  if (m.experts > 0 && (m.experts_per_token <= 0 || m.experts_per_token > m.experts)) {
    return InvalidInput(m.source + ": field 'num_experts_per_tok' (" +
                        std::to_string(m.experts_per_token) + ") must be 1.." +
                        std::to_string(m.experts));
  }
  return OkStatus();
}

int64_t LayerMatmulParameterCount(const ModelSpec& m) {
  int64_t h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  int64_t attn = h * q + 2 * h * kv + q * h;
  int64_t mlp_one = (m.kind == LayerKind::kLlama ? 3 : 2) * h * m.ffn;
  int64_t mlp = m.experts > 0 ? m.experts * mlp_one + h * m.experts : mlp_one;
  return attn + mlp;
}

int64_t LayerParameterCount(const ModelSpec& m) {
  int64_t h = m.hidden, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  int64_t n = LayerMatmulParameterCount(m);
  n += m.kind == LayerKind::kLlama ? 2 * h : 4 * h;  // RMSNorm: weight; LayerNorm: weight + bias
  if (m.qkv_bias) n += q + 2 * kv;
  if (m.linear_bias) n += h + m.ffn + h;  // output projection, fc1, fc2
  return n;
}

int64_t EmbeddingParameterCount(const ModelSpec& m) {
  return m.vocab * m.hidden + m.max_positions * m.hidden;
}

int64_t HeadParameterCount(const ModelSpec& m) {
  return m.tied_embeddings ? 0 : m.vocab * m.hidden;
}

int64_t ParameterCount(const ModelSpec& m) {
  int64_t final_norm = m.kind == LayerKind::kLlama ? m.hidden : 2 * m.hidden;
  return EmbeddingParameterCount(m) + m.layers * LayerParameterCount(m) + final_norm +
         HeadParameterCount(m);
}

}  // namespace stepscope::plan
