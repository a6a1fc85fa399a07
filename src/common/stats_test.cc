#include "common/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

namespace stepscope {
namespace {

TEST(Stats, MedianIsTheMeanOfTheTwoMiddleValues) {
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median(std::vector<int64_t>{7, 1, 4, 2}), 3);
  EXPECT_TRUE(std::isnan(Median(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(Median(std::vector<int64_t>{})));
  std::vector<int64_t> v = {5, 1, 9, 3};
  EXPECT_DOUBLE_EQ(MedianInPlace(&v), 4);
  EXPECT_EQ(v.size(), 4u);  // reordered, not consumed
}

TEST(Stats, MedianNsTruncatesTowardZero) {
  EXPECT_EQ(MedianNs({3, 1, 2}), 2);
  EXPECT_EQ(MedianNs({4, 1, 3, 2}), 2);       // 2.5
  EXPECT_EQ(MedianNs({-4, -1, -3, -2}), -2);  // -2.5
  EXPECT_EQ(MedianNs({}), 0);
}

TEST(Stats, LowerAndUpperMedianPickAnElement) {
  std::vector<int64_t> v = {40, 10, 30, 20};
  EXPECT_EQ(LowerMedian(&v), 20);
  EXPECT_EQ(UpperMedian(&v), 30);
  std::vector<int64_t> odd = {3, 1, 2};
  EXPECT_EQ(LowerMedian(&odd), 2);
  EXPECT_EQ(UpperMedian(&odd), 2);
  std::vector<std::pair<int, int>> by_first = {{2, 0}, {1, 1}, {2, 2}, {3, 3}};
  const auto first = [](const auto& a, const auto& b) { return a.first < b.first; };
  EXPECT_EQ(LowerMedian(&by_first, first).first, 2);
}

}  // namespace
}  // namespace stepscope
