// The GPU metrics as the rules read them (gpu_metric_samples.h): samples by
// interval, clipped weights, stretches, kernels by overlap.
#include "analysis/rules/gpu_metric_samples.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

constexpr StringId kGr = 1, kTensor = 2, kRead = 3, kWrite = 4, kOther = 5, kGemm = 6, kCopy = 7;

// Four 10-unit samples of device 0 from t=100 (and one of device 1): busy
// without tensor work, then a copy near the DRAM peak, then idle.
std::unique_ptr<TraceModel> Model() {
  TraceModel::Records r;
  r.strings = {"",
               "gr__cycles_active.sum.pct_of_peak_sustained_elapsed",
               "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
               "dram__bytes_read.sum.per_second",
               "dram__bytes_write.sum.per_second",
               "foo__bar.sum",
               "sgemm_128x64_nn",
               "copy_kernel"};
  DeviceRecord d{};
  d.id = 0;
  r.devices.push_back(d);
  const double gr[] = {100, 100, 90, 0}, tc[] = {1, 2, 0, 0}, rd[] = {1, 1, 2, 0},
               wr[] = {1, 1, 2, 0};
  for (int k = 0; k < 4; ++k) {
    const int64_t s = 100 + 10 * k, e = s + 10;
    r.gpu_metrics.push_back({s, e, gr[k], 0, kGr});
    r.gpu_metrics.push_back({s, e, tc[k], 0, kTensor});
    r.gpu_metrics.push_back({s, e, rd[k], 0, kRead});
    r.gpu_metrics.push_back({s, e, wr[k], 0, kWrite});
    r.gpu_metrics.push_back({s, e, 7, 0, kOther});
  }
  r.gpu_metrics.push_back({100, 110, 50, 1, kGr});  // another device
  auto kernel = [&](StringId name, int64_t s, int64_t e, uint32_t device) {
    KernelRecord k{};
    k.start_ns = s;
    k.end_ns = e;
    k.device = device;
    k.stream = 7;
    k.name = name;
    r.kernels.push_back(k);
  };
  kernel(kGemm, 95, 118, 0);  // 13 units in [105, 118) below
  kernel(kCopy, 118, 126, 0);
  kernel(kCopy, 121, 125, 1);  // another device
  return TraceModel::FromRecords(std::move(r));
}

TEST(GpuMetricSamples, OneSamplePerIntervalWeightedByTheWindows) {
  auto m = Model();
  // Windows cut the first sample in half and leave out the last.
  const std::vector<Interval> windows = {{105, 130}};
  const std::vector<MetricSample> s = MetricSamples(*m, 0, windows);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].start_ns, 100);
  EXPECT_EQ(s[0].weight_ns, 5);
  EXPECT_EQ(s[1].weight_ns, 10);
  EXPECT_DOUBLE_EQ(s[0].gr_active, 100);
  EXPECT_DOUBLE_EQ(s[1].tensor_active, 2);
  EXPECT_DOUBLE_EQ(s[2].dram_bps(), 4);
  EXPECT_DOUBLE_EQ(s[0].sm_active, -1);  // not sampled
  EXPECT_DOUBLE_EQ(s[0].busy(), 100);
  // (100*5 + 100*10 + 90*10) / 25
  EXPECT_DOUBLE_EQ(WeightedMean(s, [](const MetricSample& x) { return x.gr_active; }), 96);
  EXPECT_DOUBLE_EQ(WeightedMean(s, [](const MetricSample& x) { return x.sm_active; }), -1);
  EXPECT_TRUE(MetricSamples(*m, 0, {}).empty());
  EXPECT_EQ(MetricSamples(*m, 1, windows).size(), 1u);
}

TEST(GpuMetricSamples, StretchesJoinNeighboursAndClipToWindows) {
  auto m = Model();
  const std::vector<Interval> windows = {{105, 115}, {118, 150}};
  const std::vector<MetricSample> s = MetricSamples(*m, 0, windows);
  ASSERT_EQ(s.size(), 4u);
  // The first two samples: one stretch [100, 120), split by the windows.
  std::vector<Interval> v = FlaggedStretches(s, {1, 1, 0, 0}, windows, 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].start, 105);
  EXPECT_EQ(v[0].end, 115);
  EXPECT_EQ(v[1].start, 118);
  EXPECT_EQ(v[1].end, 120);
  // Samples 1 and 3 with a 10-unit hole: joined only with a tolerance that long.
  EXPECT_EQ(FlaggedStretches(s, {1, 0, 1, 0}, {{0, 200}}, 9).size(), 2u);
  EXPECT_EQ(FlaggedStretches(s, {1, 0, 1, 0}, {{0, 200}}, 10).size(), 1u);
}

TEST(GpuMetricSamples, KernelsByOverlapWithTheIntervals) {
  auto m = Model();
  const std::vector<KernelShare> k = KernelsIn(*m, 0, {{105, 120}});
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, kGemm);
  EXPECT_EQ(k[0].ns, 13);
  EXPECT_EQ(k[1].name, kCopy);
  EXPECT_EQ(k[1].ns, 2);  // device 1's copy is not counted
  EXPECT_EQ(TopKernelsText(*m, k, 1), "sgemm_128x64_nn 13 ns (87%)");
  EXPECT_EQ(TopKernelsText(*m, {}, 3), "no kernel");
}

TEST(GpuMetricSamples, MemoryBoundIsAShareOfThePeak) {
  MetricSample s;
  s.dram_read_bps = 2e12;
  s.dram_write_bps = 1.4e12;
  EXPECT_TRUE(MemoryBoundSample(s, {4.8e12, "x"}));    // 70.8%
  EXPECT_FALSE(MemoryBoundSample(s, {4.9e12, "x"}));   // 69.4%
  EXPECT_FALSE(MemoryBoundSample(s, {0, "unknown"}));  // no peak: never
  s.dram_write_bps = -1;                               // one direction not sampled
  EXPECT_FALSE(MemoryBoundSample(s, {1e12, "x"}));
}

}  // namespace
}  // namespace stepscope
