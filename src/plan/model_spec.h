// ModelSpec: the shape of a decoder-only transformer, read from a Hugging Face
// config.json (llama, mistral, qwen2, mixtral, gpt2, gpt_neox families) or a
// Megatron-LM argument file ("--num-layers 24 --hidden-size 1024 ..."), with
// command-line overrides applied on top.
//
// The family decides the layer's structure (which tensors the forward keeps
// for the backward, see plan.cc): "llama" covers llama, mistral, qwen2 and
// mixtral (RMSNorm, separate q/k/v projections with rotary embeddings, gated
// SiLU MLP, optional mixture of experts); "gpt" covers gpt2 and gpt_neox
// (LayerNorm, fused QKV projection, plain MLP).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stepscope::plan {

enum class LayerKind { kLlama, kGpt };

// How the training code is written, which decides what the forward saves.
// kEager: PyTorch eager modules as Hugging Face writes them (calibrated against
// measured peaks); kMegatron: Megatron-LM's fused layers, memory by the
// formulas of Korthikanti et al. 2022.
enum class Implementation { kEager, kMegatron };

struct ModelSpec {
  std::string source;      // file the spec was read from
  std::string model_type;  // "llama", "gpt2", ..., or "megatron"
  LayerKind kind = LayerKind::kLlama;
  Implementation impl = Implementation::kEager;
  int64_t hidden = 0;    // h
  int64_t layers = 0;    // L
  int64_t heads = 0;     // a
  int64_t kv_heads = 0;  // key/value heads (grouped-query attention); == heads without GQA
  int64_t head_dim = 0;  // hidden / heads unless the config says otherwise
  int64_t ffn = 0;       // MLP intermediate size
  int64_t vocab = 0;
  int64_t max_positions = 0;  // learned position embeddings (gpt2); 0: rotary, no table
  bool tied_embeddings = false;
  bool qkv_bias = false;
  bool linear_bias = false;         // biases on the other projections (gpt families)
  bool parallel_residual = false;   // gpt_neox: attention and MLP read the same input
  std::string activation = "silu";  // MLP activation name as the config spells it
  double hidden_dropout = 0;        // dropout after attention/MLP outputs and embeddings
  int64_t experts = 0;              // mixture of experts: experts per layer (0: dense)
  int64_t experts_per_token = 0;
  bool flash_attention = true;  // no s^2 attention scores kept (SDPA flash/efficient)
  // A Megatron argument file's training arguments (micro-batch-size, seq-length, parallel sizes,
  // recompute, precision), dashes for underscores; the plan's defaults before flags.
  std::map<std::string, std::string> megatron_args;
};

// One command-line override: "hidden_size=2048" style (HF names or the ModelSpec field names).
using Override = std::pair<std::string, std::string>;

// Reads a Hugging Face config.json or a Megatron argument file. Errors name the
// file and the field: "config.json: missing field 'num_attention_heads'".
StatusOr<ModelSpec> LoadModelSpec(const std::string& path, const std::vector<Override>& overrides);

// Same, from text already in memory (tests, fuzzing); `name` is used in errors.
StatusOr<ModelSpec> ParseModelSpec(const std::string& text, const std::string& name,
                                   const std::vector<Override>& overrides);

// Checks internal consistency (positive sizes, heads divide hidden, kv heads divide heads).
Status ValidateModelSpec(const ModelSpec& m);

// Parameter count of the whole model (embeddings, layers, final norm, output head).
int64_t ParameterCount(const ModelSpec& m);
// Parameters of one transformer layer, and of its matmul weights only.
int64_t LayerParameterCount(const ModelSpec& m);
int64_t LayerMatmulParameterCount(const ModelSpec& m);
// Embedding table(s) (token + learned positions) and the output head (0 when tied).
int64_t EmbeddingParameterCount(const ModelSpec& m);
int64_t HeadParameterCount(const ModelSpec& m);

}  // namespace stepscope::plan
