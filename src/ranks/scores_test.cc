#include "ranks/scores.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

WindowStat W(double median, double total) { return WindowStat{median, total}; }

// Hand-computed NVRx scores (docs/ranks.md, "Scores").
TEST(Scores, RelativeGpuIsTimeWeightedAndSkipsKernelsNotEverywhere) {
  // kernel:              A               B              C (rank 1 only)
  std::vector<std::vector<WindowStat>> stats = {
      {W(100, 1000), W(200, 2000), WindowStat{}},
      {W(200, 2000), W(200, 2000), W(50, 50)},
  };
  std::vector<double> s = RelativeGpuScores(stats);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  // (100/200 * 2000 + 200/200 * 2000) / (2000 + 2000); C is skipped.
  EXPECT_DOUBLE_EQ(s[1], 0.75);
}

TEST(Scores, RelativeSections) {
  std::vector<std::vector<WindowStat>> stats = {{W(100, 100), W(40, 40)},
                                                {W(400, 400), WindowStat{}}};
  auto s = RelativeSectionScores(stats);
  EXPECT_DOUBLE_EQ(s[0][0], 1.0);
  EXPECT_DOUBLE_EQ(s[1][0], 0.25);
  EXPECT_TRUE(std::isnan(s[0][1]));  // rank 1 lacks the section: no reference
  EXPECT_TRUE(std::isnan(s[1][1]));
}

TEST(Scores, IndividualComparesTheLastWindowWithTheBest) {
  std::vector<std::vector<WindowStat>> windows = {
      {W(100, 500), WindowStat{}}, {W(125, 1000), W(50, 100)},  // current
  };
  // A: best 100 / current 125 weighted 1000; B: 50 / 50 weighted 100.
  EXPECT_DOUBLE_EQ(IndividualGpuScore(windows), (0.8 * 1000 + 1.0 * 100) / 1100);
  auto sec = IndividualSectionScores(windows);
  EXPECT_DOUBLE_EQ(sec[0], 0.8);
  EXPECT_DOUBLE_EQ(sec[1], 1.0);
  EXPECT_DOUBLE_EQ(IndividualGpuScore({{W(70, 1)}}), 1.0);  // one window: its own best
  EXPECT_TRUE(std::isnan(IndividualGpuScore({})));
}

TEST(Scores, Medians) {
  NamedTimes n;
  n.count = {1, 0, 2};
  n.median_ns = {10, 0, 30};
  n.total_ns = {10, 0, 60};
  WindowStat w = MakeWindowStat(n, {0, 1, 2});
  EXPECT_DOUBLE_EQ(w.median_ns, 20);  // median of the per-step medians of steps where it ran
  EXPECT_DOUBLE_EQ(w.total_ns, 70);
  EXPECT_FALSE(MakeWindowStat(n, {1}).present());
}

}  // namespace
}  // namespace stepscope
