#include "plan/flops.h"

#include <gtest/gtest.h>

#include <string>

namespace stepscope::plan {
namespace {

ModelSpec Parse(const std::string& text) {
  auto m = ParseModelSpec(text, "config", {});
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelSpec{};
}

// GPT-3 175B as Narayanan et al. 2021 train it (Table 1): h = 12288, 96 layers, 96 heads,
// s = 2048, V = 51200, a plain 4h MLP.
const char* kGpt3 =
    "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048\n"
    "--max-position-embeddings 2048 --micro-batch-size 1 --padded-vocab-size 51200 --bf16\n";

PlanOptions Options(int64_t b, int64_t s, Recompute r) {
  PlanOptions o;
  o.micro_batch = b;
  o.seq_len = s;
  o.recompute = r;
  return o;
}

TEST(StepFlops, NarayananEquation3WithFullRecompute) {
  // F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), eq. 3 of the paper.
  const double B = 4, s = 2048, l = 96, h = 12288, V = 51200;
  const double want = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  auto f = ComputeStepFlops(Parse(kGpt3), Options(4, 2048, Recompute::kFull));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_NEAR(f->total() / want, 1.0, 1e-12);
  EXPECT_EQ(f->tokens, B * s);
}

TEST(StepFlops, WithoutRecomputeTheForwardCountsThreeTimes) {
  // 72 B s l h^2 (1 + s/(6h) + V/(12 l h)): the same count without the recomputed forward.
  const double B = 1, s = 2048, l = 96, h = 12288, V = 51200;
  const double want = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  auto f = ComputeStepFlops(Parse(kGpt3), Options(1, 2048, Recompute::kNone));
  ASSERT_TRUE(f.ok());
  EXPECT_NEAR(f->total() / want, 1.0, 1e-12);
  // Per part: the attention core is 4 s h per layer per token forward.
  EXPECT_NEAR(f->attention, 3 * 4 * s * h * l * B * s, 1);
  EXPECT_NEAR(f->head, 3 * 2 * h * V * B * s, 1);
}

TEST(StepFlops, SelectiveRecomputeRepeatsOnlyTheAttentionCore) {
  auto none = ComputeStepFlops(Parse(kGpt3), Options(1, 2048, Recompute::kNone));
  auto sel = ComputeStepFlops(Parse(kGpt3), Options(1, 2048, Recompute::kSelective));
  ASSERT_TRUE(none.ok() && sel.ok());
  EXPECT_DOUBLE_EQ(sel->layer_matmul, none->layer_matmul);
  EXPECT_DOUBLE_EQ(sel->attention, none->attention * 4 / 3);
}

TEST(StepFlops, GatedMlpAndGroupedQueryAttentionUseThePlannersCounts) {
  // Llama-style: q, k, v, o with 8 kv heads of 32, a gated MLP of 14336 (3 matrices).
  const ModelSpec m = Parse(
      R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
          "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
          "vocab_size": 128256})");
  auto f = ComputeStepFlops(m, Options(1, 8192, Recompute::kNone));
  ASSERT_TRUE(f.ok());
  const double h = 4096, kv = 1024, ffn = 14336, L = 32, s = 8192, V = 128256;
  const double per_layer = h * h + 2 * h * kv + h * h + 3 * h * ffn;
  EXPECT_NEAR(f->layer_matmul / (6 * per_layer * L * s), 1.0, 1e-12);
  EXPECT_NEAR(f->attention / (12 * s * h * L * s), 1.0, 1e-12);
  EXPECT_NEAR(f->head / (6 * h * V * s), 1.0, 1e-12);
}

TEST(StepFlops, MixtureOfExpertsCountsTheRoutedExpertsOnly) {
  const ModelSpec m = Parse(
      R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
          "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
          "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})");
  auto f = ComputeStepFlops(m, Options(1, 1024, Recompute::kNone));
  ASSERT_TRUE(f.ok());
  const double h = 4096, kv = 1024, ffn = 14336;
  const double per_layer = 2 * h * h + 2 * h * kv + 2 * 3 * h * ffn + h * 8;  // + router
  EXPECT_NEAR(f->layer_matmul / (6 * per_layer * 32 * 1024), 1.0, 1e-12);
}

TEST(StepFlops, LoraFrozenWeightsHaveNoWeightGradient) {
  const ModelSpec m = Parse(
      R"({"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 8,
          "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 2816,
          "vocab_size": 32000})");
  PlanOptions o = Options(8, 512, Recompute::kNone);
  auto full = ComputeStepFlops(m, o);
  o.lora_rank = 16;
  o.lora_targets = {"q_proj", "v_proj"};
  auto lora = ComputeStepFlops(m, o);
  ASSERT_TRUE(full.ok() && lora.ok());
  EXPECT_DOUBLE_EQ(lora->layer_matmul, full->layer_matmul * 4 / 6);
  EXPECT_DOUBLE_EQ(lora->head, full->head * 4 / 6);
  EXPECT_DOUBLE_EQ(lora->attention, full->attention);
  // Adapters: r (in + out) per target per layer, 6 FLOPs per parameter per token.
  EXPECT_DOUBLE_EQ(lora->adapters, 6.0 * 16 * (2048 + 2048) * 8 * 8 * 512);
}

TEST(StepFlops, ModelParallelSplitsTheStep) {
  PlanOptions o = Options(1, 2048, Recompute::kNone);
  auto one = ComputeStepFlops(Parse(kGpt3), o);
  o.tp = 8;
  auto tp8 = ComputeStepFlops(Parse(kGpt3), o);
  ASSERT_TRUE(one.ok() && tp8.ok());
  EXPECT_DOUBLE_EQ(tp8->total() * 8, one->total());
  EXPECT_FALSE(ComputeStepFlops(Parse(kGpt3), Options(0, 2048, Recompute::kNone)).ok());
}

}  // namespace
}  // namespace stepscope::plan
