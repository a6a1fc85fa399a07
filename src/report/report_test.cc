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
  EXPECT_EQ(data_.summary.origin_ns, ORIGIN);
  EXPECT_EQ(data_.summary.duration_ns, DURATION);
  EXPECT_EQ(data_.summary.kernels, 8);
  EXPECT_EQ(data_.summary.kernel_time_ns, 4250);
  ASSERT_EQ(data_.steps.size(), 2u);
  EXPECT_EQ(data_.step_summary.method, "nvtx");
  EXPECT_EQ(data_.steps[0].number, 1);
  EXPECT_EQ(data_.steps[0].start_ns, STEP1_START);  // relative to the origin
  EXPECT_EQ(data_.steps[0].end_ns, STEP1_END);
  EXPECT_EQ(data_.steps[1].number, 2);
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
  BREAKDOWN
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
  FINDINGS
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
  UTIL
}

TEST_F(ReportTest, MemoryTimelinePeakAndLiveSet) {
  // Device allocations of 1 MiB at 500 and 2 MiB at 600 (the pinned 8 MiB is
  // host memory); 1 MiB freed at 9000; the free of 0x9999 predates the trace.
  ASSERT_EQ(data_.memory.size(), 1u);
  EXPECT_EQ(data_.memory[0].name, "gpu0 total");
  EXPECT_EQ(data_.memory[0].peak, 3 << 20);
  EXPECT_EQ(data_.memory[0].peak_t_ns, 600 - ORIGIN);
  EXPECT_EQ(data_.memory[0].capacity, 16ll << 30);
  EXPECT_EQ(data_.memory_unknown_frees, 1);
  ASSERT_EQ(data_.memory_peaks.size(), 1u);
  const MemoryPeak& p = data_.memory_peaks[0];
  EXPECT_EQ(p.place, "gpu0");
  EXPECT_EQ(p.peak_bytes, 3 << 20);
  ASSERT_FALSE(p.live.empty());
  int64_t live = 0;
  for (const MemoryPeak::Group& g : p.live) live += g.bytes;
  EXPECT_EQ(live, 3 << 20);  // both device allocations are live at the peak
  LIVE
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
