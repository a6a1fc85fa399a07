#include "capture/host_mem/host_mem.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace stepscope::hostmem {
namespace {

std::vector<HostAllocRecord> DrainAll() {
  std::vector<HostAllocRecord> out;
  Drain(
      [](const HostAllocRecord* r, size_t n, void* ctx) {
        auto* v = static_cast<std::vector<HostAllocRecord>*>(ctx);
        v->insert(v->end(), r, r + n);
      },
      &out);
  return out;
}

TEST(HostMem, RecordsAndDrainsInOrderPerThread) {
  DrainAll();
  Record(HostAllocOp::kAlloc, HostAllocKind::kMalloc, 0x1000, 2 << 20);
  Record(HostAllocOp::kFree, HostAllocKind::kMalloc, 0x1000, 2 << 20);
  Record(HostAllocOp::kAlloc, HostAllocKind::kMmap, 0x2000, 4 << 20);
  auto v = DrainAll();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].op, HostAllocOp::kAlloc);
  EXPECT_EQ(v[1].op, HostAllocOp::kFree);
  EXPECT_EQ(v[2].kind, HostAllocKind::kMmap);
  EXPECT_EQ(v[2].bytes, 4u << 20);
  EXPECT_EQ(v[0].tid, static_cast<uint32_t>(::syscall(SYS_gettid)));
  EXPECT_LE(v[0].ts_ns, v[2].ts_ns);
  EXPECT_GT(v[0].ts_ns, 1'500'000'000'000'000'000LL);  // CLOCK_REALTIME
  EXPECT_TRUE(DrainAll().empty());
}

TEST(HostMem, ThreadsHaveTheirOwnRingsAndRingsAreReused) {
  DrainAll();
  auto work = [](uint64_t base) {
    for (int i = 0; i < 100; ++i) Record(HostAllocOp::kAlloc, HostAllocKind::kMalloc, base + i, 1);
  };
  std::thread a(work, 0x10000), b(work, 0x20000);
  a.join();
  b.join();
  auto v = DrainAll();
  ASSERT_EQ(v.size(), 200u);
  uint32_t tid_a = 0, tid_b = 0;
  for (const auto& r : v) {
    (r.address < 0x20000 ? tid_a : tid_b) = r.tid;
  }
  EXPECT_NE(tid_a, tid_b);
  // A new thread after those exited (and were drained) reuses a ring: the
  // number of rings does not grow without bound. Observable: records still flow.
  std::thread c(work, 0x30000);
  c.join();
  EXPECT_EQ(DrainAll().size(), 100u);
}

TEST(HostMem, AFullRingDropsAndCounts) {
  DrainAll();
  uint64_t before = Dropped();
  for (uint32_t i = 0; i < kRingCapacity + 10; ++i) {
    Record(HostAllocOp::kAlloc, HostAllocKind::kMalloc, i, 1);
  }
  EXPECT_EQ(Dropped() - before, 10u);
  auto v = DrainAll();
  ASSERT_EQ(v.size(), kRingCapacity);
  EXPECT_EQ(v.back().address, kRingCapacity - 1);
  // Wrapped storage drains in order.
  for (int i = 0; i < 10; ++i) Record(HostAllocOp::kFree, HostAllocKind::kMalloc, 100 + i, 1);
  v = DrainAll();
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9].address, 109u);
}

TEST(HostMem, ThresholdDefaultsToOneMiB) {
  unsetenv("STEPSCOPE_HOST_MEM_THRESHOLD");
  SetThresholdForTest(0);
  EXPECT_EQ(Threshold(), 1u << 20);
  setenv("STEPSCOPE_HOST_MEM_THRESHOLD", "4096", 1);
  SetThresholdForTest(0);
  EXPECT_EQ(Threshold(), 4096u);
  unsetenv("STEPSCOPE_HOST_MEM_THRESHOLD");
}

}  // namespace
}  // namespace stepscope::hostmem
