#include "roofline/profile_io.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(ProfileIo, TargetsRoundTrip) {
  ProfileTargets t;
  t.instances = 3;
  t.skip = 1;
  KernelTarget k;
  k.name = "void gemm<128>(float*)";
  k.mangled = "_Z4gemmILi128EEvPf";
  k.grid[0] = 132;
  k.grid[1] = 2;
  k.grid[2] = 1;
  k.block[0] = 384;
  k.block[1] = k.block[2] = 1;
  t.kernels.push_back(k);
  auto back = ParseTargets(TargetsJson(t));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->instances, 3);
  EXPECT_EQ(back->skip, 1);
  ASSERT_EQ(back->kernels.size(), 1u);
  EXPECT_EQ(back->kernels[0].mangled, k.mangled);
  EXPECT_EQ(back->kernels[0].grid[1], 2);
  EXPECT_EQ(back->kernels[0].block[0], 384);
  EXPECT_FALSE(ParseTargets("{\"kernels\": [{\"name\": \"x\", \"grid\": [1,2]}]}").ok());
}

TEST(ProfileIo, ResultLinesAndATruncatedTail) {
  ProfileDevice d{"NVIDIA H200", "GPU-1", "gh100", 12, {}, {"gpu__time_duration.sum"}};
  ProfileDevice d2 = d;  // the memory-only run's line
  d2.passes = 1;
  ProfileInstance i;
  i.target = 0;
  i.launch_index = 7;
  i.name = "_Z4gemm";
  i.grid[0] = 66;
  i.ranges = 1;
  i.group = "memory";
  i.counters = {{"gpu__time_duration.sum", 1234.5}, {"dram__bytes_read.sum", 1e9}};
  std::string text = DeviceLine(d) + DeviceLine(d2) + InstanceLine(i) +
                     MessageLine({false, 0, "a note"}) + MessageLine({true, 35, "no permission"}) +
                     "{\"type\": \"instance\", \"targ";
  ProfileResults r = ParseResults(text);
  ASSERT_TRUE(r.has_device);
  EXPECT_EQ(r.device.chip, "gh100");
  EXPECT_EQ(r.device.passes, 12);
  EXPECT_EQ(r.device.run_passes, (std::vector<int>{12, 1}));
  ASSERT_EQ(r.instances.size(), 1u);
  EXPECT_EQ(r.instances[0].launch_index, 7);
  EXPECT_EQ(r.instances[0].group, "memory");
  EXPECT_EQ(r.instances[0].grid[0], 66);
  EXPECT_DOUBLE_EQ(r.instances[0].counters.at("gpu__time_duration.sum"), 1234.5);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_FALSE(r.messages[0].error);
  EXPECT_TRUE(r.messages[1].error);
  EXPECT_EQ(r.messages[1].code, 35);
  EXPECT_EQ(r.bad_lines, 1);
}

TEST(ProfileIo, PermissionErrorNamesTheFix) {
  std::string m = ExplainCuptiError(35, "cuptiProfilerInitialize", false);
  EXPECT_NE(m.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(m.find("root"), std::string::npos);
  EXPECT_NE(ExplainCuptiError(27, "x", true).find("MPS"), std::string::npos);
  EXPECT_NE(ExplainCuptiError(43, "x", false).find("MIG"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
