// The exposed wait (docs/ranks.md, "Who arrived last, and the wait") on
// hand-made two-rank summaries.
#include <gtest/gtest.h>

#include "ranks/ranks_analysis.h"

namespace stepscope {
namespace {

// One step [0, 10 ms) on `rank` with one all-reduce [start, end) whose
// compute-free part is `free` ns.
RankSummary OneCollective(int64_t rank, int64_t start, int64_t end, int64_t free) {
  RankSummary s;
  s.trace = "r" + std::to_string(rank);
  s.rank = rank;
  s.world_size = 2;
  s.host = "h";
  s.step_source = "nvtx";
  StepSummary st;
  st.step = 0;
  st.end_ns = 10000000;
  s.steps.push_back(st);
  CollectiveSummary c;
  c.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  c.step = 0;
  c.start_ns = start;
  c.end_ns = end;
  c.free_ns = free;
  s.collectives.push_back(c);
  return s;
}

TEST(Ranks, ExposedWaitIsComputeFreeTimeBeyondTheLastArrivals) {
  // Rank 0 spins 3 ms (4 ms kernel vs rank 1's 1 ms); its compute covers
  // 2 ms of the kernel (free 2 ms), rank 1's covers 0.2 ms (free 0.8 ms):
  // exposed wait = 2 - 0.8 = 1.2 ms.
  auto a = AnalyzeRanks(
      {OneCollective(0, 1000000, 5000000, 2000000), OneCollective(1, 4000000, 5000000, 800000)},
      RanksOptions{});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->collectives.size(), 1u);
  EXPECT_EQ(a->collectives[0].last, 1);
  EXPECT_EQ(a->collectives[0].max_spin_ns, 3000000);
  EXPECT_EQ(a->collectives[0].max_wait_ns, 1200000);
  EXPECT_EQ(a->waited[0][0], 1200000);
  EXPECT_EQ(a->caused[1][0], 1200000);
  EXPECT_TRUE(a->notes.empty());
}

TEST(Ranks, NoSpinNoWaitAndVersion1FallsBackToTheSpin) {
  // Rank 0 arrives first but its kernel is no longer than rank 1's: no spin,
  // so no wait, even though its compute-free time is larger.
  auto a = AnalyzeRanks(
      {OneCollective(0, 1000000, 2000000, 1000000), OneCollective(1, 1500000, 2500000, 0)},
      RanksOptions{});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->waited[0][0], 0);
  // Free times unknown (version 1 summaries): the wait is the whole spin, with a note.
  auto b =
      AnalyzeRanks({OneCollective(0, 1000000, 5000000, -1), OneCollective(1, 4000000, 5000000, -1)},
                   RanksOptions{});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->waited[0][0], 3000000);
  ASSERT_EQ(b->notes.size(), 1u);
  EXPECT_NE(b->notes[0].find("version 1"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
