// The driver's unified-memory totals without CUDA (CI has no GPU): Open()
// refuses with a reason and the totals read zero; nothing is left open.
#include "capture/uvm_counters.h"

#include <dirent.h>
#include <gtest/gtest.h>

namespace stepscope {
namespace {

int OpenFds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

TEST(UvmToolsCounters, RefusesWithoutACudaContext) {
  const int before = OpenFds();
  UvmToolsCounters c;
  std::string why;
  EXPECT_FALSE(c.Open(&why));
  EXPECT_NE(why.find("/dev/nvidia-uvm"), std::string::npos) << why;
  EXPECT_FALSE(c.is_open());
  EXPECT_EQ(c.Read(), UvmTotals{});
  EXPECT_EQ(OpenFds(), before);
}

}  // namespace
}  // namespace stepscope
