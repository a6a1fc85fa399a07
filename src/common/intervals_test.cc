#include "common/intervals.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(Intervals, MergeSortsJoinsNestedAndTouchingOnes) {
  std::vector<Interval> v = {{50, 60}, {0, 10}, {5, 8}, {10, 20}, {30, 40}, {35, 45}};
  EXPECT_EQ(MergeIntervals(&v), 20 + 15 + 10);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].start, 0);
  EXPECT_EQ(v[0].end, 20);
  EXPECT_EQ(v[1].start, 30);
  EXPECT_EQ(v[1].end, 45);
  EXPECT_EQ(v[2].start, 50);
  EXPECT_EQ(v[2].end, 60);
  std::vector<Interval> none;
  EXPECT_EQ(MergeIntervals(&none), 0);
  // Empty and reversed intervals cover nothing and go.
  std::vector<Interval> w = {{10, 20}, {0, 5}, {15, 30}, {40, 40}, {60, 50}};
  EXPECT_EQ(MergeIntervals(&w), 25);
  EXPECT_EQ(w.size(), 2u);
}

TEST(Intervals, IntersectionOfMergedLists) {
  const std::vector<Interval> a = {{0, 10}, {20, 30}}, b = {{5, 25}, {28, 40}};
  EXPECT_EQ(IntersectionLength(a, b), 5 + 5 + 2);
  EXPECT_EQ(IntersectionLength(a, {}), 0);
}

TEST(ClampRecordTimes, ImpossibleTimesBecomeZeroLengthAndAreCounted) {
  // No 2^44 ns (4.9 h) record from an INT64_MIN start before a real end.
  int64_t s = INT64_MIN, e = 1'700'000'000'000'000'000;
  EXPECT_TRUE(ClampRecordTimes(&s, &e));
  EXPECT_EQ(s, 1'700'000'000'000'000'000);
  EXPECT_EQ(e, s);
  s = -1, e = 3000;  // a start just before 0: to 0
  EXPECT_TRUE(ClampRecordTimes(&s, &e));
  EXPECT_EQ(s, 0);
  EXPECT_EQ(e, 3000);
  s = 3500, e = 3200;  // ends before it starts
  EXPECT_TRUE(ClampRecordTimes(&s, &e));
  EXPECT_EQ(e - s, 0);
  s = 0, e = INT64_MAX;  // longer than 4.9 hours
  EXPECT_TRUE(ClampRecordTimes(&s, &e));
  EXPECT_EQ(e, kMaxRecordDuration);
  s = 10, e = 20;
  EXPECT_FALSE(ClampRecordTimes(&s, &e));
  EXPECT_EQ(e - s, 10);
  int64_t t = -1;
  EXPECT_TRUE(ClampInstant(&t));
  EXPECT_EQ(t, 0);
  EXPECT_FALSE(ClampInstant(&t));
}

}  // namespace
}  // namespace stepscope
