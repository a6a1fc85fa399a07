// The machine constants (machine_constants.h): the table of GPU models by
// name, bench results first, unknown GPUs said so.
#include "analysis/model/machine_constants.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(MachineConstants, ModelsByCudaName) {
  auto model = [](const char* name) {
    const GpuModel* g = FindGpuModel(name);
    return g ? std::string(g->model) : std::string("none");
  };
  EXPECT_EQ(model("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(model("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(model("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(model("NVIDIA H200"), "H200 SXM");
  EXPECT_EQ(model("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(model("NVIDIA GH200 480GB"), "GH200");  // not an H200
  EXPECT_EQ(model("NVIDIA A100-SXM4-80GB"), "A100 SXM");
  EXPECT_EQ(model("NVIDIA A100-PCIE-40GB"), "A100 PCIe");
  EXPECT_EQ(model("NVIDIA A100 80GB PCIe"), "A100 PCIe");
  EXPECT_EQ(model("NVIDIA L4"), "none");
  EXPECT_EQ(model(""), "none");
}

TEST(MachineConstants, TableValuesAndSource) {
  MachineConstants h100("NVIDIA H100 80GB HBM3", nullptr);
  EXPECT_DOUBLE_EQ(h100.Get("tensor_bf16").value, 989.5e12);
  EXPECT_DOUBLE_EQ(h100.Get("h2d_pinned").value, 55.67e9);
  EXPECT_DOUBLE_EQ(h100.Get("h2d_pageable").value, 9.5e9);
  EXPECT_EQ(h100.Get("fp32").source, "H100 SXM table");
  EXPECT_FALSE(h100.Get("fp32").bench);
  EXPECT_FALSE(h100.Get("dram_bw").known());  // not a table key
  // The H200's own host link, not the H100's.
  MachineConstants h200("NVIDIA H200", nullptr);
  EXPECT_DOUBLE_EQ(h200.Get("h2d_pageable").value, 10.8e9);
  // A100: no pageable figure.
  MachineConstants a100("NVIDIA A100-SXM4-80GB", nullptr);
  EXPECT_FALSE(a100.Get("h2d_pageable").known());
  EXPECT_NE(a100.Unknown("h2d_pageable").find("A100 SXM table has no h2d_pageable"),
            std::string::npos);
}

TEST(MachineConstants, BenchResultsFirstPerKey) {
  BenchResults b{"NVIDIA H100 80GB HBM3",
                 "lent-h100",
                 "2026-11-27T10:00:00Z",
                 {{"h2d_pinned", 25e9}, {"fp32", 0}}};
  MachineConstants mc("NVIDIA H100 80GB HBM3", &b);
  const MachineValue pinned = mc.Get("h2d_pinned");
  EXPECT_DOUBLE_EQ(pinned.value, 25e9);
  EXPECT_TRUE(pinned.bench);
  EXPECT_EQ(pinned.source, "bench results of lent-h100 2026-11-27");
  // Not measured (or 0): the table's.
  EXPECT_EQ(mc.Get("fp32").source, "H100 SXM table");
  EXPECT_EQ(mc.SourceOf({"h2d_pinned", "fp32", "tensor_bf16"}),
            "bench results of lent-h100 2026-11-27 and H100 SXM table");
  b.host.clear();
  EXPECT_EQ(MachineConstants("x", &b).Get("h2d_pinned").source, "bench results of 2026-11-27");
}

TEST(MachineConstants, UnknownGpuIsSaidNotGuessed) {
  MachineConstants mc("NVIDIA L4", nullptr);
  EXPECT_FALSE(mc.Get("tensor_bf16").known());
  EXPECT_EQ(mc.SourceOf({"tensor_bf16"}), "");
  EXPECT_NE(mc.Unknown("tensor_bf16").find("GPU 'NVIDIA L4' is not in the table of GPU models"),
            std::string::npos);
  EXPECT_NE(MachineConstants().Unknown("fp32").find("no devices row"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
