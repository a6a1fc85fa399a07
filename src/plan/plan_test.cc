#include "plan/plan.h"

#include <gtest/gtest.h>

TEST(Plan, Placeholder) { EXPECT_TRUE(true); }
