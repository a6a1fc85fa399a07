#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "ranks/rank_summary.h"
#include "ranks/summarize.h"
#include "store/trace_reader.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

std::string TempPath(const char* name) {
  std::string p = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".sqlite";
  ::unlink(p.c_str());
  return p;
}

// A two-step trace whose every number is worked out in the comments.
std::string MakeTrace() {
  std::string path = TempPath("summary");
  auto w = TraceWriter::Create(path);
  EXPECT_TRUE(w.ok());
  TraceWriter& t = **w;
  t.SetMeta("rank", "1");
  t.SetMeta("local_rank", "1");
  t.SetMeta("world_size", "2");
  t.SetMeta("host", "node7");
  t.SetMeta("wall_clock_offset_ns", "-5");
  auto nvtx = [&](int64_t s, int64_t e, const char* name, uint8_t depth) {
    NvtxRecord r{};
    r.start_ns = s;
    r.end_ns = e;
    r.tid = 1;
    r.end_tid = 1;
    r.name = t.Intern(name);
    r.kind = NvtxKind::kPushPop;
    r.depth = depth;
    t.AddNvtx(r);
  };
  nvtx(1000, 2000, "step 3", 0);
  nvtx(1100, 1300, "forward", 1);
  nvtx(2000, 3000, "step 4", 0);
  auto api = [&](int64_t s, uint32_t corr) {
    ApiRecord a{};
    a.start_ns = s;
    a.end_ns = s + 5;
    a.tid = 2;  // another thread than the step ranges: attribution is by time
    a.correlation = corr;
    a.name = t.Intern("cudaLaunchKernel");
    t.AddApi(a);
  };
  auto kernel = [&](int64_t s, int64_t e, uint32_t stream, uint32_t corr, const char* name) {
    KernelRecord k{};
    k.start_ns = s;
    k.end_ns = e;
    k.stream = stream;
    k.correlation = corr;
    k.name = t.Intern(name);
    t.AddKernel(k);
  };
  api(1050, 1);
  kernel(1200, 1400, 7, 1, "gemm");
  api(1500, 2);
  kernel(1600, 1700, 7, 2, "gemm");  // launched 100 ns after gemm#1 ended: late 100
  api(1510, 3);
  kernel(1650, 1900, 9, 3,
         "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  api(2100, 4);
  kernel(2200, 2300, 7, 4, "gemm");     // stream 7 idle since 1700, launch at 2100: late 400
  kernel(2500, 2600, 8, 99, "orphan");  // no API row: step by its own start
  kernel(3500, 3600, 7, 0, "after the last step");  // outside every step
  EXPECT_TRUE(t.Finalize().ok());
  return path;
}

TEST(Summary, BuildFromTrace) {
  auto r = TraceReader::Open(MakeTrace());
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto s = BuildSummary(**r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->rank, 1);
  EXPECT_EQ(s->local_rank, 1);
  EXPECT_EQ(s->world_size, 2);
  EXPECT_EQ(s->host, "node7");
  EXPECT_EQ(s->clock_offset_ns, -5);
  EXPECT_EQ(s->step_source, "nvtx");
  EXPECT_EQ(s->critical_stream, 7u);
  ASSERT_EQ(s->steps.size(), 2u);
  const StepSummary& a = s->steps[0];
  EXPECT_EQ(a.step, 3);
  EXPECT_EQ(a.kernels, 3);
  EXPECT_EQ(a.gpu_start_ns, 1200);
  EXPECT_EQ(a.gpu_end_ns, 1900);
  EXPECT_EQ(a.compute_ns, 300);  // gemm 200 + gemm 100
  EXPECT_EQ(a.comm_ns, 250);
  EXPECT_EQ(a.overlap_ns, 50);  // [1650, 1700]
  EXPECT_EQ(a.launch_late_ns, 100);
  const StepSummary& b = s->steps[1];
  EXPECT_EQ(b.step, 4);
  EXPECT_EQ(b.kernels, 2);
  EXPECT_EQ(b.compute_ns, 200);
  EXPECT_EQ(b.launch_late_ns, 400);
  ASSERT_EQ(s->collectives.size(), 1u);
  EXPECT_EQ(s->collectives[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(s->collectives[0].step, 3);
  EXPECT_EQ(s->collectives[0].start_ns, 1650);
  EXPECT_EQ(s->collectives[0].free_ns, 200);  // [1650, 1900] less gemm#2's [1650, 1700]
  ASSERT_EQ(s->kernels.size(), 3u);           // largest total first: nccl 250, gemm 200+100, orphan
  EXPECT_EQ(s->kernels[0].name, "gemm");
  EXPECT_EQ(s->kernels[0].total_ns, (std::vector<int64_t>{300, 100}));
  EXPECT_EQ(s->kernels[0].count, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(s->kernels[0].median_ns, (std::vector<int64_t>{150, 100}));
  EXPECT_TRUE(s->kernels[1].nccl);
  ASSERT_EQ(s->sections.size(), 2u);
  EXPECT_EQ(s->sections[0].name, "step");
  EXPECT_EQ(s->sections[0].total_ns, (std::vector<int64_t>{1000, 1000}));
  EXPECT_EQ(s->sections[1].name, "forward");
  EXPECT_EQ(s->sections[1].count, (std::vector<int64_t>{1, 0}));
}

TEST(Summary, JsonRoundTrip) {
  auto r = TraceReader::Open(MakeTrace());
  ASSERT_TRUE(r.ok());
  auto s = BuildSummary(**r);
  ASSERT_TRUE(s.ok());
  std::string json = SummaryToJson(*s);
  auto back = SummaryFromJson(json, "x.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(SummaryToJson(*back), json);
  EXPECT_EQ(back->collectives[0].seq, 0);
  EXPECT_EQ(back->steps[1].launch_late_ns, 400);
}

TEST(Summary, BadJsonSaysWhere) {
  EXPECT_EQ(SummaryFromJson("{\"format\": 3}", "a.json").status().message(),
            "a.json: JSON but not a stepscope rank summary (no \"format\": "
            "\"stepscope-rank-summary\"); pass traces "
            "or files written by 'stepscope summarize'");
  auto v = SummaryFromJson(R"({"format": "stepscope-rank-summary", "version": 9})", "b.json");
  EXPECT_EQ(v.status().message(),
            "b.json: rank summary version 9, this stepscope reads versions 1-4; re-create it "
            "with 'stepscope summarize' of this version");
  auto w = SummaryFromJson(R"({"format": "stepscope-rank-summary", "version": 1, "rank": 0,
      "steps": [{"step": 1, "start_ns": 0, "end_ns": 5}], "kernels": [{"name": "k", "total_ns": [1, 2],
      "count": [1], "median_ns": [1]}], "sections": [], "collectives": []})",
                           "c.json");
  EXPECT_EQ(w.status().message(),
            "c.json: kernels[0]: \"total_ns\" has 2 entries, expected 1; re-create it with "
            "'stepscope summarize'");
  // Version 2 needs the collectives' free_ns; version 1 has none (-1: unknown).
  const char* coll = R"({"format": "stepscope-rank-summary", "version": %d, "trace": "t",
      "rank": 0, "host": "h", "clock": "c", "step_source": "nvtx",
      "steps": [{"step": 1, "start_ns": 0, "end_ns": 5}], "kernels": [], "sections": [],
      "collectives": [{"name": "nccl", "step": [1], "start_ns": [1], "end_ns": [4]}]})";
  char buf[512];
  std::snprintf(buf, sizeof buf, coll, 2);
  EXPECT_EQ(SummaryFromJson(buf, "d.json").status().message(),
            "d.json: collectives[0]: \"free_ns\" is missing or not an array; re-create it "
            "with 'stepscope summarize'");
  std::snprintf(buf, sizeof buf, coll, 1);
  auto v1 = SummaryFromJson(buf, "e.json");
  ASSERT_TRUE(v1.ok()) << v1.status().message();
  EXPECT_EQ(v1->collectives[0].free_ns, -1);
  EXPECT_EQ(DefaultSummaryPath("dir/run_3.sqlite"), "dir/run_3.summary.json");
  EXPECT_EQ(DefaultSummaryPath("trace.db"), "trace.db.summary.json");
}

}  // namespace
}  // namespace stepscope
