// The what-if graph, its replay and the transformations on hand-built traces
// whose answers can be worked out by hand.
#include <gtest/gtest.h>

#include "analysis/whatif/graph.h"
#include "analysis/whatif/replay.h"
#include "analysis/whatif/transforms.h"

namespace stepscope::whatif {
namespace {

constexpr int64_t kUs = 1000;

// Six steps of 1 ms on thread 7, each (times from the step start, in us):
//   launch A [10, 15] -> kernel A [20, 420]       (launch latency 10)
//   launch B [20, 25] -> kernel B [421, 621]      (queued behind A: 1 us gap)
//   cudaStreamSynchronize [30, 630]               (returns 9 us after B ends)
//   CPU work until the next step (data loading, `cpu_us` long from 630).
std::unique_ptr<TraceModel> SyncTrace(int steps = 6) {
  TraceModel::Records r;
  r.strings = {"", "gemm", "cudaLaunchKernel", "cudaStreamSynchronize", "step 0", "step 1",
               "step 2", "step 3", "step 4", "step 5", "step 6", "step 7"};
  uint32_t corr = 1;
  for (int i = 0; i < steps; ++i) {
    const int64_t t = i * 1000 * kUs;
    NvtxRecord n{};
    n.start_ns = t;
    n.end_ns = t + 900 * kUs;
    n.tid = n.end_tid = 7;
    n.name = static_cast<StringId>(4 + i);
    n.kind = NvtxKind::kPushPop;
    r.nvtx.push_back(n);
    auto launch = [&](int64_t s, int64_t ks, int64_t ke) {
      r.apis.push_back({t + s * kUs, t + (s + 5) * kUs, 7, corr, 0, 2, 0, ApiDomain::kRuntime, {}});
      KernelRecord k{};
      k.start_ns = t + ks * kUs;
      k.end_ns = t + ke * kUs;
      k.stream = 7;
      k.correlation = corr++;
      k.name = 1;
      r.kernels.push_back(k);
    };
    launch(10, 20, 420);
    launch(20, 421, 621);
    r.apis.push_back(
        {t + 30 * kUs, t + 630 * kUs, 7, corr++, 0, 3, 0, ApiDomain::kRuntime, {}});
  }
  return TraceModel::FromRecords(std::move(r));
}

struct Fixture {
  std::unique_ptr<TraceModel> m;
  StepSet steps;
  Graph g;
};

Fixture Build(std::unique_ptr<TraceModel> m) {
  Fixture f;
  f.m = std::move(m);
  auto s = DetectSteps(*f.m, StepOptions{});
  EXPECT_TRUE(s.ok());
  f.steps = *s;
  auto g = BuildGraph(*f.m, OpSteps(*f.m, f.steps), f.steps, GraphOptions{});
  EXPECT_TRUE(g.ok()) << g.status().message();
  f.g = *g;
  return f;
}

TEST(WhatIfGraph, EdgesAndTypicalDelays) {
  Fixture f = Build(SyncTrace());
  EXPECT_EQ(f.g.nodes.size(), 6u * 3 + 6u * 2);
  EXPECT_EQ(f.g.launch_latency, 10 * kUs);  // kernel A: launch-bound
  EXPECT_EQ(f.g.queue_gap, 1 * kUs);        // kernel B: queued
  EXPECT_EQ(f.g.sync_return, 9 * kUs);
  int block = 0, launch = 0, stream = 0, thread = 0;
  for (const Edge& e : f.g.edges) {
    block += e.kind == EdgeKind::kBlock;
    launch += e.kind == EdgeKind::kLaunch;
    stream += e.kind == EdgeKind::kStream;
    thread += e.kind == EdgeKind::kThread;
  }
  EXPECT_EQ(block, 6);  // each sync waits for kernel B of its step
  EXPECT_EQ(launch, 12);
  EXPECT_EQ(stream, 11);
  EXPECT_EQ(thread, 17);
}

TEST(WhatIfReplay, ReproducesEveryMeasuredTime) {
  Fixture f = Build(SyncTrace());
  const ReplayResult r = Replay(f.g);
  for (size_t v = 0; v < f.g.nodes.size(); ++v) {
    EXPECT_EQ(r.start[v], f.g.nodes[v].measured_start) << "node " << v;
    EXPECT_EQ(r.end[v], f.g.nodes[v].measured_end) << "node " << v;
  }
  const StepTimes t = StepDurations(f.g, r, f.steps, -1);
  EXPECT_EQ(t.median, 1000 * kUs);
}

TEST(WhatIfReplay, CriticalPathOfAHostBoundStep) {
  Fixture f = Build(SyncTrace());
  const ReplayResult r = Replay(f.g);
  const StepTimes t = StepDurations(f.g, r, f.steps, -1);
  const CriticalPath p = TraceCriticalPath(f.g, r, t, 3);
  EXPECT_EQ(p.duration, 1000 * kUs);
  // Back from kernel B of step 3: B (200) <- queue gap (1) <- A (400) <- launch
  // latency (10) <- launch A <- CPU since the previous sync (380) <- the sync,
  // which returned 9 us after kernel B of step 2 ended at its window start.
  int64_t total = 0;
  for (const PathPart& x : p.parts) total += x.ns;
  EXPECT_EQ(total, p.duration);
  EXPECT_FALSE(p.host_bound);  // GPU 601 us of the 1000, host 399
}

TEST(WhatIfTransforms, RemovingTheSyncMakesTheStepGpuBound) {
  Fixture f = Build(SyncTrace());
  Graph g = f.g;
  std::vector<uint32_t> syncs;
  for (uint32_t v = 0; v < g.nodes.size(); ++v) {
    if (g.nodes[v].block == BlockKind::kSync) syncs.push_back(v);
  }
  EXPECT_EQ(RemoveWaits(&g, syncs), 6);
  const StepTimes t = StepDurations(g, Replay(g), f.steps, -1);
  // The host (409 us a step) runs ahead; the GPU does 400 + 1 + 200 + 1 us.
  EXPECT_EQ(t.duration[4], 602 * kUs);
  EXPECT_EQ(t.duration[5], 602 * kUs);
}

TEST(WhatIfTransforms, CutHostTimeAndBatch) {
  Fixture f = Build(SyncTrace());
  // Data loading: the CPU time between the sync and the next step, cut to
  // 10 us: the host period becomes 5+5+5+5+9+10 = 39 us plus the GPU wait.
  std::vector<HostSpan> spans;
  for (int i = 1; i < 6; ++i) spans.push_back({7, (i - 1) * 1000 * kUs + 630 * kUs, i * 1000 * kUs});
  Graph g = f.g;
  EXPECT_GT(CutHostTime(&g, spans, 10 * kUs), 0);
  StepTimes t = StepDurations(g, Replay(g), f.steps, -1);
  // Each step: sync returns 9 us after B; 10 us CPU; launch A (+10 latency):
  // A starts 9+10+10 = 29 us after B ends; step = 29 + 400 + 1 + 200 = 630 us.
  EXPECT_EQ(t.duration[3], 630 * kUs);
  // Twice the batch, nothing else: the host still waits for the GPU every
  // step: its 600 us of kernels double, the rest (400 us) stays.
  Graph b = f.g;
  ScaleBatch(&b, {0, 1, 2, 3, 4, 5}, 2.0);
  t = StepDurations(b, Replay(b), f.steps, -1);
  EXPECT_EQ(t.duration[3], (1000 + 600) * kUs);
}

TEST(WhatIfTransforms, RemoveOpsAndScale) {
  Fixture f = Build(SyncTrace());
  Graph g = f.g;
  std::vector<uint32_t> a_kernels;
  for (uint32_t v = 0; v < g.nodes.size(); ++v) {
    const Node& n = g.nodes[v];
    if (n.kind == NodeKind::kOp && n.duration == 400 * kUs) a_kernels.push_back(v);
  }
  ASSERT_EQ(a_kernels.size(), 6u);
  Graph s = g;
  ScaleOps(&s, a_kernels, 0.5);  // kernel A 200 us: the step shrinks by 200
  EXPECT_EQ(StepDurations(s, Replay(s), f.steps, -1).duration[3], 800 * kUs);
}

TEST(WhatIfGraph, CycleIsAnError) {
  Graph g;
  g.nodes.resize(2);
  g.AddEdge(0, 1, 0, EdgeKind::kThread);
  g.AddEdge(1, 0, 0, EdgeKind::kThread);
  EXPECT_FALSE(g.Finalize().ok());
}

}  // namespace
}  // namespace stepscope::whatif
