// The report's data sections on the shared fixture trace (numbers derived by
// hand in the comments) and the HTML's safety properties. The browser test
// (tests/browser/report_browser_test.mjs) checks the rendered page.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>

#include <sqlite3.h>

#include "analysis/model/steps.h"
#include "analysis/rules/rules.h"
#include "common/file_util.h"
#include "export/test_fixture.h"
#include "report/html_report.h"
#include "report/report_roofline.h"
#include "report/report_sources.h"
#include "roofline/roofline_report.h"
#include "roofline/roofline_svg.h"
#include "store/sqlite_util.h"

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

// The steady steps' idle by cause sums to analyze's totals, and no step has
// more idle by cause than idle.
TEST_F(ReportTest, IdleByCausePerStepSumsToAnalyze) {
  int64_t sum[4] = {0, 0, 0, 0};
  for (const StepRow& r : data_.steps) {
    int64_t step_sum = 0;
    for (int k = 0; k < 4; ++k) {
      ASSERT_GE(r.idle_by_cause_ns[k], 0);
      step_sum += r.idle_by_cause_ns[k];
      if (r.status == "ok") sum[k] += r.idle_by_cause_ns[k];
    }
    EXPECT_LE(step_sum, r.breakdown.idle) << "step " << r.number;
  }
  EXPECT_EQ(sum[0], data_.analyzed.host_wait_ns);
  EXPECT_EQ(sum[1], data_.analyzed.sync_wait_ns);
  EXPECT_EQ(sum[2], data_.analyzed.kernel_wait_ns);
  EXPECT_EQ(sum[3], data_.analyzed.other_idle_ns);
}

TEST_F(ReportTest, KernelTableTimelineAndFocus) {
  // Every kernel name; the top list is its head.
  ASSERT_GE(data_.kernels.size(), data_.top_kernels.size());
  for (size_t i = 0; i < data_.top_kernels.size(); ++i)
    EXPECT_EQ(data_.kernels[i].name, data_.top_kernels[i].name);
  int64_t total = 0;
  for (const KernelRow& k : data_.kernels) total += k.total_ns;
  EXPECT_EQ(total, data_.summary.kernel_time_ns);
  // The timeline shows a steady step, with GPU ops in a GPU lane.
  ASSERT_GE(data_.timeline.step, 0);
  bool gpu = false;
  for (const StepTimeline::Event& e : data_.timeline.events) {
    ASSERT_LT(static_cast<size_t>(e.lane), data_.timeline.lanes.size());
    ASSERT_LT(static_cast<size_t>(e.name), data_.timeline.names.size());
    EXPECT_LT(e.start_ns, data_.timeline.end_ns);
    EXPECT_GT(e.end_ns, data_.timeline.start_ns);
    gpu |= data_.timeline.lanes[e.lane].kind == "gpu";
  }
  EXPECT_TRUE(gpu);
  EXPECT_LE(data_.focus_start_ns, data_.focus_end_ns);
  // Findings priced by the what-if replay carry the step time once fixed.
  static const std::set<std::string> kReplayed = {
      "host_sync",       "sync_memcpy",    "data_loading", "host_wait", "launch_bound",
      "pageable_memcpy", "offload_copies", "fp32_gemm",    "host_bound"};
  for (const FindingRow& f : data_.findings) {
    if (kReplayed.count(f.rule)) EXPECT_GT(f.predicted_step_ns, 0) << f.rule;
  }
}

TEST_F(ReportTest, CompareWithItselfIsNoChange) {
  auto plain = RenderHtmlReport(data_);  // one trace: no before/after section
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("id=\"compare-section\""), std::string::npos);
  auto r = TraceReader::Open(path_);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(CollectReportCompare(**r, *model_, *model_, ReportOptions{}, &data_).ok());
  EXPECT_TRUE(data_.has_compare);
  EXPECT_DOUBLE_EQ(data_.compare.before_ns, data_.compare.after_ns);
  ASSERT_EQ(data_.compare.tables.size(), 4u);
  EXPECT_EQ(data_.compare.tables[0].name, "summary");
  EXPECT_EQ(data_.compare.before_findings.size(), data_.findings.size());
  auto html = RenderHtmlReport(data_);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("id=\"compare-section\""), std::string::npos);
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

// The fixture has an empty roofline table (the schema creates it): no section,
// no chart, and no word about it anywhere in the page.
TEST_F(ReportTest, NoRooflineRowsNoSection) {
  EXPECT_FALSE(data_.has_roofline);
  EXPECT_NE(ReportDataJson(data_).find("\"roofline\":null"), std::string::npos);
  if (!ReportHasChartLibrary()) GTEST_SKIP() << "built without node_modules/echarts";
  auto html = RenderHtmlReport(data_);
  ASSERT_TRUE(html.ok());
  // The markup of the body before the data block (the stylesheet has rules
  // for the section): no section, no chart, no empty note.
  size_t body = html->find("<body>");
  std::string page = html->substr(body, html->find("<script type=\"application/json\"") - body);
  EXPECT_NE(page.find("id=\"chart-memory\""), std::string::npos);
  EXPECT_EQ(page.find("oofline"), std::string::npos);
}

// The fixture has no host model: no host section. A trace with one gets the
// host recipes' tables as static HTML, every trace string escaped.
TEST_F(ReportTest, HostSectionOnlyWithAHostModel) {
  EXPECT_FALSE(data_.has_host);
  if (!ReportHasChartLibrary()) GTEST_SKIP() << "built without node_modules/echarts";
  auto html = RenderHtmlReport(data_);
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(html->find("host-section"), std::string::npos);
  ReportData d = data_;
  d.has_host = true;
  d.thread_states = Table({{"tid", "TID", true}, {"thread", "Thread", false}});
  d.thread_states.AddRow({Cell(int64_t{7}), "<script>alert(1)</script>&"});
  d.python_hotspots = Table({{"location", "Python Line", false}});
  d.python_hotspots.AddRow({"train.py:152 train_step"});
  html = RenderHtmlReport(d);
  ASSERT_TRUE(html.ok());
  const size_t at = html->find("<section id=\"host-section\">");
  ASSERT_NE(at, std::string::npos);
  const std::string section = html->substr(at, html->find("</section>", at) - at);
  EXPECT_NE(section.find("&lt;script&gt;alert(1)&lt;/script&gt;&amp;"), std::string::npos);
  EXPECT_EQ(section.find("<script"), std::string::npos);
  EXPECT_NE(section.find("<td>train.py:152 train_step</td>"), std::string::npos);
}

// The host table (issue 37): one row per thread, busiest first, times with
// their unit, 12 threads shown and the rest behind a count, the profiler's
// own threads hidden behind another.
TEST(ReportHostTable, OneRowPerThreadProfilerThreadsHidden) {
  Table t({{"tid", "TID", true},
           {"thread", "Thread", false},
           {"source", "Source", false},
           {"state", "State", false},
           {"time_ns", "Time (ns)", true},
           {"share_pct", "Share (%)", true},
           {"top_wait", "Top Wait", false}});
  auto row = [&](int64_t tid, const char* name, const char* state, int64_t ns, double share,
                 const char* wait) {
    t.AddRow({Cell(tid), name, "sched", state, Cell(ns), Cell(share, 1), wait});
  };
  row(1, "python3", "running", 700'000'000, 70.0, "");
  row(1, "python3", "blocked_lock", 300'000'000, 30.0, "futex");
  row(2, "[NSys]", "off_cpu", 1'000'000'000, 100.0, "");
  row(3, "CUPTI worker thread", "off_cpu", 1'000'000'000, 100.0, "");
  row(4, "stepscope-tm", "blocked_io", 1'000'000'000, 100.0, "poll");
  row(5, "#1TaskRunner", "off_cpu", 1'000'000'000, 100.0, "");
  for (int64_t tid = 10; tid < 30; ++tid)
    row(tid, "pt_thread_pool", "running", tid * 1000, 100.0, "");
  const std::string h = HostThreadsHtml(t);
  // 21 application threads: python3 first (most running), 12 shown, 9 behind a count.
  const size_t first = h.find("<tbody>");
  ASSERT_NE(first, std::string::npos);
  const std::string shown = h.substr(first, h.find("</tbody>") - first);
  size_t rows = 0;
  for (size_t p = shown.find("<tr>"); p != std::string::npos; p = shown.find("<tr>", p + 1)) ++rows;
  EXPECT_EQ(rows, 12u);
  EXPECT_LT(shown.find("python3"), shown.find("pt_thread_pool"));
  EXPECT_NE(shown.find("<td class=\"num\">1.00 s</td><td class=\"num\">700.00 ms</td>"),
            std::string::npos);
  EXPECT_NE(shown.find("running 70.0% \xc2\xb7 blocked_lock 30.0%"), std::string::npos);
  EXPECT_NE(shown.find("<td>futex</td>"), std::string::npos);
  EXPECT_EQ(shown.find("NSys"), std::string::npos);
  EXPECT_NE(h.find("<summary>9 more threads (less time running)</summary>"), std::string::npos);
  EXPECT_NE(h.find("<summary>4 profiler threads hidden: #1TaskRunner, CUPTI worker thread, "
                   "[NSys], stepscope-tm</summary>"),
            std::string::npos);
  EXPECT_EQ(h.find("(ns)"), std::string::npos);
}

TEST(ReportHostTable, ProfilerThreadNames) {
  for (const char* name : {"stepscope-tm", "[NSys]", "[NSys Comms]", "#1TaskRunner",
                           "*2CommsProcesso", "CUPTI worker thread"})
    EXPECT_TRUE(IsProfilerThreadName(name)) << name;
  for (const char* name : {"python3", "pt_autograd_0", "cuda-EvtHandlr", "cuda0000340000e",
                           "pt_data_pin", "#", "test_matmul"})
    EXPECT_FALSE(IsProfilerThreadName(name)) << name;
}

// A finding's intervals in the timeline's window go on a first lane, one row
// per rule, merged where they touch; the other lanes move down one.
TEST_F(ReportTest, FindingMarksOnTheTimeline) {
  StepTimeline t = data_.timeline;
  ASSERT_FALSE(t.window.empty());
  ASSERT_FALSE(t.lanes.empty());
  const int64_t o = model_->origin_ns();
  // Only the marks of these findings: the fixture's own were added already.
  t.lanes.erase(std::remove_if(t.lanes.begin(), t.lanes.end(),
                               [](const StepTimeline::Lane& l) { return l.kind == "finding"; }),
                t.lanes.end());
  const bool had_marks = data_.timeline.lanes.size() != t.lanes.size();
  if (had_marks) {
    t.events.erase(std::remove_if(t.events.begin(), t.events.end(),
                                  [](const StepTimeline::Event& e) { return e.cat == "finding"; }),
                   t.events.end());
    for (StepTimeline::Event& e : t.events) --e.lane;
  }
  const StepTimeline before = t;
  Finding loading, sync;
  loading.rule = "data_loading";
  loading.host_spans = {{100, t.start_ns + o + 10, t.start_ns + o + 20},
                        {100, t.start_ns + o + 20, t.start_ns + o + 30},  // touches: merged
                        {100, t.end_ns + o + 100, t.end_ns + o + 200}};   // outside: left out
  sync.rule = "host_sync";
  sync.host_spans = {{100, t.start_ns + o + 40, t.start_ns + o + 50}};
  AddFindingMarks(*model_, {loading, sync}, &t);
  ASSERT_EQ(t.lanes.size(), before.lanes.size() + 1);
  EXPECT_EQ(t.lanes[0].kind, "finding");
  std::vector<StepTimeline::Event> marks;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events[i].cat == "finding") {
      marks.push_back(t.events[i]);
    } else {
      EXPECT_EQ(t.events[i].lane, before.events[i].lane + 1);
    }
  }
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].lane, 0);
  EXPECT_EQ(marks[0].rule, "data_loading");
  EXPECT_EQ(t.names[marks[0].name], "data loading");
  EXPECT_EQ(marks[0].start_ns, t.start_ns + 10);
  EXPECT_EQ(marks[0].end_ns, t.start_ns + 30);
  EXPECT_EQ(marks[0].depth, 0);
  EXPECT_EQ(marks[1].rule, "host_sync");
  EXPECT_EQ(t.names[marks[1].name], "sync");
  EXPECT_EQ(marks[1].depth, 1);
  // Nothing in the window: no lane.
  StepTimeline none = before;
  Finding far;
  far.rule = "host_wait";
  far.host_spans = {{100, t.end_ns + o + 100, t.end_ns + o + 200}};
  AddFindingMarks(*model_, {far}, &none);
  EXPECT_EQ(none.lanes.size(), before.lanes.size());
}

// The shared fixture plus tests/diff/fixtures/report/roofline.sql: three
// stored roofline rows and the ceilings they were computed with (every number
// below is derived by hand in that file's header).
class ReportRooflineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/report-roofline-" + std::to_string(::getpid()) + ".sqlite";
    ASSERT_TRUE(fx::WriteFixtureTrace(path_).ok());
    auto sql = ReadFile(std::string(STEPSCOPE_REPORT_FIXTURES) + "/roofline.sql");
    ASSERT_TRUE(sql.ok()) << sql.status().message();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    Status st = Exec(db, *sql);
    sqlite3_close_v2(db);
    ASSERT_TRUE(st.ok()) << st.message();
    auto r = TraceReader::Open(path_);
    ASSERT_TRUE(r.ok());
    reader_ = std::move(*r);
    auto m = TraceModel::Load(path_);
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto d = CollectReportData(*reader_, **m, ReportOptions{});
    ASSERT_TRUE(d.ok()) << d.status().message();
    data_ = std::move(*d);
  }
  std::string path_;
  std::unique_ptr<TraceReader> reader_;
  ReportData data_;
};

TEST_F(ReportRooflineTest, KernelsAreTheStoredRows) {
  ASSERT_TRUE(data_.has_roofline);
  const ReportRoofline& r = data_.roofline;
  EXPECT_EQ(r.device, "NVIDIA H100 80GB HBM3 GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(r.measured_at, "2025-01-01T00:00:00Z");
  EXPECT_EQ(r.step, 3);
  ASSERT_EQ(r.kernels.size(), 3u);
  const RooflineKernel& gemm = r.kernels[0];
  EXPECT_EQ(gemm.rank, 1);
  EXPECT_EQ(gemm.name, "nvjet_tst_128x256_64x4_h_bz_NNT");
  EXPECT_EQ(gemm.launch, "grid 132x1x1 block 384x1x1");
  EXPECT_EQ(gemm.instances, 1);
  EXPECT_EQ(gemm.duration_ns, 200000);
  EXPECT_EQ(gemm.flops, 137438953472.0);  // 2^37
  EXPECT_EQ(gemm.dram_bytes, 1e8);        // 8e7 read + 2e7 written
  EXPECT_DOUBLE_EQ(gemm.intensity, 137438953472.0 / 1e8);
  EXPECT_DOUBLE_EQ(gemm.flops_per_s, 137438953472.0 / 200e-6);
  EXPECT_DOUBLE_EQ(gemm.dram_bytes_per_s, 5e11);
  EXPECT_EQ(gemm.precision, "tensor_bf16");
  EXPECT_EQ(gemm.bound, "tensor_bf16");
  EXPECT_EQ(gemm.bound_kind, "compute");
  EXPECT_NEAR(gemm.pct_of_bound, 100 * (137438953472.0 / 790e12) / 200e-6, 1e-9);  // 86.99
  EXPECT_TRUE(gemm.on_chart);
  const RooflineKernel& gelu = r.kernels[1];
  EXPECT_EQ(gelu.instances, 2);
  EXPECT_EQ(gelu.dram_bytes, 268435456.0);  // 2^28
  EXPECT_DOUBLE_EQ(gelu.intensity, 5.5);
  EXPECT_NEAR(gelu.flops_per_s, 1476395008.0 / 120e-6, 1e-3);
  EXPECT_EQ(gelu.bound, "dram_bw");
  EXPECT_NEAR(gelu.pct_of_bound, 100 * (268435456.0 / 3e12) / 120e-6, 1e-9);  // 74.57
  EXPECT_TRUE(gelu.on_chart);
  const RooflineKernel& copy = r.kernels[2];
  EXPECT_EQ(copy.name, "copy_kernel<img src=x onerror=alert(3)>");
  EXPECT_EQ(copy.flops, 0);
  EXPECT_FALSE(copy.on_chart);  // 0 FLOPs: no place on a log-log chart
  EXPECT_EQ(copy.bound_kind, "memory");
  EXPECT_TRUE(r.notes.empty()) << r.notes[0];
}

// Roofs: DRAM and the compute ceilings of the precisions used (tensor_bf16,
// fp32); tensor_fp8 was measured but no kernel used it, L2 is not a roof on
// a DRAM-intensity axis. Axes: x from 5.5 / 2 -> 1 to 1374.39 * 2 -> 1e4; y
// from the DRAM roof at x = 1 (3e12 -> 1e12) to 790e12 * 1.05 -> 1e15.
TEST_F(ReportRooflineTest, RoofsRidgesAndAxes) {
  const ReportRoofline& r = data_.roofline;
  EXPECT_EQ(r.x_min, 1);
  EXPECT_EQ(r.x_max, 1e4);
  EXPECT_EQ(r.y_min, 1e12);
  EXPECT_EQ(r.y_max, 1e15);
  ASSERT_EQ(r.roofs.size(), 3u);
  const double ridge_bf16 = 790e12 / 3e12;  // 263.33 FLOP/B
  EXPECT_EQ(r.roofs[0].key, "dram_bw");
  EXPECT_TRUE(r.roofs[0].memory);
  EXPECT_EQ(r.roofs[0].value, 3e12);
  EXPECT_EQ(r.roofs[0].x0, 1);  // from the left edge ...
  EXPECT_EQ(r.roofs[0].y0, 3e12);
  EXPECT_DOUBLE_EQ(r.roofs[0].x1, ridge_bf16);  // ... up to the highest compute roof
  EXPECT_DOUBLE_EQ(r.roofs[0].y1, 790e12);
  EXPECT_EQ(r.roofs[1].key, "tensor_bf16");
  EXPECT_FALSE(r.roofs[1].memory);
  EXPECT_DOUBLE_EQ(r.roofs[1].x0, ridge_bf16);
  EXPECT_EQ(r.roofs[1].x1, 1e4);
  EXPECT_EQ(r.roofs[1].y0, 790e12);
  EXPECT_EQ(r.roofs[1].y1, 790e12);
  EXPECT_EQ(r.roofs[2].key, "fp32");
  EXPECT_DOUBLE_EQ(r.roofs[2].x0, 20);  // 60e12 / 3e12
  EXPECT_EQ(r.roofs[2].y0, 60e12);
  ASSERT_EQ(r.ridges.size(), 2u);
  EXPECT_EQ(r.ridges[0].key, "tensor_bf16");
  EXPECT_DOUBLE_EQ(r.ridges[0].intensity, ridge_bf16);
  EXPECT_EQ(r.ridges[0].flops_per_s, 790e12);
  EXPECT_EQ(r.ridges[1].key, "fp32");
  EXPECT_DOUBLE_EQ(r.ridges[1].intensity, 20);
}

// The report may not depend on the roofline stage, so it reads stored rows
// and re-implements the chart's axes: both must agree with that stage.
TEST_F(ReportRooflineTest, AgreesWithTheRooflineLibrary) {
  auto stored = LoadStoredRoofline(*reader_);
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  ASSERT_FALSE(stored->ceilings.values.empty());  // the ceilings of meta.roofline_ceilings
  EvaluateReport(&*stored);
  const ReportRoofline& r = data_.roofline;
  ASSERT_EQ(stored->entries.size(), r.kernels.size());
  std::vector<ChartPoint> points;
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const RooflineResult& x = stored->entries[i].result;
    const RooflineKernel& k = r.kernels[i];
    EXPECT_EQ(stored->entries[i].target.name, k.name);
    EXPECT_NEAR(x.intensity_dram, k.intensity, 1e-9 * k.intensity);
    EXPECT_NEAR(x.flops_per_s, k.flops_per_s, 1e-9 * k.flops_per_s);
    EXPECT_NEAR(x.dram_bytes_per_s, k.dram_bytes_per_s, 1e-9 * k.dram_bytes_per_s);
    EXPECT_NEAR(x.pct_of_bound, k.pct_of_bound, 1e-9);
    EXPECT_EQ(x.bound, k.bound);
    EXPECT_EQ(x.bound_kind, k.bound_kind);
    EXPECT_EQ(x.precision, k.precision);
    EXPECT_DOUBLE_EQ(stored->entries[i].work.duration_ns, k.duration_ns);
    points.push_back({k.name, x.intensity_dram, x.flops_per_s});
    EXPECT_EQ(Plottable(points.back()), k.on_chart);
  }
  std::vector<ChartRoof> roofs;
  for (const RooflineRoof& f : r.roofs) roofs.push_back({f.key, f.memory, f.value});
  ChartAxes a = ComputeAxes(roofs, points);
  EXPECT_EQ(a.x_min, r.x_min);
  EXPECT_EQ(a.x_max, r.x_max);
  EXPECT_EQ(a.y_min, r.y_min);
  EXPECT_EQ(a.y_max, r.y_max);
}

TEST_F(ReportRooflineTest, DataBlockAndSection) {
  std::string json = ReportDataJson(data_);
  size_t at = json.find("\"roofline\":{");
  ASSERT_NE(at, std::string::npos);
  std::string rf = json.substr(at);
  EXPECT_NE(rf.find("\"x_min\":1,\"x_max\":10000,\"y_min\":1e+12,\"y_max\":1e+15"),
            std::string::npos)
      << rf.substr(0, 300);
  EXPECT_NE(rf.find("{\"key\":\"dram_bw\",\"memory\":true,\"value\":3e+12,\"x0\":1,\"y0\":3e+12,"
                    "\"x1\":263.3333333,\"y1\":7.9e+14}"),
            std::string::npos);
  EXPECT_NE(rf.find("\"intensity\":1374.389535,\"flops_per_s\":6.871947674e+14"),
            std::string::npos);
  EXPECT_NE(rf.find("copy_kernel\\u003cimg src=x onerror=alert(3)\\u003e"), std::string::npos);
  if (!ReportHasChartLibrary()) GTEST_SKIP() << "built without node_modules/echarts";
  auto html = RenderHtmlReport(data_);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("<section id=\"roofline-section\"><h2>Roofline</h2>"), std::string::npos);
  EXPECT_NE(html->find("id=\"chart-roofline\""), std::string::npos);
  EXPECT_EQ(html->find("copy_kernel<img"), std::string::npos);
}

// Geometry without the fixture: a precision without a ceiling is a note, not
// a roof; without a DRAM ceiling compute roofs span the whole axis.
TEST(ReportRooflineGeometry, MissingCeilings) {
  ReportRoofline r;
  RooflineKernel k;
  k.intensity = 50;
  k.flops_per_s = 2e12;
  k.on_chart = true;
  r.kernels.push_back(k);
  RooflineGeometry({{"fp32", 60e12}, {"l2_bw", 8e12}}, {"fp32", "tensor_fp8"}, &r);
  ASSERT_EQ(r.roofs.size(), 1u);
  EXPECT_EQ(r.roofs[0].key, "fp32");
  EXPECT_EQ(r.roofs[0].x0, r.x_min);
  EXPECT_EQ(r.roofs[0].x1, r.x_max);
  EXPECT_TRUE(r.ridges.empty());
  // x: 50 / 2 -> 10 to 50 * 2 -> 100, widened to 3 decades; y: 60e12 * 1.05 -> 1e14 at the top.
  EXPECT_EQ(r.x_min, 10);
  EXPECT_EQ(r.x_max, 1e4);
  EXPECT_EQ(r.y_min, 1e11);  // at least 3 decades below 1e14
  EXPECT_EQ(r.y_max, 1e14);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("tensor_fp8"), std::string::npos);
  EXPECT_NE(r.notes[1].find("DRAM"), std::string::npos);
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
