// The report's data sections on the shared fixture trace (numbers derived by
// hand in the comments) and the HTML's safety properties. The browser test
// (tests/browser/report_browser_test.mjs) checks the rendered page.
#include <gtest/gtest.h>
#include <unistd.h>

#include "analysis/rules.h"
#include "analysis/steps.h"
#include "export/test_fixture.h"
#include "report/html_report.h"
#include "report/report_sources.h"

namespace stepscope {
namespace {

namespace fx = testing_fixture;

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/report-fixture-" + std::to_string(::getpid()) + ".sqlite";
    ASSERT_TRUE(fx::WriteFixtureTrace(path_).ok());
    auto r = TraceReader::Open(path_);
    ASSERT_TRUE(r.ok());
    auto m = TraceModel::Load(path_);
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::move(*m);
    auto d = CollectReportData(**r, *model_, ReportOptions{});
    ASSERT_TRUE(d.ok()) << d.status().message();
    data_ = std::move(*d);
  }
  std::string path_;
  std::unique_ptr<TraceModel> model_;
  ReportData data_;
};

TEST_F(ReportTest, SummaryAndSteps) {
  EXPECT_EQ(data_.summary.origin_ns, model_->origin_ns());
  EXPECT_EQ(data_.summary.origin_ns, 500);      // the first memory event
  EXPECT_EQ(data_.summary.duration_ns, 11500);  // to the end of "step 2" at 12000
  EXPECT_EQ(data_.summary.kernels, 8);
  EXPECT_EQ(data_.summary.kernel_time_ns, 4250);
  ASSERT_EQ(data_.steps.size(), 2u);
  EXPECT_EQ(data_.step_summary.method, "nvtx");
  EXPECT_EQ(data_.steps[0].number, 1);
  // Step 1's window: from its range start (1000, before its first GPU op at
  // 1400) to the end of the work it launched (the memcpy ends at 4000).
  EXPECT_EQ(data_.steps[0].start_ns, 500);  // relative to the origin
  EXPECT_EQ(data_.steps[0].end_ns, 3500);
  EXPECT_EQ(data_.steps[0].gpu_ops, 7);  // 2 kernels, 3 graph kernels, memcpy, memset
  EXPECT_EQ(data_.steps[0].status, "ok");
  // Step 2 launched nothing (its kernel has no api row): its window runs from
  // step 1's end to its range end, 12000.
  EXPECT_EQ(data_.steps[1].number, 2);
  EXPECT_EQ(data_.steps[1].start_ns, 3500);
  EXPECT_EQ(data_.steps[1].end_ns, 11500);
  EXPECT_EQ(data_.steps[1].gpu_ops, 0);
  EXPECT_EQ(data_.step_summary.steady, 2);  // 3000 < 1.25 x median 5500: no warm-up
}

// The report shows the step detector's numbers, unchanged.
TEST_F(ReportTest, StepsAreTheAnalysisLibrarys) {
  auto set = DetectSteps(*model_, StepOptions{});
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(set->steps.size(), data_.steps.size());
  for (size_t i = 0; i < data_.steps.size(); ++i) {
    const Step& s = set->steps[i];
    const StepRow& r = data_.steps[i];
    EXPECT_EQ(r.start_ns, s.start_ns - model_->origin_ns());
    EXPECT_EQ(r.end_ns, s.end_ns - model_->origin_ns());
    EXPECT_EQ(r.breakdown.compute, s.breakdown.compute);
    EXPECT_EQ(r.breakdown.communication, s.breakdown.communication);
    EXPECT_EQ(r.breakdown.memory, s.breakdown.memory);
    EXPECT_EQ(r.breakdown.idle, s.breakdown.idle);
    EXPECT_EQ(r.gpu_ops, s.gpu_ops);
  }
  EXPECT_EQ(data_.step_summary.steady, set->stats.count);
  EXPECT_EQ(data_.step_summary.median_ns, set->stats.median);
}

TEST_F(ReportTest, BreakdownPerStep) {
  // Step 1 [1000, 4000): compute = [1400,3500) + [3650,3800) = 2250; the
  // nccl kernel [3600,3700) adds communication only where no compute runs:
  // 50; the memcpy [3800,4000) 200 (the memset is under compute); idle 500.
  const Breakdown& b1 = data_.steps[0].breakdown;
  EXPECT_EQ(b1.span, 3000);
  EXPECT_EQ(b1.compute, 2250);
  EXPECT_EQ(b1.communication, 50);
  EXPECT_EQ(b1.memory, 200);
  EXPECT_EQ(b1.idle, 500);
  // Step 2 [4000, 12000): one kernel of 1000 ns.
  EXPECT_EQ(data_.steps[1].breakdown.compute, 1000);
  EXPECT_EQ(data_.steps[1].breakdown.idle, 7000);
  // Both steps are steady: the donut is their sum.
  EXPECT_EQ(data_.breakdown.span, 11000);
  EXPECT_EQ(data_.breakdown.compute, 3250);
  EXPECT_EQ(data_.breakdown.communication, 50);
  EXPECT_EQ(data_.breakdown.memory, 200);
  EXPECT_EQ(data_.breakdown.idle, 7500);
  EXPECT_EQ(data_.breakdown_window, "the 2 steady steps (complete, not warm-up)");
}

TEST_F(ReportTest, FindingsAreAnalyzes) {
  auto a = Analyze(*model_, AnalyzeOptions{});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(data_.findings.size(), a->findings.size());
  for (size_t i = 0; i < data_.findings.size(); ++i) {
    EXPECT_EQ(data_.findings[i].rule, a->findings[i].rule);
    EXPECT_EQ(data_.findings[i].cost_ns, a->findings[i].cost_ns);
    EXPECT_EQ(data_.findings[i].fix, a->findings[i].fix);
  }
  EXPECT_EQ(data_.analyzed.analyzed_ns, a->analyzed_ns);
  EXPECT_EQ(data_.analyzed.device, 0);
  // The two step windows, 11000 ns, of which 3500 busy (the breakdown above).
  EXPECT_EQ(data_.analyzed.analyzed_ns, 11000);
  EXPECT_EQ(data_.analyzed.busy_ns, 3500);
  EXPECT_EQ(data_.analyzed.idle_ns, 7500);
  if (data_.findings.empty()) EXPECT_FALSE(data_.findings_note.empty());
}

TEST_F(ReportTest, TopKernelsAndSeries) {
  ASSERT_FALSE(data_.top_kernels.empty());
  EXPECT_EQ(data_.top_kernels[0].name, "gemm_bf16");  // 1600 + 1000 ns of 4250
  EXPECT_EQ(data_.top_kernels[0].count, 2);
  EXPECT_EQ(data_.top_kernels[0].total_ns, 2600);
  EXPECT_NEAR(data_.top_kernels[0].percent, 100.0 * 2600 / 4250, 1e-9);
  EXPECT_EQ(data_.top_kernels[1].name, fx::kHostileName);  // 500 ns
  ASSERT_EQ(data_.utilization.size(), 1u);
  EXPECT_EQ(data_.utilization[0].values.size(), 500u);
  // gpu_time_util over the GPU span [1400, 11500): the first bucket, [1400,
  // 1420), relative 900, is inside gemm_bf16: 100%.
  EXPECT_EQ(data_.utilization[0].t_ns[0], 900);
  EXPECT_DOUBLE_EQ(data_.utilization[0].values[0], 100.0);
}

TEST_F(ReportTest, MemoryTimelinePeakAndLiveSet) {
  // Device allocations of 1 MiB at 500 and 2 MiB at 600 (the pinned 8 MiB is
  // host memory); 1 MiB freed at 9000; the free of 0x9999 predates the trace.
  ASSERT_EQ(data_.memory.size(), 1u);
  EXPECT_EQ(data_.memory[0].name, "gpu0 total");
  EXPECT_EQ(data_.memory[0].peak, 3 << 20);
  EXPECT_EQ(data_.memory[0].peak_t_ns, 100);
  EXPECT_EQ(data_.memory[0].capacity, 16ll << 30);
  EXPECT_EQ(data_.memory_unknown_frees, 1);
  ASSERT_EQ(data_.memory_peaks.size(), 1u);
  const MemoryPeak& p = data_.memory_peaks[0];
  EXPECT_EQ(p.place, "gpu0");
  EXPECT_EQ(p.peak_bytes, 3 << 20);
  ASSERT_FALSE(p.live.empty());
  int64_t live = 0;
  for (const MemoryPeak::Group& g : p.live) live += g.bytes;
  EXPECT_EQ(live, 3 << 20);      // both device allocations are live at the peak
  ASSERT_EQ(p.live.size(), 1u);  // no api rows: one group
  EXPECT_EQ(p.live[0].count, 2);
  EXPECT_EQ(p.step, -1);  // 600 is before "step 1" opens
  // The series: 1 MiB at 500, 3 MiB at 600, 2 MiB after the free at 9000.
  const SeriesData& s = data_.memory[0];
  ASSERT_EQ(s.t_ns.size(), 3u);
  EXPECT_EQ(s.t_ns[2], 8500);
  EXPECT_EQ(s.values[2], 2 << 20);
}

TEST_F(ReportTest, HtmlKeepsTraceStringsInertAndMakesNoRequest) {
  if (!ReportHasChartLibrary()) GTEST_SKIP() << "built without node_modules/echarts";
  auto html = RenderHtmlReport(data_);
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_EQ(html->find(fx::kHostileName), std::string::npos);
  EXPECT_NE(html->find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos);
  // Three script elements: the data block and two scripts with the nonce.
  auto count = [&](const std::string& s, const std::string& needle) {
    size_t n = 0;
    for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(*html, "<script nonce=\""), 2u);
  EXPECT_EQ(count(*html, "<script type=\"application/json\""), 1u);
  EXPECT_NE(
      html->find("Content-Security-Policy\" content=\"default-src 'none'; script-src 'nonce-"),
      std::string::npos);
  // The page outside the embedded library references no external resource.
  std::string page = *html;
  size_t lib = page.find("<script nonce=");
  std::string head = page.substr(0, lib);
  EXPECT_EQ(count(head, "<script"), 1u);
  EXPECT_EQ(head.find(" src="), std::string::npos);
  EXPECT_EQ(head.find("<link"), std::string::npos);
  EXPECT_EQ(head.find("url("), std::string::npos);
}

TEST(ReportJson, EscapesEveryHtmlSpecialCharacter) {
  ReportData d;
  d.summary.trace_path = "a<b>&c\"d</script><!--";
  std::string json = ReportDataJson(d);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find('>'), std::string::npos);
  for (const char* bad : {",,", "{,", "[,", ",}", ",]", ":,"})
    EXPECT_EQ(json.find(bad), std::string::npos) << bad;
  EXPECT_EQ(json.substr(0, 12), "{\"summary\":{");
  EXPECT_NE(json.find("a\\u003cb\\u003e\\u0026c\\\"d\\u003c/script\\u003e\\u003c!--"),
            std::string::npos);
}

}  // namespace
}  // namespace stepscope
