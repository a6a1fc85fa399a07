#include "common/bounded_regex.h"

#include <gtest/gtest.h>

#include <string>

namespace stepscope {
namespace {

TEST(BoundedRegex, MatchesNamesUpToTheBound) {
  const std::regex re("gemm.*x", std::regex::ECMAScript);
  EXPECT_TRUE(BoundedRegexSearch("sm90_gemm_128x", re));
  EXPECT_FALSE(BoundedRegexSearch("elementwise", re));
  const std::string at_bound = "gemm" + std::string(kMaxRegexSubject - 5, 'a') + "x";
  ASSERT_EQ(at_bound.size(), kMaxRegexSubject);
  EXPECT_FALSE(RegexSubjectTooLong(at_bound));
  EXPECT_TRUE(BoundedRegexSearch(at_bound, re));
}

// Issue 36: roofline --kernel 'REGEX' crashed (stack overflow in std::regex)
// on kernel names of 20,000 characters and more.
TEST(BoundedRegex, LongerNamesNeverMatchAndDoNotCrash) {
  const std::regex re("gemm.*x", std::regex::ECMAScript);
  const std::string huge = "gemm" + std::string(1'000'000, 'a') + "x";
  EXPECT_TRUE(RegexSubjectTooLong(huge));
  EXPECT_FALSE(BoundedRegexSearch(huge, re));
  EXPECT_FALSE(BoundedRegexSearch(std::string(kMaxRegexSubject + 1, 'g'), std::regex("g")));
}

}  // namespace
}  // namespace stepscope
