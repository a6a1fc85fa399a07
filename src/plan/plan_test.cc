#include "plan/plan.h"

#include <gtest/gtest.h>

#include <string>

#include "plan/activations.h"
#include "plan/model_spec.h"
#include "plan/select.h"

namespace stepscope::plan {
namespace {

ModelSpec Parse(const std::string& text, std::vector<Override> o = {}) {
  auto m = ParseModelSpec(text, "config.json", o);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelSpec{};
}

const char* kLlama2_7b =
    R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
        "vocab_size": 32000, "tie_word_embeddings": false})";
const char* kGpt2 =
    R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
        "vocab_size": 50257})";

// GPT-3 175B as in Korthikanti et al. 2022 (Table 3): a = 96, h = 12288, s = 2048, 96 layers.
const char* kGpt3Megatron =
    "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048\n"
    "--max-position-embeddings 2048 --micro-batch-size 1 --padded-vocab-size 51200 --bf16\n";

TEST(ModelSpec, PublishedParameterCounts) {
  // Llama-2-7B: 6,738,415,616 parameters; GPT-2 small: 124,439,808 (Hugging Face model cards).
  EXPECT_EQ(ParameterCount(Parse(kLlama2_7b)), 6738415616);
  EXPECT_EQ(ParameterCount(Parse(kGpt2)), 124439808);
}

TEST(ModelSpec, LoraParameterCountMatchesPeft) {
  // peft reports "trainable params: 4,194,304" for Llama-2-7B with r=8 on q_proj,v_proj.
  PlanOptions o;
  o.micro_batch = 1;
  o.seq_len = 512;
  o.lora_rank = 8;
  o.lora_targets = {"q_proj", "v_proj"};
  auto p = ComputePlan(Parse(kLlama2_7b), o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->trainable_parameters, 4194304);
}

TEST(ModelSpec, BadInputNamesTheField) {
  auto missing = ParseModelSpec(R"({"model_type": "llama", "hidden_size": 64})", "c.json", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(missing.status().message().find("'num_hidden_layers'"), std::string::npos);
  auto family = ParseModelSpec(R"({"model_type": "t5"})", "c.json", {});
  ASSERT_FALSE(family.ok());
  EXPECT_NE(family.status().message().find("'model_type' is 't5'"), std::string::npos);
  auto kv = ParseModelSpec(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 8, "num_key_value_heads": 3, "intermediate_size": 128,
      "vocab_size": 100})",
                           "c.json", {});
  ASSERT_FALSE(kv.ok());
  EXPECT_NE(kv.status().message().find("num_key_value_heads"), std::string::npos);
  auto notjson = ParseModelSpec("hello", "c.txt", {});
  EXPECT_FALSE(notjson.ok());
}

TEST(ModelSpec, OverridesReplaceFields) {
  ModelSpec m = Parse(kLlama2_7b, {{"num_hidden_layers", "2"}});
  EXPECT_EQ(m.layers, 2);
}

TEST(PlanOptions, InconsistentParallelismIsInvalidInput) {
  ModelSpec m = Parse(kLlama2_7b);
  PlanOptions o;
  o.micro_batch = 1;
  o.seq_len = 1024;
  o.tp = 3;
  Status st = ValidatePlanOptions(m, o);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_NE(st.message().find("num_attention_heads (32) is not divisible by --tp 3"),
            std::string::npos);
  o.tp = 1;
  o.pp = 5;
  st = ValidatePlanOptions(m, o);
  EXPECT_NE(st.message().find("num_hidden_layers (32) is not divisible by --pp 5"),
            std::string::npos);
}

// Korthikanti et al. 2022, Table 2, for GPT-3 175B's layer, s = 2048, b = 1, t = 8.
TEST(Megatron, Table2PerLayerFormulas) {
  const double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 1, false, Recompute::kNone),
                   sbh * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 8, false, Recompute::kNone),
                   sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)));
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 8, true, Recompute::kNone),
                   sbh * (34.0 / 8 + 5 * a * s / (h * 8)));
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 8, false, Recompute::kSelective),
                   sbh * (10 + 24.0 / 8));
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 8, true, Recompute::kSelective),
                   sbh * 34.0 / 8);
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 8, true, Recompute::kFull),
                   2 * sbh / 8);
  // The numbers themselves: 114 sbh without parallelism = 2.67 GiB per layer.
  EXPECT_DOUBLE_EQ(MegatronLayerActivationBytes(s, b, h, a, 1, false, Recompute::kNone),
                   2868903936.0);
}

// The planner's part-by-part terms reproduce Table 2 for the paper's model.
TEST(Megatron, PartsAddUpToTable2) {
  auto m = ParseModelSpec(kGpt3Megatron, "gpt3.args", {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->impl, Implementation::kMegatron);
  const double s = 2048, h = 12288, a = 96;
  for (int t : {1, 2, 8}) {
    for (bool sp : {false, true}) {
      for (Recompute r : {Recompute::kNone, Recompute::kSelective}) {
        if (sp && t == 1) continue;
        PlanOptions o;
        o.micro_batch = 1;
        o.seq_len = 2048;
        o.tp = t;
        o.sequence_parallel = sp;
        o.recompute = r;
        double sum = 0;
        for (const ActTerm& term : LayerTerms(*m, o)) sum += term.bytes_per_token * s;
        EXPECT_NEAR(sum, MegatronLayerActivationBytes(s, 1, h, a, t, sp, r), 1.0)
            << "t=" << t << " sp=" << sp << " recompute=" << RecomputeName(r);
      }
    }
  }
}

// Megatron-LM's theoretical memory: 18 bytes per parameter for bf16 with fp32
// master weights, gradients and Adam; 6 + 12/DP with the distributed optimizer.
TEST(Megatron, ModelStateBytesPerParameter) {
  auto m = ParseModelSpec(kGpt3Megatron, "gpt3.args", {});
  ASSERT_TRUE(m.ok());
  for (int dp : {1, 8}) {
    PlanOptions o;
    o.micro_batch = 1;
    o.seq_len = 2048;
    o.precision = Precision::kBf16;
    o.master_weights = true;
    o.optimizer = Optimizer::kAdamWFused;
    o.dp = dp;
    o.zero = dp > 1 ? 1 : 0;
    auto p = ComputePlan(*m, o);
    ASSERT_TRUE(p.ok()) << p.status().message();
    double state = 0;
    for (const PlanPart& part : p->parts) {
      if (part.group == "model state") state += part.bytes;
    }
    double per_param = state / static_cast<double>(p->parameters);
    EXPECT_NEAR(per_param, dp == 1 ? 18.0 : 6.0 + 12.0 / dp, 1e-6);
  }
}

// train_gpt.py's block under autocast keeps 36 bytes per token per hidden unit
// (docs/plan.md lists them): LayerNorm inputs 4+4, bf16 matmul inputs 2+2,
// QKV 6, attention output 2, GELU input 8, fc2 input 8.
TEST(Eager, TrainGptBlockUnderAutocast) {
  ModelSpec m = Parse(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
      "n_positions": 512, "vocab_size": 32000, "activation_function": "gelu",
      "resid_pdrop": 0, "tie_word_embeddings": false})");
  PlanOptions o;
  o.micro_batch = 8;
  o.seq_len = 512;
  o.precision = Precision::kAmpBf16;
  double sum = 0;
  for (const ActTerm& t : LayerTerms(m, o)) sum += t.bytes_per_token;
  // + 2 x 8 bytes of LayerNorm statistics and 4 bytes of log-sum-exp per head.
  EXPECT_DOUBLE_EQ(sum, 36.0 * 768 + 16 + 4 * 12);
  o.precision = Precision::kFp32;
  sum = 0;
  for (const ActTerm& t : LayerTerms(m, o)) sum += t.bytes_per_token;
  EXPECT_DOUBLE_EQ(sum, 64.0 * 768 + 16 + 4 * 12);
}

TEST(Plan, RecomputeAndSmallerBatchSaveMemory) {
  ModelSpec m = Parse(kLlama2_7b);
  PlanOptions o;
  o.micro_batch = 4;
  o.seq_len = 4096;
  o.optimizer = Optimizer::kAdamWFused;
  auto base = ComputePlan(m, o);
  ASSERT_TRUE(base.ok());
  PlanOptions r = o;
  r.recompute = Recompute::kFull;
  auto full = ComputePlan(m, r);
  PlanOptions half = o;
  half.micro_batch = 2;
  auto halved = ComputePlan(m, half);
  ASSERT_TRUE(full.ok() && halved.ok());
  EXPECT_LT(full->peak_allocated, base->peak_allocated);
  EXPECT_LT(halved->peak_allocated, base->peak_allocated);
  // The parts marked at the peak add up to the total.
  int64_t sum = 0;
  for (const PlanPart& p : base->parts) sum += p.at_peak ? p.bytes : 0;
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(base->total_bytes), 4.0);
}

TEST(Select, FittingCandidatesFitAndAreRanked) {
  ModelSpec m = Parse(kLlama2_7b);
  PlanOptions o;
  o.micro_batch = 8;
  o.seq_len = 4096;
  o.dp = 8;
  o.optimizer = Optimizer::kAdamWFused;
  int64_t cap = 80ll << 30;
  auto c = FittingCandidates(m, o, cap, 10);
  ASSERT_FALSE(c.empty());
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_LE(c[i].total_bytes, cap);
    if (i > 0) EXPECT_GE(c[i].relative_time, c[i - 1].relative_time);
  }
}

TEST(Select, BestPracticeWarnings) {
  ModelSpec m = Parse(kLlama2_7b);
  PlanOptions o;
  o.micro_batch = 1;
  o.seq_len = 2048;
  o.tp = 16;
  o.pp = 4;
  o.cp = 2;
  Plan p;
  auto w = BestPracticeWarnings(m, o, p);
  std::string all;
  for (const auto& s : w) all += s + "\n";
  EXPECT_NE(all.find("spans nodes"), std::string::npos);
  EXPECT_NE(all.find("pays off from about 4k"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::plan
