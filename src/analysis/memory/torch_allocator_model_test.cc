#include "analysis/memory/torch_allocator_model.h"

#include <gtest/gtest.h>

namespace stepscope::memory {
namespace {

constexpr uint64_t MiB = 1 << 20;

TEST(BlockModel, LargePoolSplitsOnlyWhenMoreThanOneMiBRemains) {
  BlockModel m(false, -1);
  m.AddSegment(0x100000000, 20 * MiB, false);
  // 9.5 MiB from 20 MiB: 10.5 MiB remain (> 1 MiB): split.
  EXPECT_EQ(m.Alloc(0x100000000, 9 * MiB + MiB / 2), 9 * MiB + MiB / 2);
  // 9.5 MiB from the remaining 10.5 MiB: 1 MiB would remain (not > 1 MiB): whole block.
  EXPECT_EQ(m.Alloc(0x100000000 + 9 * MiB + MiB / 2, 9 * MiB + MiB / 2), 10 * MiB + MiB / 2);
  EXPECT_EQ(m.misses(), 0u);
  // Free the first block and allocate 1000 B there... a small request in a large
  // segment is a model miss only if the region is wrong; here it is right.
  m.Free(0x100000000, 9 * MiB + MiB / 2);
  EXPECT_EQ(m.Alloc(0x100000000, 4 * MiB + 100), 4 * MiB + 512);
  EXPECT_EQ(m.misses(), 0u);
}

TEST(BlockModel, SmallPoolRoundsTo512AndSplits) {
  BlockModel m(false, -1);
  m.AddSegment(0x2000000, 2 * MiB, false);
  EXPECT_EQ(m.Alloc(0x2000000, 1), 512u);
  EXPECT_EQ(m.Alloc(0x2000000 + 512, 1000), 1024u);
  // Nearly all of the rest: 2 MiB - 1536 - 1500 rounded leaves < 512: whole remainder.
  uint64_t rest = 2 * MiB - 1536;
  EXPECT_EQ(m.Alloc(0x2000000 + 1536, rest - 100), rest);
  EXPECT_EQ(m.misses(), 0u);
}

TEST(BlockModel, FreeBlocksCoalesceWithinASegmentOnly) {
  BlockModel m(false, -1);
  m.AddSegment(0x1000000, 4 * MiB, false);
  m.AddSegment(0x1400000, 4 * MiB, false);  // adjacent in address space, separate cudaMalloc
  // 3.5 MiB of 4 MiB: 0.5 MiB would remain: the whole 4 MiB block.
  EXPECT_EQ(m.Alloc(0x1000000, 3 * MiB + MiB / 2), 4 * MiB);
  m.Free(0x1000000, 4 * MiB);
  // Had the free space merged with the next segment, 4.5 MiB would remain and
  // the block would be split to 3.5 MiB.
  EXPECT_EQ(m.Alloc(0x1000000, 3 * MiB + MiB / 2), 4 * MiB);
  // Within one segment, freed neighbours do merge.
  EXPECT_EQ(m.Alloc(0x1400000, MiB), MiB);
  EXPECT_EQ(m.Alloc(0x1500000, MiB), MiB);
  m.Free(0x1400000, MiB);
  m.Free(0x1500000, MiB);
  // The merged 4 MiB region: 2.5 MiB leaves 1.5 MiB (> 1 MiB): split. Without
  // the merge the first 1 MiB region could not hold it (a model miss).
  EXPECT_EQ(m.Alloc(0x1400000, 2 * MiB + MiB / 2), 2 * MiB + MiB / 2);
  EXPECT_EQ(m.misses(), 0u);
}

TEST(BlockModel, UnknownAddressIsAMiss) {
  BlockModel m(false, -1);
  EXPECT_EQ(m.Alloc(0x5000, 700), 1024u);
  EXPECT_EQ(m.misses(), 1u);
}

TorchTraceEntry E(TorchAction a, int64_t us, uint64_t addr, uint64_t size, int32_t stack = -1) {
  TorchTraceEntry e;
  e.action = a;
  e.time_us = us;
  e.addr = addr;
  e.size = size;
  e.stack = stack;
  return e;
}

TEST(TorchProfile, AllocatedUsesBlockSizesAndFreesAtFreeRequested) {
  TorchMemoryFile f;
  f.version = 1;
  f.frames = {{"/usr/lib/python3/site-packages/torch/nn/functional.py", 10, "linear"},
              {"/home/u/model.py", 42, "forward"}};
  f.stacks = {{0, 1}};
  TorchDevice d;
  d.device = 0;
  const uint64_t S = 0x7f0000000000;
  const uint64_t big = 9 * MiB + MiB / 2;
  d.trace = {E(TorchAction::kSegmentAlloc, 1000, S, 20 * MiB),
             E(TorchAction::kAlloc, 1001, S, big, 0),
             E(TorchAction::kAlloc, 1002, S + big, big, 0),  // block 10.5 MiB
             E(TorchAction::kFreeRequested, 1003, S, big),
             E(TorchAction::kFreeCompleted, 1004, S, big),
             E(TorchAction::kAlloc, 1005, S, 2 * MiB, 0),
             E(TorchAction::kOom, 1006, 123456, 64 * MiB, 0)};
  f.devices.push_back(d);
  auto profiles = BuildTorchProfiles(f, 0);
  ASSERT_EQ(profiles.size(), 1u);
  const TorchDeviceProfile& p = profiles[0];
  EXPECT_EQ(p.peak_reserved, 20 * MiB);
  EXPECT_EQ(p.peak_reserved_ns, 1000 * 1000);
  EXPECT_EQ(p.peak_allocated, 20 * MiB);  // 9.5 + 10.5
  EXPECT_EQ(p.peak_allocated_ns, 1002 * 1000);
  EXPECT_EQ(p.end_allocated, static_cast<int64_t>(10 * MiB + MiB / 2 + 2 * MiB));
  EXPECT_EQ(p.model_misses, 0u);
  auto live = p.LiveAt(p.peak_allocated_index);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0]->block_size, 10 * MiB + MiB / 2);
  ASSERT_EQ(p.ooms.size(), 1u);
  EXPECT_EQ(p.ooms[0].requested, static_cast<int64_t>(64 * MiB));
  EXPECT_EQ(p.ooms[0].device_free, 123456);
  EXPECT_EQ(p.LiveAt(p.ooms[0].index).size(), 2u);
  const TorchFrame* uf = UserFrame(f, 0);
  ASSERT_NE(uf, nullptr);
  EXPECT_EQ(FrameLabel(uf), "u/model.py:42 forward");
}

TEST(TorchProfile, FullHistoryTakesItsBaselineFromTheFinalSegments) {
  TorchMemoryFile f;
  f.version = 1;
  f.max_entries = 2;
  TorchDevice d;
  TorchSegment s;
  s.address = 0x1000000;
  s.total_size = 20 * MiB;
  s.blocks = {{0x1000000, 4 * MiB, 4 * MiB, TorchBlockState::kActiveAllocated, -1},
              {0x1400000, 16 * MiB, 0, TorchBlockState::kInactive, -1}};
  d.segments = {s};
  // Only the last two events survived: a 2 MiB tensor came and went.
  d.trace = {E(TorchAction::kAlloc, 5, 0x1400000, 2 * MiB),
             E(TorchAction::kFreeRequested, 6, 0x1400000, 2 * MiB)};
  f.devices.push_back(d);
  auto p = BuildTorchProfiles(f, 0)[0];
  EXPECT_TRUE(p.history_full);
  EXPECT_EQ(p.start_allocated, static_cast<int64_t>(4 * MiB));
  EXPECT_EQ(p.start_reserved, static_cast<int64_t>(20 * MiB));
  EXPECT_EQ(p.peak_allocated, 6 * MiB);  // model miss: rounded size 2 MiB
  EXPECT_EQ(p.peak_reserved, 20 * MiB);
  EXPECT_EQ(p.model_misses, 1u);
}

}  // namespace
}  // namespace stepscope::memory
