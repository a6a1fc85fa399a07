// Replays the PyTorch caching allocator's history (from the PyTorch memory
// file) into "allocated" and "reserved" bytes over time, per device, and keeps
// every tensor allocation with its Python stack so that the live tensors at
// the allocated peak, or at an OOM, can be listed.
//
// Definitions (they match torch.cuda.memory_stats):
//  * reserved = bytes in the allocator's segments: + size at segment_alloc and
//    segment_map, - size at segment_free and segment_unmap. Its maximum is
//    torch.cuda.max_memory_reserved.
//  * allocated = bytes in blocks handed to tensors: + the block size at alloc,
//    - the same block size at free_requested (PyTorch decreases
//    allocated_bytes when the tensor is freed, not when its stream work
//    completes). Its maximum is torch.cuda.max_memory_allocated.
//
// The history records the *requested* size of an allocation, while PyTorch
// counts the *block* size: the request rounded up to 512 bytes, or a whole
// cached block when the allocator chose not to split it (the remainder would be
// <= 1 MiB in the large pool, < 512 B in the small pool or with expandable
// segments). BlockModel below recovers the block size by tracking the free
// space of every segment: the allocator always carves a block from the start of
// a free region, so the free region at the allocation's address says how much
// it had. When the model disagrees with the history (history that starts
// mid-run, settings it does not know, such as roundup_power2_divisions), the
// allocation counts as a model miss and its rounded size is used.
//
// Baseline: when the history ring buffer was full, the oldest entries are
// lost; the state before the first recorded entry is then derived from the
// final segments (final totals minus the sum of the recorded changes).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/memory/memory_model.h"
#include "analysis/memory/torch_memory_file.h"

namespace stepscope::memory {

inline constexpr uint64_t kTorchMinBlockSize = 512;
inline constexpr uint64_t kTorchSmallSize = 1 << 20;  // requests up to this use the small pool

// Free-space model of the caching allocator's segments (see above).
class BlockModel {
 public:
  BlockModel(bool expandable_segments, int64_t max_split_size)
      : expandable_(expandable_segments), max_split_size_(max_split_size) {}
  // segment_alloc (mapped = false) or segment_map (mapped = true: adjacent
  // mapped ranges form one growable segment).
  void AddSegment(uint64_t address, uint64_t size, bool mapped);
  void RemoveSegment(uint64_t address, uint64_t size);
  // Returns the block size of an allocation of `requested` bytes at `address`.
  uint64_t Alloc(uint64_t address, uint64_t requested);
  // The block at `address` became free (free_completed).
  void Free(uint64_t address, uint64_t block_size);
  uint64_t misses() const { return misses_; }

  static uint64_t RoundSize(uint64_t requested);

 private:
  struct Seg {
    uint64_t end;
    bool mapped;
  };
  // Removes [start, end) from `ranges` (start -> end), splitting ranges.
  template <typename V>
  static void Carve(std::map<uint64_t, V>& ranges, uint64_t start, uint64_t end);

  bool expandable_;
  int64_t max_split_size_;
  std::map<uint64_t, Seg> segments_;
  std::map<uint64_t, uint64_t> free_;  // start -> end, never crossing a segment's end
  uint64_t misses_ = 0;
};

struct TorchTensor {
  uint64_t address = 0;
  uint64_t requested = 0;
  uint64_t block_size = 0;
  int64_t alloc_ns = 0;  // trace clock
  int32_t stack = -1;
  size_t alloc_index = 0;      // history index of the alloc
  size_t free_index = kNever;  // history index of its free_requested; kNever: live at the end
};

struct TorchOomAt {
  int64_t ts_ns = 0;  // trace clock
  int64_t requested = -1;
  int64_t device_free = -1;
  int64_t device_allocated = -1;
  int64_t total = -1;
  size_t index = kNever;  // last history entry at or before the OOM
  int32_t stack = -1;
};

struct TorchDeviceProfile {
  int32_t device = 0;
  std::vector<TimelinePoint> timeline;  // kTorchAllocated and kTorchReserved, place = device
  uint64_t peak_allocated = 0, peak_reserved = 0;
  int64_t peak_allocated_ns = -1, peak_reserved_ns = -1;
  size_t peak_allocated_index = kNever;
  int64_t start_allocated = 0, start_reserved = 0;          // before the first recorded entry
  int64_t end_allocated = 0, end_reserved = 0;              // after the last entry (model)
  int64_t snapshot_allocated = -1, snapshot_reserved = -1;  // from the final segments
  bool history_full = false;
  uint64_t entries = 0;
  uint64_t model_misses = 0;
  uint64_t unknown_frees = 0;  // free_requested of an address with no recorded alloc
  std::vector<TorchTensor> tensors;
  std::vector<TorchOomAt> ooms;
  TorchCounters counters;

  // Tensors live right after history entry `index`, largest first.
  std::vector<const TorchTensor*> LiveAt(size_t index) const;
};

// trace_ns = time_us * 1000 - wall_clock_offset_ns.
std::vector<TorchDeviceProfile> BuildTorchProfiles(const TorchMemoryFile& file,
                                                   int64_t wall_clock_offset_ns);

// The frame that best names "who allocated": the innermost frame outside
// PyTorch, the Python standard library and stepscope itself; the innermost
// frame when all are internal; nullptr for an empty stack.
const TorchFrame* UserFrame(const TorchMemoryFile& file, int32_t stack);
// "train.py:65 forward" (file shortened to its last two path components).
std::string FrameLabel(const TorchFrame* frame);

}  // namespace stepscope::memory
