#include "importers/exact_decimal.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

int64_t Ns(const char* us, DecimalStatus expect = DecimalStatus::kOk) {
  int64_t v = -999;
  EXPECT_EQ(DecimalToScaledInt(us, 3, &v), expect) << us;
  return v;
}

TEST(ExactDecimal, KinetoMicrosecondsToNanosecondsExactly) {
  // 13 integer digits + 3 decimals: a double would lose the last digit.
  EXPECT_EQ(Ns("7253021563398.373"), 7253021563398373);
  EXPECT_EQ(Ns("4386008289149.551"), 4386008289149551);
  EXPECT_EQ(Ns("0.250"), 250);
  EXPECT_EQ(Ns("40.475"), 40475);
  EXPECT_EQ(Ns("4386008289021.0"), 4386008289021000);
  EXPECT_EQ(Ns("12"), 12000);
  EXPECT_EQ(Ns("-3.5"), -3500);
  EXPECT_EQ(Ns("0"), 0);
}

TEST(ExactDecimal, Exponents) {
  EXPECT_EQ(Ns("1e3"), 1000000);
  EXPECT_EQ(Ns("1.5E-3", DecimalStatus::kRounded), 2);  // 1.5 ns
  EXPECT_EQ(Ns("2.5e-1"), 250);
  EXPECT_EQ(Ns("1e+2"), 100000);
}

TEST(ExactDecimal, SubNanosecondDigitsRoundHalfAwayFromZero) {
  EXPECT_EQ(Ns("1.0004", DecimalStatus::kRounded), 1000);
  EXPECT_EQ(Ns("1.0005", DecimalStatus::kRounded), 1001);
  EXPECT_EQ(Ns("-1.0005", DecimalStatus::kRounded), -1001);
  EXPECT_EQ(Ns("0.0000001", DecimalStatus::kRounded), 0);
  EXPECT_EQ(Ns("1.00050000", DecimalStatus::kRounded), 1001);
  EXPECT_EQ(Ns("1.000000"), 1000);  // trailing zeros are not rounding
}

TEST(ExactDecimal, RangeAndSyntax) {
  int64_t v;
  EXPECT_EQ(DecimalToScaledInt("9223372036854775.807", 3, &v), DecimalStatus::kOk);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(DecimalToScaledInt("-9223372036854775.808", 3, &v), DecimalStatus::kOk);
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_EQ(DecimalToScaledInt("9223372036854775.808", 3, &v), DecimalStatus::kOverflow);
  EXPECT_EQ(DecimalToScaledInt("1e30", 3, &v), DecimalStatus::kOverflow);
  EXPECT_EQ(DecimalToScaledInt("1e99999999999", 3, &v), DecimalStatus::kOverflow);
  EXPECT_EQ(DecimalToScaledInt("1e-99999999999", 3, &v), DecimalStatus::kRounded);
  EXPECT_EQ(v, 0);
  for (const char* bad : {"", "-", ".5", "1.", "1e", "1e+", "abc", "1.2.3", "0x10", " 1"}) {
    EXPECT_EQ(DecimalToScaledInt(bad, 3, &v), DecimalStatus::kInvalid) << bad;
  }
}

}  // namespace
}  // namespace stepscope
