#include "analysis/model/host.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(Host, OsrtState) {
  EXPECT_EQ(OsrtState("pthread_cond_wait"), ThreadState::kBlockedLock);
  EXPECT_EQ(OsrtState("futex"), ThreadState::kBlockedLock);
  EXPECT_EQ(OsrtState("sem_timedwait"), ThreadState::kBlockedLock);
  EXPECT_EQ(OsrtState("read"), ThreadState::kBlockedIo);
  EXPECT_EQ(OsrtState("epoll_wait"), ThreadState::kBlockedIo);
  EXPECT_EQ(OsrtState("clock_nanosleep"), ThreadState::kSleep);
  EXPECT_EQ(OsrtState("cudaStreamSynchronize"), ThreadState::kBlockedCuda);
  EXPECT_EQ(OsrtState("GIL"), ThreadState::kBlockedGil);
  EXPECT_EQ(OsrtState("ioctl"), ThreadState::kBlockedOther);
}

// strings: 1 pthread_cond_wait, 2 cudaStreamSynchronize, 3 cudaLaunchKernel,
// 4 python_function, 5 outer, 6 inner
TraceModel::Records Base() {
  TraceModel::Records r;
  r.strings = {"",
               "pthread_cond_wait",
               "cudaStreamSynchronize",
               "cudaLaunchKernel",
               "python_function",
               "outer",
               "inner"};
  return r;
}

TEST(Host, SchedOffCpuIsExplainedByWaits) {
  TraceModel::Records r = Base();
  // Thread 5: running [0, 100), off [100, 400), running [400, 500).
  r.sched = {{0, 100, 5, 2, ThreadState::kRunning, {}},
             {100, 400, 5, -1, ThreadState::kUnknown, {}},
             {400, 500, 5, 3, ThreadState::kRunning, {}}};
  // A condition wait [150, 250) and a sync [300, 420) (it outlasts the off-CPU interval).
  r.osrt = {{150, 250, 5, 1, 0, 0, kOsrtImported, {}}};
  ApiRecord sync{};
  sync.start_ns = 300;
  sync.end_ns = 420;
  sync.tid = 5;
  sync.name = 2;
  r.apis = {sync};
  auto m = TraceModel::FromRecords(std::move(r));
  HostSource src;
  std::vector<HostSegment> s = ThreadSegments(*m, 5, &src);
  EXPECT_EQ(src, HostSource::kSched);
  ASSERT_EQ(s.size(), 6u);
  const int64_t want[][3] = {{0, 100, 1},   {100, 150, 0}, {150, 250, 4},
                             {250, 300, 0}, {300, 400, 2}, {400, 500, 1}};
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].start_ns, want[i][0]) << i;
    EXPECT_EQ(s[i].end_ns, want[i][1]) << i;
    EXPECT_EQ(static_cast<int>(s[i].state), want[i][2]) << i;
  }
  // A thread without host evidence has no segment.
  HostSource none;
  EXPECT_TRUE(ThreadSegments(*m, 6, &none).empty());
  EXPECT_EQ(none, HostSource::kNone);
  EXPECT_EQ(InWindows(0, 500, {{50, 120}, {450, 1000}}), 120);
}

TEST(Host, SamplesCoverOnePeriod) {
  TraceModel::Records r = Base();
  r.sample_hz = 1000;
  r.samples = {{2000000, 9, ThreadState::kRunning, {}, 0, 0, -1},
               {1000000, 9, ThreadState::kBlockedLock, {}, 1, 0, -1}};
  auto m = TraceModel::FromRecords(std::move(r));
  HostSource src;
  std::vector<HostSegment> s = ThreadSegments(*m, 9, &src);
  EXPECT_EQ(src, HostSource::kSamples);
  ASSERT_EQ(s.size(), 2u);  // sorted by time
  EXPECT_EQ(s[0].start_ns, 1000000);
  EXPECT_EQ(s[0].end_ns, 2000000);
  EXPECT_EQ(s[0].state, ThreadState::kBlockedLock);
  EXPECT_EQ(s[1].end_ns, 3000000);
}

TEST(Host, HotspotsFromPythonFunctionSpans) {
  TraceModel::Records r = Base();
  NvtxRecord outer{}, inner{};
  outer.start_ns = 0;
  outer.end_ns = 100;
  outer.tid = 1;
  outer.end_tid = 1;
  outer.domain = 4;
  outer.name = 5;
  outer.kind = NvtxKind::kPushPop;
  inner = outer;
  inner.start_ns = 20;
  inner.end_ns = 50;
  inner.name = 6;
  inner.depth = 1;
  r.nvtx = {outer, inner};
  auto m = TraceModel::FromRecords(std::move(r));
  PythonHotspots h = ComputePythonHotspots(*m, 0, {});
  EXPECT_EQ(h.source, "python_function spans");
  ASSERT_EQ(h.lines.size(), 2u);
  EXPECT_EQ(h.lines[0].label, "outer");
  EXPECT_EQ(h.lines[0].self_ns, 70);
  EXPECT_EQ(h.lines[0].total_ns, 100);
  EXPECT_EQ(h.lines[1].self_ns, 30);
  EXPECT_EQ(h.total_ns, 100);
  // No evidence: no source.
  auto empty = TraceModel::FromRecords(Base());
  EXPECT_TRUE(ComputePythonHotspots(*empty, 0, {}).source.empty());
  EXPECT_FALSE(HasHostModel(*empty));
}

}  // namespace
}  // namespace stepscope
