#include "capture/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace stepscope {
namespace {

TEST(CaptureConfig, DiagOffParts) {
  ::setenv("STEPSCOPE_DIAG_OFF", "api,stacks,sampling,bogus", 1);
  CaptureConfig c = CaptureConfig::FromEnv(nullptr);
  ::unsetenv("STEPSCOPE_DIAG_OFF");
  EXPECT_TRUE(c.diag_off.api);
  EXPECT_FALSE(c.python_stacks);
  EXPECT_TRUE(c.diag_off.sampling);
  EXPECT_FALSE(c.diag_off.memory);
}

// Recording window k uses set k mod n; every window starts from the base.
TEST(CaptureConfig, DiagCycleWindows) {
  ::setenv("STEPSCOPE_DIAG_CYCLE", "none;api;stacks,memory", 1);
  CaptureConfig c = CaptureConfig::FromEnv(nullptr);
  ::unsetenv("STEPSCOPE_DIAG_CYCLE");
  ASSERT_EQ(c.diag_cycle.size(), 3u);
  const CaptureConfig base = c;
  c.ApplyDiagCycle(base, 0);
  EXPECT_FALSE(c.diag_off.api);
  EXPECT_TRUE(c.python_stacks);
  c.ApplyDiagCycle(base, 1);
  EXPECT_TRUE(c.diag_off.api);
  EXPECT_TRUE(c.python_stacks);
  c.ApplyDiagCycle(base, 2);
  EXPECT_FALSE(c.diag_off.api);
  EXPECT_FALSE(c.python_stacks);
  EXPECT_TRUE(c.diag_off.memory);
  c.ApplyDiagCycle(base, 3);  // wraps to "none"
  EXPECT_FALSE(c.diag_off.memory);
  EXPECT_TRUE(c.python_stacks);
}

}  // namespace
}  // namespace stepscope
