// The report's data sections on the shared fixture trace (numbers derived by
// hand in the comments) and the HTML's safety properties. The browser test
// (tests/browser/report_browser_test.mjs) checks the rendered page.
#include <gtest/gtest.h>
#include <unistd.h>

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
    auto d = CollectReportData(**r, ReportOptions{});
    ASSERT_TRUE(d.ok()) << d.status().message();
    data_ = std::move(*d);
  }
  std::string path_;
  ReportData data_;
};

TEST_F(ReportTest, SummaryAndSteps) {
  EXPECT_EQ(data_.summary.origin_ns, 500);      // the first memory event
  EXPECT_EQ(data_.summary.duration_ns, 11500);  // to the end of "step 2" at 12000
  EXPECT_EQ(data_.summary.kernels, 8);
  EXPECT_EQ(data_.summary.kernel_time_ns, 4250);
  ASSERT_EQ(data_.steps.size(), 2u);
  EXPECT_EQ(data_.steps[0].number, 1);
  EXPECT_EQ(data_.steps[0].start_ns, 500);  // relative to the origin
  EXPECT_EQ(data_.steps[0].end_ns, 9500);
  EXPECT_EQ(data_.steps[1].number, 2);
}

TEST_F(ReportTest, BreakdownPerStep) {
  // Step 1 [1000, 10000): compute = [1400,3500) + [3650,3800) = 2250; the
  // nccl kernel [3600,3700) adds communication only where no compute runs:
  // 50; the memcpy [3800,4000) 200 (the memset is under compute); idle the rest.
  const Breakdown& b1 = data_.steps[0].breakdown;
  EXPECT_EQ(b1.compute_ns, 2250);
  EXPECT_EQ(b1.communication_ns, 50);
  EXPECT_EQ(b1.memcpy_ns, 200);
  EXPECT_EQ(b1.idle_ns, 6500);
  // Step 2 [10000, 12000): one kernel of 1000 ns.
  EXPECT_EQ(data_.steps[1].breakdown.compute_ns, 1000);
  EXPECT_EQ(data_.steps[1].breakdown.idle_ns, 1000);
  EXPECT_EQ(data_.breakdown.compute_ns, 3250);
  EXPECT_EQ(data_.breakdown.idle_ns, 7500);
  EXPECT_EQ(data_.breakdown_window, "steps 1-2");
}

TEST_F(ReportTest, TopKernelsAndSeries) {
  ASSERT_FALSE(data_.top_kernels.empty());
  EXPECT_EQ(data_.top_kernels[0].name, "gemm_bf16");  // 1600 + 1000 ns of 4250
  EXPECT_EQ(data_.top_kernels[0].count, 2);
  EXPECT_NEAR(data_.top_kernels[0].percent, 100.0 * 2600 / 4250, 1e-9);
  EXPECT_EQ(data_.top_kernels[1].name, fx::kHostileName);  // 500 ns
  ASSERT_EQ(data_.memory.size(), 1u);
  EXPECT_EQ(data_.memory[0].peak, 3 << 20);
  EXPECT_EQ(data_.memory[0].peak_t_ns, 100);  // at 600, origin 500
  EXPECT_EQ(data_.memory[0].capacity, 16ll << 30);
  EXPECT_EQ(data_.memory_unknown_frees, 1);
  ASSERT_EQ(data_.utilization.size(), 1u);
  EXPECT_FALSE(data_.utilization[0].values.empty());
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
