#include "capture/correlation_epochs.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

// No detach: ids pass through unchanged.
TEST(CorrelationEpochs, FirstEpochKeepsTheIds) {
  CorrelationEpochs e;
  EXPECT_EQ(e.Map(1), 1u);
  EXPECT_EQ(e.Map(70000), 70000u);
  EXPECT_EQ(e.offset(), 0u);
}

// CUPTI counts on after a finalize: nothing moves.
TEST(CorrelationEpochs, IdsThatGoOnKeepTheirValues) {
  CorrelationEpochs e;
  EXPECT_EQ(e.Map(500), 500u);
  e.NewEpoch(520);
  EXPECT_EQ(e.Map(600), 600u);
  EXPECT_EQ(e.Map(601), 601u);
  EXPECT_EQ(e.offset(), 0u);
}

// CUPTI starts again from 1: every id of the new window lies past the old ones,
// and a third window past the second's.
TEST(CorrelationEpochs, IdsThatStartAgainMovePastEveryEarlierId) {
  CorrelationEpochs e;
  EXPECT_EQ(e.Map(300), 300u);
  e.NewEpoch(310);
  const uint32_t first = e.Map(1);
  EXPECT_GT(first, 310u);
  EXPECT_EQ(e.Map(2), first + 1);
  EXPECT_EQ(e.Map(400), first + 399);  // later ids above the old last id stay in the epoch
  e.NewEpoch(450);
  const uint32_t third = e.Map(3);
  EXPECT_GT(third, first + 449);
}

}  // namespace
}  // namespace stepscope
