// The report's GPU metrics (report_gpu_metrics.cc, the GpuMetrics source of
// report_sources.cc) on a real H200 trace with PM samples: train_gpt small in
// fp32, steps 2-7, 1 ms samples of 10 metrics on GPU 0
// (tests/fixtures/gpu/h200_pm_small_fp32_s2_7.sqlite.gz). The lanes are
// checked point by point against the model's samples, the section against
// the gpu_metrics_sum recipe, the downsampling against a time-weighted mean
// computed here; the shared fixture trace (no metrics) has neither.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "analysis/model/scope.h"
#include "analysis/recipes/recipes.h"
#include "export/test_fixture.h"
#include "format/gpu_metric_names.h"
#include "report/html_report.h"
#include "report/report_sources.h"

namespace stepscope {
namespace {

// Decompresses a .gz file; false when it cannot be read.
bool Gunzip(const std::string& from, const std::string& to) {
  gzFile in = gzopen(from.c_str(), "rb");
  if (!in) return false;
  FILE* out = std::fopen(to.c_str(), "wb");
  if (!out) {
    gzclose(in);
    return false;
  }
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(in, buf, sizeof(buf))) > 0) std::fwrite(buf, 1, static_cast<size_t>(n), out);
  gzclose(in);
  return std::fclose(out) == 0 && n == 0;
}

class ReportGpuMetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(::testing::TempDir() + "/report-pm-" + std::to_string(::getpid()) +
                            ".sqlite");
    ASSERT_TRUE(
        Gunzip(std::string(STEPSCOPE_GPU_FIXTURES) + "/h200_pm_small_fp32_s2_7.sqlite.gz", *path_));
    auto m = TraceModel::Load(*path_);
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = m->release();
  }
  static void TearDownTestSuite() {
    delete model_;
    std::remove(path_->c_str());
    delete path_;
  }
  static StatusOr<ReportData> Collect(const ReportOptions& o) {
    ASSIGN_OR_RETURN(auto reader, TraceReader::Open(*path_));
    return CollectReportData(*reader, *model_, o);
  }
  // The model's samples of one label on GPU 0 overlapping [lo, hi) (absolute).
  static std::map<int64_t, const GpuMetricRecord*> Samples(std::string_view label, int64_t lo,
                                                           int64_t hi) {
    std::map<int64_t, const GpuMetricRecord*> out;
    for (const GpuMetricRecord& g : model_->gpu_metrics()) {
      if (g.device == 0 && GpuMetricLabel(model_->String(g.metric)) == label && g.end_ns > lo &&
          g.start_ns < hi)
        out[g.start_ns] = &g;
    }
    return out;
  }
  static const StepTimeline::Counter* Lane(const StepTimeline& t, const std::string& metric) {
    for (const StepTimeline::Counter& c : t.counters)
      if (c.metric == metric) return &c;
    return nullptr;
  }
  static std::string* path_;
  static TraceModel* model_;
};
std::string* ReportGpuMetricsTest::path_ = nullptr;
TraceModel* ReportGpuMetricsTest::model_ = nullptr;

TEST_F(ReportGpuMetricsTest, LanesUnderTheStreamOnePointPerSample) {
  auto d = Collect(ReportOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const StepTimeline& t = d->timeline;
  ASSERT_EQ(t.window, "step");
  ASSERT_EQ(t.counters.size(), 3u);
  // Right under GPU 0's last stream lane, in the order tensor, SM, DRAM.
  size_t last_stream = 0;
  for (size_t i = 0; i < t.lanes.size(); ++i)
    if (t.lanes[i].kind == "gpu" || t.lanes[i].kind == "gpu_annotation") last_stream = i;
  const char* names[] = {"GPU 0 tensor_active %", "GPU 0 sm_active %", "GPU 0 DRAM read+write B/s"};
  for (int i = 0; i < 3; ++i) {
    const StepTimeline::Counter& c = t.counters[i];
    EXPECT_EQ(c.lane, static_cast<int32_t>(last_stream + 1 + i));
    EXPECT_EQ(t.lanes[c.lane].name, names[i]);
    EXPECT_EQ(t.lanes[c.lane].kind, "gpu_metric");
  }
  // No event sits on a metric lane.
  for (const StepTimeline::Event& e : t.events) EXPECT_NE(t.lanes[e.lane].kind, "gpu_metric");

  const int64_t origin = model_->origin_ns();
  const int64_t lo = t.start_ns + origin, hi = t.end_ns + origin;
  const auto tensor = Samples("tensor_active", lo, hi);
  const auto read = Samples("dram_read_bw", lo, hi), write = Samples("dram_write_bw", lo, hi);
  ASSERT_GT(tensor.size(), 20u);  // 1 ms samples in a step of about 50 ms
  for (const char* metric : {"tensor_active", "sm_active"}) {
    const StepTimeline::Counter* c = Lane(t, metric);
    ASSERT_NE(c, nullptr);
    const auto samples = Samples(metric, lo, hi);
    EXPECT_EQ(c->unit, "%");
    EXPECT_EQ(c->bucket_ns, 0);
    EXPECT_EQ(c->samples, static_cast<int64_t>(samples.size()));
    ASSERT_EQ(c->t_ns.size(), samples.size());
    auto it = samples.begin();
    for (size_t i = 0; i < c->t_ns.size(); ++i, ++it) {
      EXPECT_EQ(c->t_ns[i] + origin, std::max(it->first, lo));
      EXPECT_DOUBLE_EQ(c->values[i], it->second->value);
    }
    EXPECT_EQ(c->end_ns + origin, std::min(samples.rbegin()->second->end_ns, hi));
    EXPECT_EQ(c->max, 100.0);
  }
  const StepTimeline::Counter* dram = Lane(t, "dram_read_bw+dram_write_bw");
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(dram->unit, "B/s");
  ASSERT_EQ(dram->t_ns.size(), read.size());
  double top = 0;
  for (size_t i = 0; i < dram->t_ns.size(); ++i) {
    const int64_t start = std::next(read.begin(), static_cast<long>(i))->first;
    EXPECT_DOUBLE_EQ(dram->values[i], read.at(start)->value + write.at(start)->value);
    top = std::max(top, dram->values[i]);
  }
  EXPECT_GT(top, 1e11);  // the training step moves hundreds of GB/s
  EXPECT_EQ(dram->max, top);
}

TEST_F(ReportGpuMetricsTest, SectionIsTheRecipeOverTheSteadySteps) {
  auto d = Collect(ReportOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_GT(d->step_summary.steady, 0);
  EXPECT_EQ(d->gpu_metrics_range,
            std::to_string(d->focus_start_ns) + "ns:" + std::to_string(d->focus_end_ns) + "ns");
  ScopeSpec spec;
  spec.time_range = d->gpu_metrics_range;
  RecipeOptions ro;
  auto scope = Scope::Resolve(*model_, spec);
  ASSERT_TRUE(scope.ok());
  ro.scope = *scope;
  auto table = GpuMetricsSum(*model_, ro);
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(d->gpu_metrics.size(), 10u);
  ASSERT_EQ(table->size(), 10u);
  for (size_t i = 0; i < table->size(); ++i) {
    const auto& row = table->rows()[i];
    const GpuMetricRow& r = d->gpu_metrics[i];
    EXPECT_EQ(r.metric, row[1].Text());
    EXPECT_EQ(r.name, row[8].Text());
    EXPECT_EQ(r.samples, std::get<int64_t>(row[3].value));
    EXPECT_DOUBLE_EQ(r.mean, std::get<double>(row[5].value));
    EXPECT_LE(r.min, r.mean);
    EXPECT_GE(r.max, r.mean);
  }
  // The samples starting in the steady steps' windows (steps 2-6: the
  // recording, 324 ms of 1 ms samples, was cut to them).
  int64_t in_steps = 0;
  const int64_t origin = model_->origin_ns();
  for (const GpuMetricRecord& g : model_->gpu_metrics()) {
    in_steps += model_->String(g.metric) == d->gpu_metrics[0].name &&
                g.start_ns >= d->focus_start_ns + origin && g.start_ns < d->focus_end_ns + origin;
  }
  EXPECT_EQ(d->gpu_metrics[0].samples, in_steps);
  EXPECT_GT(in_steps, 300);
  if (!ReportHasChartLibrary()) GTEST_SKIP() << "built without node_modules/echarts";
  auto html = RenderHtmlReport(*d);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("<section id=\"gpu-metrics-section\"><h2>GPU metrics</h2>"),
            std::string::npos);
  EXPECT_NE(html->find("--time-range " + d->gpu_metrics_range), std::string::npos);
  EXPECT_NE(html->find("<td>tensor_active</td>"), std::string::npos);
  EXPECT_NE(html->find("\"metric\":\"dram_read_bw+dram_write_bw\""), std::string::npos);
}

// With a bound of 10 points, each lane's points are the time-weighted means
// of 10 equal buckets of the window, computed here from the samples.
TEST_F(ReportGpuMetricsTest, DownsamplingKeepsTheBoundAndTheMeans) {
  ReportOptions o;
  o.max_counter_points = 10;
  auto d = Collect(o);
  ASSERT_TRUE(d.ok()) << d.status().message();
  const StepTimeline& t = d->timeline;
  ASSERT_EQ(t.counters.size(), 3u);
  const int64_t origin = model_->origin_ns();
  const int64_t lo = t.start_ns + origin, hi = t.end_ns + origin;
  const int64_t w = (hi - lo + 9) / 10;
  for (const StepTimeline::Counter& c : t.counters) {
    EXPECT_LE(c.t_ns.size(), 10u) << c.metric;
    EXPECT_GE(c.t_ns.size(), 9u) << c.metric;  // every bucket but an uncovered edge
    EXPECT_EQ(c.bucket_ns, w);
    EXPECT_GT(c.samples, 10);
  }
  const StepTimeline::Counter* sm = Lane(t, "sm_active");
  ASSERT_NE(sm, nullptr);
  const auto samples = Samples("sm_active", lo, hi);
  for (size_t i = 0; i < sm->t_ns.size(); ++i) {
    const int64_t b = sm->t_ns[i] + origin, be = std::min(b + w, hi);
    EXPECT_EQ((b - lo) % w, 0);
    double sum = 0, covered = 0;
    for (const auto& [start, g] : samples) {
      const double ov =
          static_cast<double>(std::min({g->end_ns, be, hi}) - std::max({g->start_ns, b, lo}));
      if (ov > 0) {
        sum += g->value * ov;
        covered += ov;
      }
    }
    ASSERT_GT(covered, 0);
    EXPECT_NEAR(sm->values[i], sum / covered, 1e-9);
  }
}

// The shared fixture trace has no GPU metrics: no lane, no section.
TEST(ReportGpuMetricsNone, NoLaneNoSection) {
  const std::string path =
      ::testing::TempDir() + "/report-nopm-" + std::to_string(::getpid()) + ".sqlite";
  ASSERT_TRUE(testing_fixture::WriteFixtureTrace(path).ok());
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok());
  auto m = TraceModel::Load(path);
  ASSERT_TRUE(m.ok());
  auto d = CollectReportData(**r, **m, ReportOptions{});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->timeline.window.empty());
  EXPECT_TRUE(d->timeline.counters.empty());
  EXPECT_TRUE(d->gpu_metrics.empty());
  for (const StepTimeline::Lane& l : d->timeline.lanes) EXPECT_NE(l.kind, "gpu_metric");
  const std::string json = ReportDataJson(*d);
  EXPECT_NE(json.find("\"counters\":[]"), std::string::npos);
  EXPECT_NE(json.find("\"gpu_metrics\":[]"), std::string::npos);
  std::remove(path.c_str());
  if (!ReportHasChartLibrary()) GTEST_SKIP() << "built without node_modules/echarts";
  auto html = RenderHtmlReport(*d);
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(html->find("gpu-metrics-section"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
