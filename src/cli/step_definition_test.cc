// One step definition everywhere: the same NVTX ranges through `steps` (and
// the rules), the memory view, roofline's step selection and the per-rank
// summaries give the same steps (common/step_names.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "analysis/memory/nvtx_context.h"
#include "analysis/model/steps.h"
#include "analysis/model/trace_model.h"
#include "common/step_names.h"
#include "ranks/summarize.h"
#include "roofline/selection.h"
#include "store/trace_reader.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

// Steps 1-3 on thread 1 (1000 ns each, a kernel in each), plus ranges that
// are not steps: a GPU-side copy of step 1, a zero-length "step 9", "step 5"
// nested in step 2, "step 6" on another thread, "ProfilerStep#7" (a "step N"
// trace ignores them), a "step " + 50,000-digit name (no stack overflow), and
// "stepping 8" / "optimizer step 4" (not step names).
// With `iterations`, the steps are the profile hook's "iteration N" start/end
// ranges instead (back to back, as the hook emits them), and the trace has no
// "step N" or ProfilerStep#N range.
std::string MakeTrace(bool iterations = false) {
  std::string path = ::testing::TempDir() + "/stepdef-" + std::to_string(::getpid()) +
                     (iterations ? "-it" : "") + ".sqlite";
  ::unlink(path.c_str());
  auto w = TraceWriter::Create(path);
  EXPECT_TRUE(w.ok());
  TraceWriter& t = **w;
  auto range = [&](int64_t s, int64_t e, uint32_t tid, const std::string& name,
                   const char* domain = "", NvtxKind kind = NvtxKind::kPushPop) {
    NvtxRecord n{};
    n.start_ns = s;
    n.end_ns = e;
    n.tid = tid;
    n.end_tid = tid;
    n.kind = kind;
    n.name = t.Intern(name);
    n.domain = t.Intern(domain);
    t.AddNvtx(n);
  };
  uint32_t corr = 1;
  for (int s = 1; s <= 3; ++s) {
    const int64_t b = s * 1000;
    if (iterations) {
      range(b, b + 1000, 1, "iteration " + std::to_string(s), "", NvtxKind::kStartEnd);
    } else {
      range(b, b + 900, 1, (s == 2 ? "Step_" : "step ") + std::to_string(s));
    }
    ApiRecord a{};
    a.start_ns = b + 100;
    a.end_ns = b + 110;
    a.tid = 1;
    a.correlation = corr;
    a.name = t.Intern("cudaLaunchKernel");
    t.AddApi(a);
    KernelRecord k{};
    k.start_ns = b + 200;
    k.end_ns = b + 700;
    k.correlation = corr++;
    k.name = t.Intern("gemm");
    k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
    t.AddKernel(k);
  }
  if (iterations) {
    range(2100, 2200, 1, "forward");
    EXPECT_TRUE(t.Finalize().ok());
    return path;
  }
  range(1200, 1700, 7, "step 1", "gpu_user_annotation");
  range(1950, 1950, 1, "step 9");
  range(2100, 2200, 1, "step 5");
  range(2300, 2400, 2, "step 6");
  range(1000, 3900, 3, "ProfilerStep#7");
  range(1000, 2000, 1, "iteration 1", "", NvtxKind::kStartEnd);
  range(3950, 3960, 1, "step " + std::string(50000, '7'));
  range(3961, 3962, 1, "stepping 8");
  range(3963, 3964, 1, "optimizer step 4");
  EXPECT_TRUE(t.Finalize().ok());
  return path;
}

// The step numbers each reader finds in a trace.
struct Seen {
  std::vector<int64_t> analysis, memory, roofline, ranks;
  std::string method, pattern, source;
  StepRangeDrops dropped;
};

Seen SeenEverywhere(const std::string& path) {
  Seen seen;
  auto model = TraceModel::Load(path);
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok());
  if (!model.ok() || !reader.ok()) return seen;
  if (auto set = DetectSteps(**model, {}); set.ok()) {
    for (const Step& s : set->steps) seen.analysis.push_back(s.number);
    seen.method = set->method;
    seen.pattern = set->pattern;
    seen.dropped = set->dropped;
  }
  if (auto nvtx = (*reader)->Nvtx(); nvtx.ok()) {
    memory::NvtxContext ctx(*nvtx, (*reader)->strings());
    for (int64_t t = 0; t < 4100; t += 50) {
      const int64_t n = ctx.StepAt(t);
      if (n >= 0 && (seen.memory.empty() || seen.memory.back() != n)) seen.memory.push_back(n);
    }
  }
  if (auto roof = FindSteps(**reader); roof.ok()) {
    for (const StepRange& s : *roof) seen.roofline.push_back(s.number);
  }
  if (auto summary = BuildSummary(**reader); summary.ok()) {
    for (const StepSummary& s : summary->steps) seen.ranks.push_back(s.step);
    seen.source = summary->step_source;
  }
  return seen;
}

TEST(StepDefinition, SameStepsInAnalysisMemoryRooflineAndRanks) {
  const std::string path = MakeTrace();
  const std::vector<int64_t> want = {1, 2, 3};
  const Seen seen = SeenEverywhere(path);
  EXPECT_EQ(seen.analysis, want);
  EXPECT_EQ(seen.method, "nvtx");
  EXPECT_EQ(seen.dropped.gpu_side, 1);
  EXPECT_EQ(seen.dropped.zero_length, 1);
  EXPECT_EQ(seen.dropped.overlapping, 1);
  EXPECT_EQ(seen.dropped.other_thread, 1);
  EXPECT_EQ(seen.dropped.other_kind, 2);  // ProfilerStep#7 and iteration 1
  EXPECT_EQ(seen.memory, want);
  EXPECT_EQ(seen.roofline, want);
  EXPECT_EQ(seen.ranks, want);
  EXPECT_EQ(seen.source, "nvtx");
  ::unlink(path.c_str());
}

// Without step markers in the program: the "iteration N" ranges `profile`
// puts at optimizer steps are the steps, everywhere.
TEST(StepDefinition, IterationRangesAreTheStepsOfAnUnmarkedLoop) {
  const std::string path = MakeTrace(/*iterations=*/true);
  const std::vector<int64_t> want = {1, 2, 3};
  const Seen seen = SeenEverywhere(path);
  EXPECT_EQ(seen.analysis, want);
  EXPECT_EQ(seen.method, "nvtx");
  EXPECT_EQ(seen.pattern, "iteration N");
  EXPECT_EQ(seen.memory, want);
  EXPECT_EQ(seen.roofline, want);
  EXPECT_EQ(seen.ranks, want);
  EXPECT_EQ(seen.source, "iteration");
  ::unlink(path.c_str());
}

// No step ranges at all (a loop traced with `--iteration-ranges off`): the
// kernel-sequence steps, the same in `steps` and in the rank summary, window
// for window (common/kernel_sequence.h).
TEST(StepDefinition, KernelSequenceStepsAreTheSameInStepsAndRanks) {
  const std::string path =
      ::testing::TempDir() + "/stepdef-ks-" + std::to_string(::getpid()) + ".sqlite";
  ::unlink(path.c_str());
  {
    auto w = TraceWriter::Create(path);
    ASSERT_TRUE(w.ok());
    TraceWriter& t = **w;
    uint32_t corr = 1;
    for (int s = 0; s < 5; ++s) {
      const int64_t b = 10000 + s * 1000;
      MemcpyRecord c{};  // the step's input copy: belongs to the step it feeds
      c.start_ns = b - 50;
      c.end_ns = b - 10;
      c.copy_kind = CopyKind::kHostToDevice;
      t.AddMemcpy(c);
      int64_t at = b;
      for (const char* name : {"embed", "layer", "layer", "layer", "adam"}) {
        ApiRecord a{};
        a.start_ns = at - 30;
        a.end_ns = at - 20;
        a.tid = 1;
        a.correlation = corr;
        a.name = t.Intern("cudaLaunchKernel");
        t.AddApi(a);
        KernelRecord k{};
        k.start_ns = at;
        k.end_ns = at + 100;
        k.correlation = corr++;
        k.name = t.Intern(name);
        k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
        t.AddKernel(k);
        at += 150;
      }
    }
    ASSERT_TRUE(t.Finalize().ok());
  }
  auto model = TraceModel::Load(path);
  ASSERT_TRUE(model.ok());
  auto steps = DetectSteps(**model, StepOptions{});
  ASSERT_TRUE(steps.ok());
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  auto summary = BuildSummary(**reader);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(steps->method, "kernel-sequence");
  EXPECT_EQ(summary->step_source, "kernel-sequence");
  ASSERT_EQ(steps->steps.size(), 5u);
  ASSERT_EQ(summary->steps.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(summary->steps[i].step, steps->steps[i].number);
    EXPECT_EQ(summary->steps[i].start_ns, steps->steps[i].range_start_ns);
    EXPECT_EQ(summary->steps[i].end_ns, steps->steps[i].range_end_ns);
    EXPECT_EQ(summary->steps[i].kernels, 5);
  }
  EXPECT_EQ(summary->steps[1].start_ns, 10950);  // the copy before the anchor kernel
  ::unlink(path.c_str());
}

TEST(StepDefinition, Names) {
  int64_t n = -1;
  EXPECT_EQ(ParseStepName("step 12", &n), StepNameKind::kStep);
  EXPECT_EQ(n, 12);
  EXPECT_EQ(ParseStepName(" Step_3 ", &n), StepNameKind::kStep);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(ParseStepName("step4", &n), StepNameKind::kStep);
  EXPECT_EQ(ParseStepName("STEP#:5", &n), StepNameKind::kStep);
  EXPECT_EQ(ParseStepName("ProfilerStep#7", &n), StepNameKind::kProfilerStep);
  EXPECT_EQ(n, 7);
  EXPECT_EQ(ParseStepName("iteration 41", &n), StepNameKind::kIteration);
  EXPECT_EQ(n, 41);
  EXPECT_EQ(ParseStepName("iteration", &n), StepNameKind::kNone);
  EXPECT_EQ(ParseStepName("iteration 4 ", &n), StepNameKind::kNone);
  for (const char* no : {"step", "stepping 3", "optimizer step 3", "step 3a", "ProfilerStep#",
                         "ProfilerStep#1 ", "step 1234567890123456789"}) {
    EXPECT_EQ(ParseStepName(no, &n), StepNameKind::kNone) << no;
  }
  EXPECT_EQ(ParseStepName("step " + std::string(50000, '9'), &n), StepNameKind::kNone);
}

}  // namespace
}  // namespace stepscope
