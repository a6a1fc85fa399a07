#include "roofline/selection.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "store/trace_writer.h"

namespace stepscope {
namespace {

// Five steps of 1000 ns each, step i in [i*1000, i*1000+900]. In every step:
// "gemm" twice at grid (8,1,1) (300 ns each), "gemm" once at grid (4,1,1)
// (250 ns), "gelu" once (100 ns) and "copy" once (50 ns). Kernels launch
// 10 ns after their API call; the GPU runs them 500 ns later (so GPU time
// spills past the step's host range: only the launch time decides).
// Step 2 additionally runs "spike" for 5000 ns.
std::string MakeTrace(bool with_api, bool with_steps) {
  std::string path = ::testing::TempDir() + "/sel-" + std::to_string(::getpid()) +
                     (with_api ? "a" : "n") + (with_steps ? "s" : "x") + ".sqlite";
  ::unlink(path.c_str());
  auto w = TraceWriter::Create(path);
  EXPECT_TRUE(w.ok());
  TraceWriter& t = **w;
  uint32_t corr = 1;
  auto kernel = [&](int64_t launch, const char* name, int grid, int64_t dur, uint32_t tid) {
    ApiRecord a{};
    a.start_ns = launch;
    a.end_ns = launch + 10;
    a.tid = tid;
    a.correlation = corr;
    a.name = t.Intern("cudaLaunchKernel");
    if (with_api) t.AddApi(a);
    KernelRecord k{};
    k.start_ns = launch + 500;
    k.end_ns = launch + 500 + dur;
    k.correlation = corr++;
    k.name = t.Intern(name);
    k.mangled_name = t.Intern(std::string("_Z") + name);
    k.grid_x = grid;
    k.grid_y = k.grid_z = 1;
    k.block_x = 128;
    k.block_y = k.block_z = 1;
    t.AddKernel(k);
  };
  for (int s = 0; s < 5; ++s) {
    int64_t b = s * 1000;
    if (with_steps) {
      NvtxRecord n{};
      n.start_ns = b;
      n.end_ns = b + 900;
      n.tid = 1;
      n.kind = NvtxKind::kPushPop;
      n.name = t.Intern("step " + std::to_string(s));
      t.AddNvtx(n);
    }
    kernel(b + 100, "gemm", 8, 300, 1);
    kernel(b + 200, "gemm", 8, 300, 2);  // an autograd thread
    kernel(b + 300, "gemm", 4, 250, 1);
    kernel(b + 400, "gelu", 64, 100, 1);
    kernel(b + 500, "copy", 32, 50, 1);
    if (s == 2) kernel(b + 600, "spike", 1, 5000, 1);
  }
  EXPECT_TRUE(t.Finalize().ok());
  return path;
}

TEST(Selection, TopKernelsOfTheMedianStepByLaunchTime) {
  auto trace = TraceReader::Open(MakeTrace(true, true));
  ASSERT_TRUE(trace.ok());
  auto sel = SelectKernels(**trace, {});
  ASSERT_TRUE(sel.ok()) << sel.status().message();
  EXPECT_TRUE(sel->has_step);
  EXPECT_EQ(sel->step.number, 2);  // median of 0..4
  EXPECT_EQ(sel->method, "launch api in step");
  EXPECT_EQ(sel->steps_in_trace, 5);
  ASSERT_EQ(sel->targets.size(), 5u);
  EXPECT_EQ(sel->targets[0].name, "spike");
  EXPECT_EQ(sel->targets[0].step_gpu_ns, 5000);
  EXPECT_EQ(sel->targets[1].name, "gemm");
  EXPECT_EQ(sel->targets[1].grid[0], 8);
  EXPECT_EQ(sel->targets[1].step_gpu_ns, 600);  // both threads' launches
  EXPECT_EQ(sel->targets[1].step_launches, 2);
  EXPECT_EQ(sel->targets[1].mangled, "_Zgemm");
  EXPECT_EQ(sel->targets[2].grid[0], 4);
  EXPECT_EQ(sel->targets[3].name, "gelu");
  EXPECT_EQ(sel->targets[4].name, "copy");
  EXPECT_EQ(sel->targets[4].rank, 5);
  EXPECT_EQ(sel->step_kernel_ns, 5000 + 600 + 250 + 100 + 50);
}

TEST(Selection, ExplicitStepTopAndRegex) {
  auto trace = TraceReader::Open(MakeTrace(true, true));
  ASSERT_TRUE(trace.ok());
  SelectionOptions o;
  o.step = 4;
  o.top = 2;
  auto sel = SelectKernels(**trace, o);
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->targets.size(), 2u);
  EXPECT_EQ(sel->targets[0].name, "gemm");
  EXPECT_EQ(sel->targets[0].grid[0], 8);
  EXPECT_EQ(sel->targets[1].grid[0], 4);
  o.top = 0;
  o.kernel_regex = "^g";
  sel = SelectKernels(**trace, o);
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->targets.size(), 3u);  // two gemm configurations and gelu
  EXPECT_EQ(sel->targets[2].name, "gelu");
  o.kernel_regex = "(";
  auto bad = SelectKernels(**trace, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  o.kernel_regex = "";
  o.step = 9;
  bad = SelectKernels(**trace, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no NVTX range 'step 9' (the trace has steps 0..4)"),
            std::string::npos);
}

TEST(Selection, WithoutApiRowsGpuStartDecides) {
  auto trace = TraceReader::Open(MakeTrace(false, true));
  ASSERT_TRUE(trace.ok());
  auto sel = SelectKernels(**trace, {});
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->method, "gpu start in step");
  // GPU starts are launch + 500: in [2000, 2900] start gemm(8) x2, gemm(4) and
  // gelu (2900); copy (3000) and spike (3100) fall outside, but step 1's copy
  // (launched at 1500) starts at 2000 and is counted: the fallback is approximate.
  ASSERT_EQ(sel->targets.size(), 4u);
  EXPECT_EQ(sel->targets[0].name, "gemm");
  EXPECT_EQ(sel->targets[2].name, "gelu");
  EXPECT_EQ(sel->targets[3].name, "copy");
}

TEST(Selection, WithoutStepsTheWholeTrace) {
  auto trace = TraceReader::Open(MakeTrace(true, false));
  ASSERT_TRUE(trace.ok());
  auto sel = SelectKernels(**trace, {});
  ASSERT_TRUE(sel.ok());
  EXPECT_FALSE(sel->has_step);
  EXPECT_EQ(sel->method, "whole trace");
  EXPECT_EQ(sel->targets[0].name, "spike");
  EXPECT_EQ(sel->targets[1].step_gpu_ns, 3000);  // gemm(8): 2 x 300 x 5 steps
  SelectionOptions o;
  o.step = 1;
  auto bad = SelectKernels(**trace, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
}

}  // namespace
}  // namespace stepscope
