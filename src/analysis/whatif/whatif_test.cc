// The what-if graph, its replay and the transformations on hand-built traces
// whose answers can be worked out by hand.
#include <gtest/gtest.h>

#include <string>

#include "analysis/whatif/graph.h"
#include "analysis/whatif/pricing.h"
#include "analysis/whatif/replay.h"
#include "analysis/whatif/transforms.h"
#include "analysis/whatif/untraced.h"

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
  r.strings = {"",       "gemm",   "cudaLaunchKernel", "cudaStreamSynchronize",
               "step 0", "step 1", "step 2",           "step 3",
               "step 4", "step 5", "step 6",           "step 7"};
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
    r.apis.push_back({t + 30 * kUs, t + 630 * kUs, 7, corr++, 0, 3, 0, ApiDomain::kRuntime, {}});
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

TEST(WhatIfTransforms, RemoveRoundTripsAndBatchLoops) {
  Fixture f = Build(SyncTrace());
  // The round trip removed (its sync waits no more and takes no time): as
  // RemovingTheSyncMakesTheStepGpuBound, the GPU bounds the step.
  Graph g = f.g;
  std::vector<uint32_t> syncs;
  for (uint32_t v = 0; v < g.nodes.size(); ++v) {
    if (g.nodes[v].block == BlockKind::kSync) syncs.push_back(v);
  }
  EXPECT_EQ(RemoveRoundTrips(&g, syncs, {}), 6 + 6);
  for (uint32_t v : syncs) EXPECT_EQ(g.nodes[v].duration, 0);
  EXPECT_EQ(StepDurations(g, Replay(g), f.steps, -1).duration[4], 602 * kUs);
  // A loop batched over the first 30 us of each step: launches A and B take no
  // time and the CPU time in the span goes (10 us of the 380 before launch A,
  // the gaps after A and B); the kernels bound the step after launch A, so the
  // step loses the 10 us before it: 990 us. The sync is not in the span.
  Graph b = f.g;
  std::vector<HostSpan> spans;
  for (int i = 1; i < 6; ++i) spans.push_back({7, i * 1000 * kUs, i * 1000 * kUs + 30 * kUs});
  EXPECT_GT(BatchLoops(&b, spans), 0);
  EXPECT_EQ(StepDurations(b, Replay(b), f.steps, -1).duration[3], 990 * kUs);
  for (uint32_t v : syncs) EXPECT_GT(b.nodes[v].duration, 0);
  Graph other = f.g;  // another thread's span changes nothing
  EXPECT_EQ(BatchLoops(&other, {{8, 1000 * kUs, 1030 * kUs}}), 0);
}

TEST(WhatIfTransforms, CutHostTimeAndBatch) {
  Fixture f = Build(SyncTrace());
  // Data loading: the CPU time between the sync and the next step, cut to
  // 10 us: the host period becomes 5+5+5+5+9+10 = 39 us plus the GPU wait.
  std::vector<HostSpan> spans;
  for (int i = 1; i < 6; ++i)
    spans.push_back({7, (i - 1) * 1000 * kUs + 630 * kUs, i * 1000 * kUs});
  Graph g = f.g;
  EXPECT_GT(CutHostTime(&g, spans, 10 * kUs), 0);
  StepTimes t = StepDurations(g, Replay(g), f.steps, -1);
  // Each step: sync returns 9 us after B; 10 us CPU; launch A (+10 latency):
  // A starts 9+10+10 = 29 us after B ends; step = 29 + 400 + 1 + 200 = 630 us.
  EXPECT_EQ(t.duration[3], 630 * kUs);
  // Shortened by a fixed amount (um_faults: a CPU fault burst become a bulk
  // copy): the 380 us between the sync and the next launch lose 300 us, so
  // the step is 630 + 70 us; more than the gap holds takes the span's part
  // of it (370 us, the 10 us past the span stay); a span on another thread
  // or inside a call (no gap) changes nothing.
  Graph sh = f.g;
  for (const HostSpan& sp : spans) EXPECT_EQ(ShortenHostTime(&sh, sp, 300 * kUs), 1);
  EXPECT_EQ(StepDurations(sh, Replay(sh), f.steps, -1).duration[3], 700 * kUs);
  Graph all = f.g;
  for (const HostSpan& sp : spans) ShortenHostTime(&all, sp, 5000 * kUs);
  EXPECT_EQ(StepDurations(all, Replay(all), f.steps, -1).duration[3], 630 * kUs);
  Graph none = f.g;
  EXPECT_EQ(ShortenHostTime(&none, {8, 630 * kUs, 1000 * kUs}, 300 * kUs), 0);
  EXPECT_EQ(ShortenHostTime(&none, {7, 11 * kUs, 14 * kUs}, 300 * kUs), 0);  // inside a call
  // Only a DataLoader's next() inside that gap goes (CutHostOverlap): 200 us of
  // the 380 us between the sync and the next launch, cut to 10 us: the step is
  // 630 + 370 - 190 = 810 us. At half the host speed (ScaleHost 0.5: every gap
  // half as long, the 200 us measured next() now 100 us of it), 90 us go.
  Graph ov = f.g;
  std::vector<HostSpan> next_calls;
  for (int i = 1; i < 6; ++i)
    next_calls.push_back({7, (i - 1) * 1000 * kUs + 700 * kUs, (i - 1) * 1000 * kUs + 900 * kUs});
  EXPECT_EQ(CutHostOverlap(&ov, next_calls, 10 * kUs), 5);
  EXPECT_EQ(StepDurations(ov, Replay(ov), f.steps, -1).duration[3], 810 * kUs);
  Graph half = f.g, half_cut = f.g;
  ScaleHost(&half, 0.5);
  ScaleHost(&half_cut, 0.5);
  CutHostOverlap(&half_cut, next_calls, 10 * kUs);
  EXPECT_EQ(StepDurations(half, Replay(half), f.steps, -1).duration[3] -
                StepDurations(half_cut, Replay(half_cut), f.steps, -1).duration[3],
            90 * kUs);
  Graph other = f.g;  // another thread's next() changes nothing
  EXPECT_EQ(CutHostOverlap(&other, {{8, 700 * kUs, 900 * kUs}}, 10 * kUs), 0);
  // Twice the batch, nothing else: the host still waits for the GPU every
  // step: its 600 us of kernels double, the rest (400 us) stays.
  Graph b = f.g;
  ScaleBatch(&b, {0, 1, 2, 3, 4, 5}, 2.0);
  t = StepDurations(b, Replay(b), f.steps, -1);
  EXPECT_EQ(t.duration[3], (1000 + 600) * kUs);
  // Twice the batch where the CPU time in the spans touches the batch's data
  // (unified-memory fault bursts): the span's 370 us of the gap double too;
  // a factor of 1 or less, or a span on another thread, changes nothing.
  Graph grown = f.g;
  const int n = ScaleBatch(&grown, {0, 1, 2, 3, 4, 5}, 2.0, spans);
  EXPECT_EQ(StepDurations(grown, Replay(grown), f.steps, -1).duration[3], (1600 + 370) * kUs);
  Graph each = f.g;  // the same, span by span: one gap each
  const int scaled = ScaleBatch(&each, {0, 1, 2, 3, 4, 5}, 2.0);
  for (const HostSpan& sp : spans) EXPECT_EQ(GrowHostTime(&each, sp, 2.0), 1);
  EXPECT_EQ(n, scaled + static_cast<int>(spans.size()));
  Graph same = f.g;
  EXPECT_EQ(GrowHostTime(&same, spans[0], 1.0), 0);
  EXPECT_EQ(GrowHostTime(&same, {8, 630 * kUs, 1000 * kUs}, 2.0), 0);
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
  // Set durations (um_faults: a prefetched kernel): A at 100 us, the step
  // shrinks by 300; a duration below 0 is 0.
  Graph d = g;
  EXPECT_EQ(SetDurations(&d, a_kernels, std::vector<int64_t>(6, 100 * kUs)), 6);
  EXPECT_EQ(StepDurations(d, Replay(d), f.steps, -1).duration[3], 700 * kUs);
  Graph z = g;
  SetDurations(&z, a_kernels, std::vector<int64_t>(6, -5));
  EXPECT_EQ(z.nodes[a_kernels[0]].duration, 0);
}

// A small trace builder for the tests below (times in us).
struct Builder {
  TraceModel::Records r;
  uint32_t corr = 1;
  Builder() {
    r.strings = {"", "k", "cudaLaunchKernel", "cudaStreamSynchronize", "cudaMemcpyAsync"};
    for (int i = 0; i < 8; ++i) r.strings.push_back("step " + std::to_string(i));
  }
  void Step(int i, int64_t start, int64_t end, uint32_t tid = 7) {
    NvtxRecord n{};
    n.start_ns = start * kUs;
    n.end_ns = end * kUs;
    n.tid = n.end_tid = tid;
    n.name = static_cast<StringId>(5 + i);
    n.kind = NvtxKind::kPushPop;
    r.nvtx.push_back(n);
  }
  void Launch(uint32_t tid, int64_t call, int64_t call_end, int64_t ks, int64_t ke) {
    r.apis.push_back({call * kUs, call_end * kUs, tid, corr, 0, 2, 0, ApiDomain::kRuntime, {}});
    KernelRecord k{};
    k.start_ns = ks * kUs;
    k.end_ns = ke * kUs;
    k.stream = 7;
    k.correlation = corr++;
    k.name = 1;
    r.kernels.push_back(k);
  }
  void Copy(uint32_t tid, int64_t call, int64_t call_end, int64_t cs, int64_t ce, CopyKind kind,
            MemoryKind host) {
    r.apis.push_back({call * kUs, call_end * kUs, tid, corr, 0, 4, 0, ApiDomain::kRuntime, {}});
    MemcpyRecord m{};
    m.start_ns = cs * kUs;
    m.end_ns = ce * kUs;
    m.bytes = 1 << 20;
    m.stream = 7;
    m.correlation = corr++;
    m.copy_kind = kind;
    m.src_kind = kind == CopyKind::kHostToDevice ? host : MemoryKind::kDevice;
    m.dst_kind = kind == CopyKind::kHostToDevice ? MemoryKind::kDevice : host;
    m.is_async = 1;
    r.memcpys.push_back(m);
  }
  void Sync(uint32_t tid, int64_t s, int64_t e) {
    r.apis.push_back({s * kUs, e * kUs, tid, corr++, 0, 3, 0, ApiDomain::kRuntime, {}});
  }
  Fixture Done() { return Build(TraceModel::FromRecords(std::move(r))); }
};

int64_t Step3(const Graph& g, const StepSet& steps) {
  return StepDurations(g, Replay(g), steps, -1).duration[3];
}

TEST(WhatIfGraph, HandOverToTheAutogradThread) {
  // Per step of 1000 us: main (7) launches the forward at 0 after 100 us of
  // CPU, hands over; the autograd thread (8) works 400 us of CPU, launches
  // the backward at 500; main resumes 20 us after it and launches the
  // optimizer at 520. Kernels are short: the host bounds the step.
  Builder b;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    b.Step(i, t, t + 990);
    b.Launch(7, t + 100, t + 105, t + 110, t + 120);
    b.Launch(8, t + 500, t + 505, t + 510, t + 520);
    b.Launch(7, t + 525, t + 530, t + 535, t + 545);
  }
  Fixture f = b.Done();
  int cross = 0;
  for (const Edge& e : f.g.edges) cross += e.kind == EdgeKind::kCrossThread;
  EXPECT_EQ(cross, 2 * 5 + 1);  // both hand-overs of every step but the first's
  EXPECT_EQ(Step3(f.g, f.steps), 1000 * kUs);
  // The autograd thread's 395 us before its launch cut to 100: the whole step
  // is 295 us shorter (main resumes after the autograd thread, not after its
  // own old gap).
  Graph g = f.g;
  std::vector<HostSpan> spans;
  for (int i = 0; i < 6; ++i) spans.push_back({8, (i * 1000 + 110) * kUs, (i * 1000 + 500) * kUs});
  EXPECT_GT(CutHostTime(&g, spans, 100 * kUs), 0);
  EXPECT_EQ(Step3(g, f.steps), 705 * kUs);
}

TEST(WhatIfTransforms, RemoveRecomputeCutsTheHostTimeOfCheckpointing) {
  // Per step of 1000 us (kernels 10 us: the host bounds the step):
  //   main (7), the forward: L1 [100, 105]; the checkpointed block L2 [200, 205]
  //     (the wrapper's entry: a 95 us gap), L3 [210, 215], L4 [220, 225];
  //   autograd (8): B1 [300, 305]; the recomputed block R1 [350, 355] (45 us
  //     of the re-run's Python before it), R2 [360, 365]; B2 [500, 505];
  //   main resumes: O [525, 530]; the next step's L1 570 us later.
  Builder b;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    b.Step(i, t, t + 990);
    for (int64_t s : {100, 200, 210, 220}) b.Launch(7, t + s, t + s + 5, t + s + 6, t + s + 16);
    for (int64_t s : {300, 350, 360, 500}) b.Launch(8, t + s, t + s + 5, t + s + 6, t + s + 16);
    b.Launch(7, t + 525, t + 530, t + 531, t + 541);
  }
  Fixture f = b.Done();
  ASSERT_EQ(Step3(f.g, f.steps), 1000 * kUs);
  std::vector<uint32_t> recomputed;
  std::vector<HostSpan> segments, boundaries;
  for (uint32_t v = 0; v < f.g.nodes.size(); ++v) {
    const Node& n = f.g.nodes[v];
    const int64_t at = n.measured_start / kUs % 1000;
    if (n.kind == NodeKind::kOp && (at == 356 || at == 366)) recomputed.push_back(v);
  }
  ASSERT_EQ(recomputed.size(), 12u);
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    segments.push_back({8, (t + 305) * kUs, (t + 365) * kUs});
    boundaries.push_back({7, (t + 105) * kUs, (t + 200) * kUs});
  }
  // Recompute segment: 45 + 5 us of CPU and 2 x 5 us of calls go (60 us);
  // the entry gap is cut from 95 to the 5 us of a launch gap (90 us).
  Graph g = f.g;
  EXPECT_GT(RemoveRecompute(&g, recomputed, segments, boundaries, 5 * kUs), 0);
  EXPECT_EQ(Step3(g, f.steps), 850 * kUs);
  // The hooks' share: the block's two 5 us launch gaps on main all go; half
  // of the autograd thread's 135 us gap before B2 (the recompute segment's
  // gaps are already cut, and scaling 0 keeps 0).
  Graph gs = f.g;
  std::vector<ScaledHostSpan> scaled;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    scaled.push_back({7, (t + 200) * kUs, (t + 225) * kUs, 0.0});
    scaled.push_back({8, (t + 300) * kUs, (t + 505) * kUs, 0.5});
  }
  EXPECT_GT(RemoveRecompute(&gs, recomputed, segments, boundaries, 5 * kUs, scaled), 0);
  EXPECT_EQ(Step3(gs, f.steps), (850 - 10) * kUs - 67500);
  // A gap that only starts inside a window is not the hooks' (L4 -> O on main).
  Graph gw = f.g;
  EXPECT_EQ(ScaleHostTime(&gw, {{7, 220 * kUs, 300 * kUs, 0.0}}), 0);
  // Without the forward's part: only the backward's 60 us.
  Graph h = f.g;
  EXPECT_GT(RemoveRecompute(&h, recomputed, segments, {}, 5 * kUs), 0);
  EXPECT_EQ(Step3(h, f.steps), 940 * kUs);
  // A recompute segment longer than what RemoveOps takes before a launch
  // (0.2 ms): the segment's span still removes all of it.
  Builder b2;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    b2.Step(i, t, t + 990);
    b2.Launch(7, t + 100, t + 105, t + 106, t + 116);
    b2.Launch(8, t + 200, t + 205, t + 206, t + 216);
    b2.Launch(8, t + 505, t + 510, t + 511, t + 521);  // recomputed: 300 us of Python before
    b2.Launch(8, t + 520, t + 525, t + 526, t + 536);
    b2.Launch(7, t + 545, t + 550, t + 551, t + 561);
  }
  Fixture f2 = b2.Done();
  ASSERT_EQ(Step3(f2.g, f2.steps), 1000 * kUs);
  std::vector<uint32_t> ops2;
  std::vector<HostSpan> seg2;
  for (uint32_t v = 0; v < f2.g.nodes.size(); ++v) {
    const Node& n = f2.g.nodes[v];
    if (n.kind == NodeKind::kOp && n.measured_start / kUs % 1000 == 511) ops2.push_back(v);
  }
  for (int i = 0; i < 6; ++i) seg2.push_back({8, (i * 1000 + 205) * kUs, (i * 1000 + 510) * kUs});
  Graph g2 = f2.g;
  EXPECT_GT(RemoveRecompute(&g2, ops2, seg2, {}, 0), 0);
  EXPECT_EQ(Step3(g2, f2.steps), 695 * kUs);  // 300 us of CPU and the 5 us call
  Graph r2 = f2.g;
  RemoveOps(&r2, ops2);  // the offload model alone takes only 0.2 ms of the Python
  EXPECT_EQ(Step3(r2, f2.steps), 795 * kUs);
}

TEST(WhatIfGraph, QueueFullLaunchWaitsForTheGpu) {
  // The host is far ahead of a GPU running 200 us kernels back to back from
  // t = 1000: from the 5th launch on, each returns 5 us after the kernel four
  // places earlier ends (a launch-queue slot frees). 3 launches per step.
  Builder b;
  int64_t host = 0;
  for (int j = 0; j < 18; ++j) {
    const int64_t start = host + 5;
    const int64_t end =
        j < 4 ? start + 5 : std::max<int64_t>(start + 5, 1000 + 200 * (j - 4) + 205);
    if (j % 3 == 0) b.Step(j / 3, start, start + 1);
    b.Launch(7, start, end, 1000 + 200 * j, 1200 + 200 * j);
    host = end;
  }
  for (int i = 0; i < 6; ++i) b.r.nvtx[i].end_ns = b.r.apis[3 * i + 2].end_ns;
  Fixture f = b.Done();
  int queue_full = 0;
  for (const Node& n : f.g.nodes) queue_full += n.block == BlockKind::kQueueFull;
  EXPECT_EQ(queue_full, 14);
  const ReplayResult r = Replay(f.g);
  for (size_t v = 0; v < f.g.nodes.size(); ++v) EXPECT_EQ(r.end[v], f.g.nodes[v].measured_end);
  EXPECT_EQ(Step3(f.g, f.steps), 600 * kUs);
  // Kernels twice as fast: the host, held by the queue, follows; 300 us steps.
  Graph g = f.g;
  std::vector<uint32_t> ops;
  for (uint32_t v = 0; v < g.nodes.size(); ++v) {
    if (g.nodes[v].kind == NodeKind::kOp) ops.push_back(v);
  }
  ScaleOps(&g, ops, 0.5);
  EXPECT_EQ(Step3(g, f.steps), 300 * kUs);
}

TEST(WhatIfTransforms, CudaGraphOverAHostBoundStep) {
  // 20 launches 50 us apart (45 us of CPU between them), kernels of 10 us:
  // the host bounds the 1000 us step. Graphed, the launches become one.
  Builder b;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    b.Step(i, t, t + 999);
    for (int k = 0; k < 20; ++k) {
      const int64_t c = t + k * 50;
      b.Launch(7, c, c + 5, c + 10, c + 20);
    }
  }
  Fixture f = b.Done();
  EXPECT_EQ(Step3(f.g, f.steps), 1000 * kUs);
  std::vector<HostSpan> spans;
  for (int i = 0; i < 6; ++i) spans.push_back({7, i * 1000 * kUs, (i * 1000 + 999) * kUs});
  Graph g = f.g;
  EXPECT_EQ(CudaGraph(&g, spans, 20 * kUs), 120);
  // Per step: the CPU before the first launch (50 us from the previous
  // step's last call), one 20 us graph launch, then the GPU: 20 kernels of
  // 10 us back to back (queue gap 0: the builder's queued gaps are 0).
  const int64_t step = Step3(g, f.steps);
  EXPECT_LT(step, 300 * kUs);
  EXPECT_GE(step, 200 * kUs);
}

TEST(WhatIfTransforms, PinnedAndSideStreamCopies) {
  // Per step: kernel A 100 us, a pageable 200 us upload the host waits for,
  // kernel B 100 us using it.
  Builder b;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1000;
    b.Step(i, t, t + 999);
    b.Launch(7, t + 10, t + 15, t + 20, t + 120);
    b.Copy(7, t + 20, t + 330, t + 121, t + 321, CopyKind::kHostToDevice, MemoryKind::kPageable);
    b.Launch(7, t + 600, t + 605, t + 610, t + 710);
  }
  Fixture f = b.Done();
  std::vector<uint32_t> copies;
  for (uint32_t v = 0; v < f.g.nodes.size(); ++v) {
    if (f.g.nodes[v].copy == CopyDirection::kHostToDevice) copies.push_back(v);
  }
  ASSERT_EQ(copies.size(), 6u);
  // Pinned: the host stops waiting (270 us sooner at kernel B's launch) and
  // the copy halves; the host's own CPU time still bounds the step.
  Graph p = f.g;
  std::vector<PinnedCopy> pinned;
  for (uint32_t v : copies) pinned.push_back({v, f.g.nodes[v].duration / 2, kNone});
  EXPECT_EQ(PinCopies(&p, pinned), 6);
  const StepTimes tp = StepDurations(p, Replay(p), f.steps, -1);
  EXPECT_LT(tp.duration[3], 1000 * kUs);
  // On a side stream, the upload must still end before kernel B starts.
  Graph s = f.g;
  EXPECT_EQ(SideStream(&s, copies), 6);
  const ReplayResult rs = Replay(s);
  for (uint32_t v : copies) {
    EXPECT_EQ(s.lanes[s.nodes[v].lane].id, kSideStreamId);
    const uint32_t b_kernel = v + 1;  // the next op node in gpu_ops order
    ASSERT_EQ(s.nodes[b_kernel].kind, NodeKind::kOp);
    EXPECT_GE(rs.start[b_kernel], rs.end[v]);
  }
}

TEST(WhatIfTransforms, PinnedBlockingUpload) {
  // PyTorch's blocking upload from pageable memory, per 1500 us step: kernel A
  // (500 us) runs while the host calls cudaMemcpyAsync, whose staged copy
  // waits for A and runs 500 us; the call returns 5 us before the copy ends
  // (so it has no block edge: its own time is the 995 us), then the upload's
  // cudaStreamSynchronize, then kernel B (200 us) that uses the data.
  Builder b;
  for (int i = 0; i < 6; ++i) {
    const int64_t t = i * 1500;
    b.Step(i, t, t + 1499);
    b.Launch(7, t + 10, t + 15, t + 20, t + 520);
    b.Copy(7, t + 30, t + 1025, t + 521, t + 1030, CopyKind::kHostToDevice, MemoryKind::kPageable);
    b.Sync(7, t + 1026, t + 1035);
    b.Launch(7, t + 1100, t + 1105, t + 1110, t + 1310);
  }
  Fixture f = b.Done();
  std::vector<PinnedCopy> with_sync, without_sync;
  for (uint32_t v = 0; v < f.g.nodes.size(); ++v) {
    if (f.g.nodes[v].copy != CopyDirection::kHostToDevice) continue;
    // The sync is the call after the copy's on the thread (calls come first, in order).
    const uint32_t call = f.g.call_node[f.m->gpu_ops()[f.g.nodes[v].index].api];
    with_sync.push_back({v, 100 * kUs, call + 1});
    without_sync.push_back({v, 100 * kUs, kNone});
  }
  ASSERT_EQ(with_sync.size(), 6u);
  EXPECT_EQ(f.g.nodes[with_sync[0].sync].block, BlockKind::kSync);
  EXPECT_EQ(Step3(f.g, f.steps), 1500 * kUs);
  // The copy at the pinned rate and neither call waiting: the host launches B
  // at once, and the GPU bounds the step: A, the copy, B (800 us).
  Graph p = f.g;
  PinCopies(&p, with_sync);
  const int64_t fixed = Step3(p, f.steps);
  EXPECT_GE(fixed, 800 * kUs);
  EXPECT_LT(fixed, 900 * kUs);
  // With the upload's sync still waiting, B's launch waits for the copy.
  Graph q = f.g;
  PinCopies(&q, without_sync);
  EXPECT_GT(Step3(q, f.steps), fixed + 50 * kUs);
}

TEST(WhatIfEngine, RemovesTheTracersOwnTime) {
  // SyncTrace's step with 100 us of the tracer's own time recorded with each
  // step's first launch (api.tracer_ns): it is taken out of the 380 us of CPU
  // time before that launch, so the host-bound step replays 100 us shorter.
  auto m = SyncTrace(8);
  TraceModel::Records r;
  r.strings = {"",       "gemm",   "cudaLaunchKernel", "cudaStreamSynchronize",
               "step 0", "step 1", "step 2",           "step 3",
               "step 4", "step 5", "step 6",           "step 7"};
  r.apis = m->apis();
  r.kernels = m->kernels();
  r.nvtx = m->nvtx();
  for (size_t i = 0; i < r.apis.size(); i += 3) r.apis[i].tracer_ns = 100 * kUs;
  Fixture f = Build(TraceModel::FromRecords(std::move(r)));
  auto e = WhatIfEngine::Build(*f.m, f.steps, 0);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->traced_base_median(), 1000 * kUs);
  EXPECT_EQ(e->tracer_ns_per_step(), 100 * kUs);
  EXPECT_EQ(e->base().median, 900 * kUs);
  EXPECT_DOUBLE_EQ(e->host_scale(), 1.0);
  // --keep-tracer-time: as traced.
  auto kept = WhatIfEngine::Build(*f.m, f.steps, 0, 0, true);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->tracer_ns_per_step(), 0);
  EXPECT_EQ(kept->base().median, 1000 * kUs);
  // More recorded than the gap holds: the gap goes to 0, never below.
  Graph g = f.g;
  for (Edge& x : g.edges)
    x.delay = x.kind == EdgeKind::kThread ? std::min<int64_t>(x.delay, 50 * kUs) : x.delay;
  for (const auto& [step, ns] : RemoveTracerTime(&g, *f.m)) EXPECT_LE(ns, 50 * kUs) << step;
  for (const Edge& x : g.edges) EXPECT_GE(x.delay, 0);
}

TEST(WhatIfEngine, UntracedHostSpeed) {
  // SyncTrace's step: the sync returns 9 us after kernel B (630), 380 us of CPU
  // time to the next step's first launch, 10 us of launch latency, 601 us of
  // kernels: 620 + 380 us of host time. Told that the untraced step is 900 us,
  // the engine scales host time by 0.9 (not more: the GPU's 620 us is not the
  // tracer's), so the step replays at 620 + 342 us, above the untraced figure,
  // and twice the batch is priced at that host speed: 10 + 1201 + 9 + 342 us.
  Fixture f = Build(SyncTrace(8));
  auto e = WhatIfEngine::Build(*f.m, f.steps, 0, 900 * kUs);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->traced_base_median(), 1000 * kUs);
  EXPECT_DOUBLE_EQ(e->host_scale(), 0.9);
  EXPECT_EQ(e->measured().median, 1000 * kUs);
  EXPECT_EQ(e->base().median, (620 + 342) * kUs);
  std::vector<int32_t> all;
  for (size_t k = 0; k < f.steps.steps.size(); ++k) all.push_back(static_cast<int32_t>(k));
  const Prediction p = e->Price([&](Graph* g) { return ScaleBatch(g, all, 2.0); });
  EXPECT_EQ(p.base_ns, (620 + 342) * kUs);
  EXPECT_EQ(p.fixed_ns, (1220 + 342) * kUs);
  // Without an untraced step nothing is scaled.
  auto plain = WhatIfEngine::Build(*f.m, f.steps, 0);
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->host_scale(), 1.0);
  EXPECT_EQ(plain->base().median, 1000 * kUs);
  // ScaleHost itself: calls and the CPU time between them, nothing on the GPU.
  Graph g = f.g;
  EXPECT_GT(ScaleHost(&g, 0.5), 0);
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    if (g.nodes[v].kind == NodeKind::kOp) EXPECT_EQ(g.nodes[v].duration, f.g.nodes[v].duration);
  }
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const EdgeKind kind = g.edges[k].kind;
    if (kind == EdgeKind::kLaunch || kind == EdgeKind::kStream || kind == EdgeKind::kBlock)
      EXPECT_EQ(g.edges[k].delay, f.g.edges[k].delay);
  }
}

// The iteration hook's mark of a --steps window: the first timed iteration left out from 3 on,
// the median of the rest; anything but 1-64 positive decimal integers is no measurement.
TEST(UntracedSteps, ParsesTheMarksDurations) {
  auto u = ParseUntracedSteps("2500000,2104000,2200000,2000000");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->median_ns, 2104000);
  EXPECT_EQ(u->steps, 3);
  EXPECT_DOUBLE_EQ(u->max_over_min, 1.1);
  EXPECT_TRUE(u->steady());
  EXPECT_TRUE(u->UsableFor(2104001));   // shorter than the traced step
  EXPECT_FALSE(u->UsableFor(2104000));  // not shorter: the tracer's cost is not what it shows
  // A loop whose host ran ahead of the GPU, then waited: not steady.
  u = ParseUntracedSteps("22779839,17732258,88698924,16976059,17885683");
  ASSERT_TRUE(u.has_value());
  EXPECT_FALSE(u->steady());
  u = ParseUntracedSteps("10,20");  // two: both kept, their mean
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->median_ns, 15);
  EXPECT_EQ(u->steps, 2);
  u = ParseUntracedSteps("7");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->median_ns, 7);
  for (const char* bad : {"", ",", "1,", ",1", "1,,2", "0", "-5", "1.5", "1 2", "x", "1,2,3a",
                          "99999999999999999999999"}) {
    EXPECT_FALSE(ParseUntracedSteps(bad).has_value()) << bad;
  }
  std::string many = "1";
  for (int i = 0; i < 63; ++i) many += ",1";
  EXPECT_TRUE(ParseUntracedSteps(many).has_value());  // 64 values
  EXPECT_FALSE(ParseUntracedSteps(many + ",1").has_value());
}

TEST(WhatIfGraph, CycleIsAnError) {
  Graph g;
  g.nodes.resize(2);
  g.AddEdge(0, 1, 0, EdgeKind::kThread);
  g.AddEdge(1, 0, 0, EdgeKind::kThread);
  EXPECT_FALSE(g.Finalize().ok());
}

TEST(WhatIfEngine, SaysWhatBoundsTheFixedStep) {
  // SyncTrace's step: 620 us of GPU work, then 380 us of CPU time. Its kernels
  // at a tenth of their time leave the host bounding the step; twice the batch
  // leaves the GPU.
  Fixture f = Build(SyncTrace(8));
  auto e = WhatIfEngine::Build(*f.m, f.steps, 0);
  ASSERT_TRUE(e.ok());
  std::vector<uint32_t> ops;
  for (uint32_t v = 0; v < e->graph().nodes.size(); ++v) {
    if (e->graph().nodes[v].kind == NodeKind::kOp) ops.push_back(v);
  }
  const Prediction faster = e->Price([&](Graph* g) { return ScaleOps(g, ops, 0.1); });
  EXPECT_TRUE(faster.host_bound_after);
  EXPECT_NE(faster.bound_after.find("host thread"), std::string::npos) << faster.bound_after;
  std::vector<int32_t> all;
  for (size_t k = 0; k < f.steps.steps.size(); ++k) all.push_back(static_cast<int32_t>(k));
  const Prediction larger = e->Price([&](Graph* g) { return ScaleBatch(g, all, 2.0); });
  EXPECT_FALSE(larger.host_bound_after);
  EXPECT_NE(larger.bound_after.find("GPU stream"), std::string::npos) << larger.bound_after;
}

TEST(WhatIfPricing, HostSpeedNotes) {
  // The header's note: a host-bound step, not scaled to an untraced one.
  EXPECT_NE(stepscope::HostBoundStepNote(true, false).find("can be smaller untraced"),
            std::string::npos);
  EXPECT_EQ(stepscope::HostBoundStepNote(false, false), "");
  EXPECT_EQ(stepscope::HostBoundStepNote(true, true), "");
  // A finding's note: only where its fix turns a GPU-bound step host-bound.
  EXPECT_NE(stepscope::HostSpeedCaveat(false, true, false).find("can be larger untraced"),
            std::string::npos);
  EXPECT_EQ(stepscope::HostSpeedCaveat(true, true, false), "");    // the header says it
  EXPECT_EQ(stepscope::HostSpeedCaveat(false, false, false), "");  // still GPU-bound
  EXPECT_EQ(stepscope::HostSpeedCaveat(false, true, true), "");  // priced at a given untraced step
}

}  // namespace
}  // namespace stepscope::whatif
