#include "analysis/memory/memory_model.h"

#include <gtest/gtest.h>

namespace stepscope::memory {
namespace {

AllocEvent Ev(int64_t ts, MemoryOp op, uint64_t addr, uint64_t bytes,
              SeriesKind kind = SeriesKind::kDevice, int32_t place = 0, uint32_t stream = 7) {
  AllocEvent e;
  e.ts_ns = e.call_ns = ts;
  e.op = op;
  e.address = addr;
  e.bytes = bytes;
  e.kind = kind;
  e.place = place;
  e.stream = stream;
  return e;
}

constexpr MemoryOp A = MemoryOp::kAlloc;
constexpr MemoryOp F = MemoryOp::kFree;

TEST(MemoryModel, InterleavedStreamsPeakAndLiveSet) {
  // Two streams: 100 (s1) + 50 (s2) - 100 + 200 = 250 is the peak, then 200.
  std::vector<AllocEvent> ev = {Ev(10, A, 0x1000, 100, SeriesKind::kDevice, 0, 1),
                                Ev(20, A, 0x2000, 50, SeriesKind::kPool, 0, 2),
                                Ev(30, F, 0x1000, 100, SeriesKind::kDevice, 0, 1),
                                Ev(40, A, 0x3000, 200, SeriesKind::kDevice, 0, 1),
                                Ev(50, F, 0x2000, 50, SeriesKind::kPool, 0, 2)};
  std::vector<TimelinePoint> tl;
  MemoryProfile p = BuildMemoryProfile(ev, &tl);
  const SeriesStats& total = p.series.at({0, SeriesKind::kTotal});
  EXPECT_EQ(total.peak_bytes, 250u);
  EXPECT_EQ(total.peak_ns, 40);
  EXPECT_EQ(total.peak_event, 3u);
  EXPECT_EQ(total.end_bytes, 200u);
  EXPECT_EQ(total.allocs, 3u);
  EXPECT_EQ(total.frees, 2u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kDevice}).peak_bytes, 200u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kPool}).peak_bytes, 50u);
  auto live = p.LiveAfter(3, {0, SeriesKind::kTotal});
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0]->address, 0x3000u);  // largest first
  EXPECT_EQ(live[1]->address, 0x2000u);
  EXPECT_EQ(p.BytesAfter(3, {0, SeriesKind::kTotal}), 250u);
  // One point per event for the kind, one for the total.
  EXPECT_EQ(tl.size(), 10u);
  EXPECT_EQ(tl.back().kind, SeriesKind::kTotal);
  EXPECT_EQ(tl.back().bytes, 200u);
}

TEST(MemoryModel, UnknownAndNullFreesChangeNothing) {
  std::vector<AllocEvent> ev = {Ev(1, F, 0x9000, 64), Ev(2, A, 0x1000, 10), Ev(3, F, 0, 0),
                                Ev(4, F, 0x9000, 64)};
  MemoryProfile p = BuildMemoryProfile(ev);
  EXPECT_EQ(p.quality.unknown_frees, 2u);
  EXPECT_EQ(p.quality.unknown_free_bytes, 128u);
  EXPECT_EQ(p.quality.null_frees, 1u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kTotal}).end_bytes, 10u);
  EXPECT_EQ(p.allocations[0].free_event, kNever);
}

TEST(MemoryModel, AllocAtLiveAddressClosesTheOldOne) {
  std::vector<AllocEvent> ev = {Ev(1, A, 0x1000, 10), Ev(2, A, 0x1000, 30), Ev(3, F, 0x1000, 30)};
  MemoryProfile p = BuildMemoryProfile(ev);
  EXPECT_EQ(p.quality.realloc_of_live, 1u);
  ASSERT_EQ(p.allocations.size(), 2u);
  EXPECT_EQ(p.allocations[0].free_event, 1u);
  EXPECT_EQ(p.allocations[1].free_event, 2u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kDevice}).peak_bytes, 30u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kDevice}).end_bytes, 0u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kDevice}).frees, 2u);
}

TEST(MemoryModel, PinnedAndManagedAreNotInTotals) {
  std::vector<AllocEvent> ev = {Ev(1, A, 0x1000, 10, SeriesKind::kPinned, kHostPlace),
                                Ev(2, A, 0x2000, 20, SeriesKind::kManaged, 0),
                                Ev(3, A, 0x3000, 5, SeriesKind::kHostMalloc, kHostPlace)};
  MemoryProfile p = BuildMemoryProfile(ev);
  EXPECT_EQ(p.series.count({0, SeriesKind::kTotal}), 0u);
  EXPECT_EQ(p.series.at({kHostPlace, SeriesKind::kTotal}).peak_bytes, 5u);
  EXPECT_EQ(p.series.at({kHostPlace, SeriesKind::kPinned}).peak_bytes, 10u);
  EXPECT_EQ(p.series.at({0, SeriesKind::kManaged}).peak_bytes, 20u);
}

TEST(MemoryModel, FreeReleasesTheAllocatedSizeNotTheClaimedOne) {
  std::vector<AllocEvent> ev = {Ev(1, A, 0x1000, 100), Ev(2, F, 0x1000, 7)};
  MemoryProfile p = BuildMemoryProfile(ev);
  EXPECT_EQ(p.series.at({0, SeriesKind::kDevice}).end_bytes, 0u);
}

TEST(MemoryModel, LastEventAtOrBefore) {
  std::vector<AllocEvent> ev = {Ev(10, A, 1, 1), Ev(20, A, 2, 1), Ev(20, A, 3, 1)};
  EXPECT_EQ(LastEventAtOrBefore(ev, 5), kNever);
  EXPECT_EQ(LastEventAtOrBefore(ev, 10), 0u);
  EXPECT_EQ(LastEventAtOrBefore(ev, 25), 2u);
}

TEST(MemoryModel, DownsampleKeepsThePeak) {
  std::vector<TimelinePoint> pts;
  for (int i = 0; i < 1000; ++i) {
    pts.push_back({i, 0, SeriesKind::kTotal, static_cast<uint64_t>(i == 637 ? 99999 : i % 10)});
  }
  pts.insert(pts.begin() + 6, {5, 1, SeriesKind::kTotal, 1});  // another series, kept whole
  auto out = DownsampleTimeline(pts, 100);
  EXPECT_LE(out.size(), 101u);
  bool peak = false, other = false;
  for (const auto& p : out) {
    peak = peak || p.bytes == 99999;
    other = other || p.place == 1;
  }
  EXPECT_TRUE(peak);
  EXPECT_TRUE(other);
  for (size_t i = 1; i < out.size(); ++i) EXPECT_LE(out[i - 1].ts_ns, out[i].ts_ns);
}

}  // namespace
}  // namespace stepscope::memory
