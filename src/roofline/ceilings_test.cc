#include "roofline/ceilings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/file_util.h"

namespace stepscope {
namespace {

Ceilings Gpu(const std::string& name, const std::string& uuid, double bf16) {
  Ceilings c;
  c.gpu_name = name;
  c.uuid = uuid;
  c.cc = "9.0";
  c.sm_count = 132;
  c.measured_at = "2025-01-01T00:00:00Z";
  c.values["tensor_bf16"] = {bf16, "cuBLASLt 8192^3"};
  c.values["dram_bw"] = {3.01e12, "copy"};
  return c;
}

TEST(Ceilings, StoreKeepsOtherGpusAndReplacesTheSameOne) {
  std::string path = ::testing::TempDir() + "/ceil-" + std::to_string(::getpid()) + "/sub/c.json";
  ASSERT_TRUE(SaveCeilings(path, Gpu("H100", "GPU-a", 700e12)).ok());
  ASSERT_TRUE(SaveCeilings(path, Gpu("H200", "GPU-b", 790e12)).ok());
  ASSERT_TRUE(SaveCeilings(path, Gpu("H100", "GPU-a", 798e12)).ok());
  auto store = LoadCeilingsStore(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_EQ(store->gpus.size(), 2u);
  std::string how;
  auto h100 = FindCeilings(*store, "H100", "GPU-a", &how);
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(how, "uuid");
  EXPECT_DOUBLE_EQ(h100->Get("tensor_bf16"), 798e12);
  EXPECT_EQ(h100->values.at("tensor_bf16").detail, "cuBLASLt 8192^3");
  EXPECT_EQ(h100->sm_count, 132);
  EXPECT_DOUBLE_EQ(h100->Get("fp8_nonexistent"), 0);
  // Another H100 (other uuid) falls back to the same model's entry.
  auto other = FindCeilings(*store, "H100", "GPU-zzz", &how);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(how, "name");
  auto none = FindCeilings(*store, "A100", "GPU-c", &how);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("run 'stepscope bench'"), std::string::npos);
}

TEST(Ceilings, MissingFileIsAnEmptyStoreAndBadFilesSayWhere) {
  auto empty = LoadCeilingsStore("/nonexistent/dir/c.json");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->gpus.empty());
  auto bad = ParseCeilingsStore("{\"format\": \"other\"}", "x.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "x.json: not a stepscope ceilings file (no \"format\": \"stepscope-ceilings\")");
  auto bad2 = ParseCeilingsStore(
      "{\"format\": \"stepscope-ceilings\", \"gpus\": {\"k\": {\"ceilings\": {\"dram_bw\": {}}}}}",
      "y.json");
  ASSERT_FALSE(bad2.ok());
  EXPECT_EQ(bad2.status().message(),
            "y.json: gpus[\"k\"]: ceiling \"dram_bw\" has no numeric \"value\"");
  auto bad3 = ParseCeilingsStore("{", "z.json");
  EXPECT_EQ(bad3.status().message(), "z.json: byte 1: expected a member name in quotes");
}

TEST(Ceilings, OneGpuJsonRoundTrip) {
  Ceilings c = Gpu("H200", "GPU-b", 790.5e12);
  auto back = CeilingsFromJson(CeilingsJson(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->gpu_name, "H200");
  EXPECT_EQ(back->uuid, "GPU-b");
  EXPECT_DOUBLE_EQ(back->Get("tensor_bf16"), 790.5e12);
}

TEST(Ceilings, TableShowsReferencesInDisplayUnits) {
  Ceilings c = Gpu("H100", "GPU-a", 798.25e12);
  c.values["h2d_pinned"] = {53.2e9, "pinned"};
  std::string t = CeilingsTable(c).RenderCsv();
  EXPECT_NE(t.find("DRAM bandwidth,3.01,TB/s,lent H100 3.00; lent H200 4.30,copy\n"),
            std::string::npos)
      << t;
  EXPECT_NE(
      t.find("tensor bf16,798.25,TFLOP/s,lent H100 798.00; lent H200 790.00,cuBLASLt 8192^3\n"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("host->device pinned,53.2,GB/s,x86+H100 55.67; GH200 C2C 381.70,pinned\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("host->device pageable,-,GB/s,x86+H100 9.50,not measured\n"), std::string::npos)
      << t;
}

TEST(Ceilings, UuidFormatting) {
  const unsigned char b[16] = {0x5f, 0x3c, 0x01, 0x02, 0xab, 0xcd, 0xef, 0x01,
                               0x23, 0x45, 0x67, 0x89, 0xaa, 0xbb, 0xcc, 0xdd};
  EXPECT_EQ(FormatGpuUuid(b), "GPU-5f3c0102-abcd-ef01-2345-6789aabbccdd");
}

}  // namespace
}  // namespace stepscope
