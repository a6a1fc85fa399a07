#include "analysis/memory/nvtx_context.h"

#include <gtest/gtest.h>

namespace stepscope::memory {
namespace {

TEST(NvtxContext, StepNames) {
  int64_t n = -1;
  EXPECT_TRUE(IsStepName("step 12", &n));
  EXPECT_EQ(n, 12);
  EXPECT_TRUE(IsStepName("Step_3", &n));
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(IsStepName("ProfilerStep#7", &n));
  EXPECT_EQ(n, 7);
  EXPECT_TRUE(IsStepName("step4", &n));
  EXPECT_FALSE(IsStepName("step", &n));
  EXPECT_FALSE(IsStepName("stepping 3", &n));
  EXPECT_FALSE(IsStepName("optimizer step 3", &n));
  EXPECT_FALSE(IsStepName("step 3a", &n));
}

NvtxRecord R(int64_t s, int64_t e, uint32_t tid, StringId name,
             NvtxKind kind = NvtxKind::kPushPop) {
  NvtxRecord r{};
  r.start_ns = s;
  r.end_ns = e;
  r.tid = r.end_tid = tid;
  r.name = name;
  r.kind = kind;
  return r;
}

TEST(NvtxContext, InnermostRangeAndStep) {
  std::vector<std::string> strings = {"", "step 1", "forward", "attn", "backward", "step 2", "bg"};
  std::vector<NvtxRecord> v = {
      R(0, 100, 1, 1), R(10, 50, 1, 2),  R(20, 30, 1, 3),  R(35, 40, 1, 3),
      R(60, 90, 1, 4), R(100, -1, 1, 5), R(0, 1000, 2, 6), R(25, 25, 1, 2, NvtxKind::kMark)};
  NvtxContext c(v, strings);
  EXPECT_EQ(c.At(1, 25).range, 3u);  // inside attn
  EXPECT_EQ(c.At(1, 32).range, 2u);  // between two attn ranges: forward
  EXPECT_EQ(c.At(1, 55).range, 1u);  // after forward: step 1
  EXPECT_EQ(c.At(1, 25).step, 1);
  EXPECT_EQ(c.At(1, 500).range, 5u);  // never closed: open until the end
  EXPECT_EQ(c.At(1, 500).step, 2);
  EXPECT_EQ(c.At(2, 25).range, 6u);  // other thread
  EXPECT_EQ(c.At(2, 25).step, 1);    // steps from any thread
  EXPECT_EQ(c.At(3, 25).range, 0u);  // unknown thread
  EXPECT_EQ(c.AtStepThread(65).range, 4u);
  EXPECT_EQ(c.AtStepThread(65).step, 1);
  EXPECT_EQ(c.StepAt(-5), -1);
}

}  // namespace
}  // namespace stepscope::memory
