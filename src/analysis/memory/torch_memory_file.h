// The PyTorch memory file: what python/stepscope/_torch_memory.py writes
// beside a trace (format "stepscope-torch-memory", version 1; docs/memory.md
// has the full contract). It is a compact re-encoding of
// torch.cuda.memory._snapshot(): the caching allocator's segments and blocks at
// the time of the dump, its history of actions per device (alloc,
// free_requested, free_completed, segment_alloc, segment_free, segment_map,
// segment_unmap, oom, snapshot), Python stacks interned once, the allocator's
// own counters, and the OOMs the out-of-memory observer saw.
//
// Times: time_us of history entries is PyTorch's clock (Unix epoch
// microseconds, CLOCK_REALTIME); *_unix_ns fields are Unix epoch nanoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace stepscope::memory {

enum class TorchAction : uint8_t {
  kUnknown = 0,
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kOom,
  kSnapshot,
};
TorchAction ParseTorchAction(std::string_view name);
const char* TorchActionName(TorchAction a);

struct TorchFrame {
  std::string file;
  int64_t line = 0;
  std::string function;
};

// One history entry. For kOom, `addr` is the free device memory the allocator
// saw (PyTorch stores device_free there) and `size` the failed request.
struct TorchTraceEntry {
  TorchAction action = TorchAction::kUnknown;
  int64_t time_us = 0;
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
  int32_t stack = -1;  // index in TorchMemoryFile::stacks; -1 none
};

enum class TorchBlockState : uint8_t { kInactive = 0, kActiveAllocated, kActivePendingFree };

struct TorchBlock {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t requested_size = 0;
  TorchBlockState state = TorchBlockState::kInactive;
  int32_t stack = -1;
};

struct TorchSegment {
  uint64_t address = 0;
  uint64_t total_size = 0;
  uint64_t stream = 0;
  bool small = false;  // segment_type "small" (the pool of requests <= 1 MiB)
  bool expandable = false;
  std::vector<TorchBlock> blocks;
};

// PyTorch's own counters at the time of the dump (-1 when not recorded).
struct TorchCounters {
  int64_t allocated = -1, reserved = -1, max_allocated = -1, max_reserved = -1;
  int64_t total = -1;  // device memory size
};

struct TorchDevice {
  int32_t device = 0;
  TorchCounters counters;
  std::vector<TorchSegment> segments;
  std::vector<TorchTraceEntry> trace;  // oldest first
};

// An OOM seen by torch's out-of-memory observer.
struct TorchOom {
  int32_t device = 0;
  int64_t time_unix_ns = 0;
  int64_t requested = -1, device_allocated = -1, device_free = -1, total = -1;
};

struct TorchMemoryFile {
  int64_t version = 0;
  std::string reason;  // exit, oom, exception, signal, explicit
  int64_t pid = 0;
  int64_t written_unix_ns = 0;
  int64_t max_entries = 0;  // history ring size; a full ring may have lost its oldest entries
  bool expandable_segments = false;
  int64_t max_split_size = -1;  // -1: unlimited (PyTorch's default)
  std::vector<TorchFrame> frames;
  std::vector<std::vector<int32_t>> stacks;  // frame indices, innermost first
  std::vector<TorchDevice> devices;
  std::vector<TorchOom> ooms;
};

// Parses the file's text; `name` is used in error messages. Unknown keys are
// skipped; a missing "format" or another major version is an error.
StatusOr<TorchMemoryFile> ParseTorchMemoryFile(std::string_view text, const std::string& name);
StatusOr<TorchMemoryFile> ReadTorchMemoryFile(const std::string& path);

}  // namespace stepscope::memory
