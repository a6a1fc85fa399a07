// The exposed wait (docs/ranks.md, "Who arrived last, and the wait") on
// hand-made two-rank summaries.
#include <gtest/gtest.h>

#include <algorithm>

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

// Adds a non-NCCL kernel to step 0 of `s`: `count` instances of median
// `median` ns (total count x median).
void AddKernel(RankSummary* s, const std::string& name, int64_t count, int64_t median,
               int64_t threads = -1) {
  NamedTimes n;
  n.name = name;
  n.threads = threads;
  n.count = {count};
  n.median_ns = {median};
  n.total_ns = {count * median};
  s->kernels.push_back(n);
  s->steps[0].compute_ns += count * median;
}

// Rank 1 arrives last and the others wait 1.2 ms for it (as above).
std::vector<RankSummary> LateRank1() {
  return {OneCollective(0, 1000000, 5000000, 2000000), OneCollective(1, 4000000, 5000000, 800000)};
}

TEST(Ranks, ExtraWorkIsGpuWorkAndSplitsFromSlowerKernels) {
  auto s = LateRank1();
  AddKernel(&s[0], "A", 1, 1500000);
  AddKernel(&s[0], "Z", 1, 1000000);
  AddKernel(&s[1], "A", 3, 2000000);  // 2 more instances, each 0.5 ms longer
  AddKernel(&s[1], "B", 2, 1000000);  // only on rank 1
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  const Straggler& st = a->stragglers[0];
  EXPECT_EQ(st.rank_index, 1);
  // slower = min(3, 1) x (2 - 1.5) ms; extra = (3 - 1) x 2 + 2 x 1 + (0 - 1) x 1 ms (Z:
  // work rank 0 does that rank 1 does not); their sum is the busy-time excess, 8 - 2.5 ms.
  EXPECT_DOUBLE_EQ(st.slower_ns, 500000);
  EXPECT_DOUBLE_EQ(st.extra_ns, 5000000);
  EXPECT_DOUBLE_EQ(st.compute_excess_ns, 5500000);
  EXPECT_EQ(st.cause, Cause::kGpuWork);
  EXPECT_EQ(st.detail, CauseDetail::kExtraKernels);
  ASSERT_EQ(st.extra_kernels.size(), 2u);
  EXPECT_EQ(st.extra_kernels[0].name, "A");
  EXPECT_DOUBLE_EQ(st.extra_kernels[0].ns, 4000000);
  EXPECT_DOUBLE_EQ(st.extra_kernels[0].instances, 2);
  EXPECT_FALSE(st.extra_kernels[0].only_here);
  EXPECT_EQ(st.extra_kernels[1].name, "B");
  EXPECT_TRUE(st.extra_kernels[1].only_here);
  // A's 0.5 ms slowdown is under a tenth of the 5.5 ms excess: not evidence.
  EXPECT_TRUE(st.slower_kernels.empty());
}

TEST(Ranks, SameKernelsSlowerIsASlowerGpu) {
  auto s = LateRank1();
  AddKernel(&s[0], "A", 2, 1000000);
  AddKernel(&s[1], "A", 2, 1750000);
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  const Straggler& st = a->stragglers[0];
  EXPECT_DOUBLE_EQ(st.slower_ns, 1500000);
  EXPECT_DOUBLE_EQ(st.extra_ns, 0);
  EXPECT_EQ(st.cause, Cause::kSlowerGpu);
  EXPECT_EQ(st.detail, CauseDetail::kNone);
  ASSERT_EQ(st.slower_kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(st.slower_kernels[0].instances, 2);
  EXPECT_DOUBLE_EQ(st.slower_kernels[0].mine_ns, 1750000);
  EXPECT_DOUBLE_EQ(st.slower_kernels[0].others_ns, 1000000);
}

TEST(Ranks, SameKernelsLaunchedLargerAreGpuWork) {
  auto s = LateRank1();
  AddKernel(&s[0], "A", 2, 1000000, 8192);
  AddKernel(&s[1], "A", 2, 1500000, 12288);  // a batch of 12 instead of 8
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  const Straggler& st = a->stragglers[0];
  EXPECT_DOUBLE_EQ(st.larger_ns, 1000000);
  EXPECT_DOUBLE_EQ(st.slower_ns, 0);
  EXPECT_EQ(st.cause, Cause::kGpuWork);
  EXPECT_EQ(st.detail, CauseDetail::kLargerKernels);
  ASSERT_EQ(st.larger_kernels.size(), 1u);
  EXPECT_TRUE(st.slower_kernels.empty());
}

TEST(Ranks, LaunchSizeIsTheStragglingStepsOwn) {
  // Version 4: rank 1 launched A at 12288 threads in step 0 but the whole
  // trace's median says 8192 (a run whose batch changes): the step's size decides.
  auto s = LateRank1();
  AddKernel(&s[0], "A", 2, 1000000, 8192);
  AddKernel(&s[1], "A", 2, 1500000, 8192);
  s[0].kernels[0].step_threads = {8192};
  s[1].kernels[0].step_threads = {12288};
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  EXPECT_EQ(a->stragglers[0].detail, CauseDetail::kLargerKernels);
  EXPECT_DOUBLE_EQ(a->stragglers[0].larger_ns, 1000000);
}

TEST(Ranks, LateLaunchesWithoutHostEvidence) {
  auto s = LateRank1();
  s[1].steps[0].launch_late_ns = 1100000;
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  EXPECT_EQ(a->stragglers[0].cause, Cause::kLateLaunches);
  EXPECT_EQ(a->stragglers[0].detail, CauseDetail::kNone);
  EXPECT_DOUBLE_EQ(a->stragglers[0].comm_ns, 100000);
  // The price: rank 0's 5 ms step less its 1.2 ms wait.
  EXPECT_DOUBLE_EQ(a->stragglers[0].step_ns, 10000000);
  EXPECT_DOUBLE_EQ(a->stragglers[0].step_if_matched_ns, 10000000 - 1200000);
}

// A section of `ns` in step 0.
void AddSection(RankSummary* s, const std::string& name, int64_t ns) {
  NamedTimes n;
  n.name = name;
  n.count = {1};
  n.median_ns = {ns};
  n.total_ns = {ns};
  s->sections.push_back(n);
}

TEST(Ranks, LateLaunchesInTheDataLoaderAreDataLoading) {
  auto s = LateRank1();
  s[1].steps[0].launch_late_ns = 1100000;
  AddSection(&s[0], "DataLoader.__next__", 50000);
  AddSection(&s[1], "DataLoader.__next__", 1050000);
  for (auto& r : s) r.steps[0].host_cpu_ns = 2000000, r.steps[0].host_ready_ns = 0;
  s[1].steps[0].host_cpu_ns = 3000000;  // the loader's CPU time
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  const Straggler& st = a->stragglers[0];
  EXPECT_EQ(st.cause, Cause::kDataLoading);
  EXPECT_DOUBLE_EQ(st.part_loading_ns, 1000000);
  EXPECT_DOUBLE_EQ(st.part_cpu_ns, 0);
  EXPECT_DOUBLE_EQ(st.loader_mine_ns, 1050000);
}

TEST(Ranks, LateLaunchesWithMoreCpuAreHostCpu) {
  auto s = LateRank1();
  s[1].steps[0].launch_late_ns = 1100000;
  for (auto& r : s) r.steps[0].host_cpu_ns = 2000000, r.steps[0].host_ready_ns = 100000;
  s[1].steps[0].host_ready_ns = 1000000;  // runnable without a CPU: contention
  auto a = AnalyzeRanks(std::move(s), RanksOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->stragglers.size(), 1u);
  EXPECT_EQ(a->stragglers[0].cause, Cause::kHostCpu);
  EXPECT_EQ(a->stragglers[0].detail, CauseDetail::kCpuContention);
  EXPECT_DOUBLE_EQ(a->stragglers[0].part_cpu_ns, 900000);
}

TEST(Ranks, ParseStepRanges) {
  auto r = ParseStepRanges("3,10-17,26-33");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0], std::make_pair(int64_t{3}, int64_t{3}));
  EXPECT_EQ((*r)[1], std::make_pair(int64_t{10}, int64_t{17}));
  EXPECT_EQ((*r)[2], std::make_pair(int64_t{26}, int64_t{33}));
  for (const char* bad : {"", "x", "5-", "-", "9-3", "1,,2", "1-2-3"})
    EXPECT_FALSE(ParseStepRanges(bad).ok()) << bad;
}

// Two ranks, steps 0..3, each with one all-reduce; rank 1 arrives `late` ms
// late in the steps listed.
std::vector<RankSummary> LateInSteps(const std::vector<int64_t>& late_steps) {
  std::vector<RankSummary> out;
  for (int64_t rank : {0, 1}) {
    RankSummary s;
    s.trace = "r" + std::to_string(rank);
    s.rank = rank;
    s.world_size = 2;
    s.host = "h";
    s.step_source = "nvtx";
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t base = i * 10000000;
      const bool late =
          rank == 1 && std::find(late_steps.begin(), late_steps.end(), i) != late_steps.end();
      StepSummary st;
      st.step = i;
      st.start_ns = base;
      st.end_ns = base + 10000000;
      s.steps.push_back(st);
      CollectiveSummary c;
      c.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
      c.step = i;
      c.seq = i;
      c.start_ns = base + (late ? 6000000 : 1000000);
      c.end_ns = base + 7000000;
      c.free_ns = c.end_ns - c.start_ns;
      s.collectives.push_back(c);
    }
    out.push_back(std::move(s));
  }
  return out;
}

TEST(Ranks, StepsOutsideTheSelectionCountNowhere) {
  // Late in steps 2 and 3 only: over every step, 2 of 4 steps is no
  // straggler from an onset that holds; over --steps 2-3 it is.
  RanksOptions opt;
  opt.step_ranges = {{2, 3}};
  auto a = AnalyzeRanks(LateInSteps({2, 3}), opt);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->common_steps, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(a->stragglers.size(), 1u);
  EXPECT_EQ(a->stragglers[0].from_step, 2);
  EXPECT_EQ(a->ranks[1].steps, 2);
  // The balanced steps alone: no straggler.
  opt.step_ranges = {{0, 1}};
  auto b = AnalyzeRanks(LateInSteps({2, 3}), opt);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->stragglers.empty());
  // A selection that holds none of the steps is bad input.
  opt.step_ranges = {{7, 9}};
  auto c = AnalyzeRanks(LateInSteps({2, 3}), opt);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("--steps selects none"), std::string::npos);
}

// Four ranks at one all-reduce: rank r arrives at starts[r] (ms) and ends at 5 ms; its
// compute-free time is 2 ms when it arrives at 1 ms, else 0.8 ms plus its lead on 4 ms.
std::vector<RankSummary> FourRanks(const std::vector<double>& starts) {
  std::vector<RankSummary> s;
  for (size_t r = 0; r < starts.size(); ++r) {
    const auto start = static_cast<int64_t>(starts[r] * 1e6);
    s.push_back(OneCollective(static_cast<int64_t>(r), start, 5000000,
                              start <= 1000000 ? 2000000 : 800000 + (4000000 - start)));
    s.back().world_size = static_cast<int64_t>(starts.size());
  }
  return s;
}

TEST(Ranks, OneLateRankOfFourHoldsTheStepAlone) {
  // The three others wait 1.2 ms each: the median wait and the next-to-last's are equal.
  auto a = AnalyzeRanks(FourRanks({1, 1, 1, 4}), RanksOptions{});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->caused[3][0], 1200000);
  EXPECT_EQ(a->held[3][0], 1200000);
  ASSERT_EQ(a->stragglers.size(), 1u);
  EXPECT_EQ(a->stragglers[0].rank_index, 3);
  EXPECT_DOUBLE_EQ(a->stragglers[0].held_ns, 1200000);
  EXPECT_TRUE(a->notes.empty());
}

TEST(Ranks, TwoLateRanksOfFourHoldLittleEachAndAreNotedNotNamed) {
  // Ranks 2 and 3 both late: ranks 0 and 1 wait 1.2 ms, rank 2 only 0.1 ms for rank 3, so
  // rank 3 arriving with the others would start the all-reduce 0.1 ms earlier.
  auto a = AnalyzeRanks(FourRanks({1, 1, 3.9, 4}), RanksOptions{});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->collectives.size(), 1u);
  EXPECT_EQ(a->collectives[0].median_wait_ns, 1200000);
  EXPECT_EQ(a->collectives[0].held_ns, 100000);
  EXPECT_EQ(a->caused[3][0], 1200000);
  EXPECT_EQ(a->held[3][0], 100000);
  EXPECT_TRUE(a->stragglers.empty());
  ASSERT_EQ(a->notes.size(), 1u);
  EXPECT_NE(a->notes[0].find("rank 3 is not a straggler"), std::string::npos) << a->notes[0];
  EXPECT_NE(a->notes[0].find("waited only 0.10 ms per step"), std::string::npos) << a->notes[0];
}

}  // namespace
}  // namespace stepscope
