// The memory timeline engine: allocation and free events in, bytes in use over
// time, peaks, and the allocations live at any moment out.
//
// Model. Every event belongs to a place (a GPU, or the host) and a series kind
// (how the memory was obtained: cudaMalloc, a stream-ordered pool, pinned host,
// managed, host malloc/mmap). Events are replayed in time order; a free is
// matched to the live allocation at the same address (addresses are unique
// across devices under CUDA's unified addressing) and releases the bytes that
// allocation took, whatever size the free record claims. Per place, a "total"
// series sums the kinds that really occupy that place: device + pool + other on
// a GPU, host malloc + host mmap on the host. Pinned and managed memory are
// series of their own and never part of a total: pinned pages are host memory
// that the host-mem hook may also see as an mmap, and managed pages live on the
// GPU only while resident.
//
// Robustness (each case is counted in MemoryQuality, never an error):
//  * a free of an address with no live allocation (allocated before tracing
//    started, or a lost record) changes nothing;
//  * a free of address 0 (cudaFree(0) is a common context initializer) is ignored;
//  * an allocation at an address that is still live closes the old allocation
//    first (its free record was lost);
//  * allocations still live at the end are reported as such; whether they are
//    leaks is for the caller to say (a trace cut off mid-run has no leaks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "format/records.h"

namespace stepscope::memory {

// How memory was obtained; also names the series of the timeline.
enum class SeriesKind : uint8_t {
  kDevice = 0,          // cudaMalloc / cuMemAlloc / cuMemCreate: device memory
  kPool = 1,            // cudaMallocAsync / cuMemAllocFromPoolAsync: stream-ordered pool
  kManaged = 2,         // cudaMallocManaged
  kPinned = 3,          // cudaHostAlloc / cudaMallocHost: page-locked host memory
  kHostMalloc = 4,      // malloc family (host-mem tracing)
  kHostMmap = 5,        // anonymous mmap (host-mem tracing)
  kOther = 6,           // memory kind unknown
  kTotal = 7,           // per place: the sum described above
  kTorchAllocated = 8,  // PyTorch caching allocator: bytes in tensors (allocated)
  kTorchReserved = 9,   // PyTorch caching allocator: bytes in segments (reserved)
};
const char* SeriesKindName(SeriesKind k);
bool CountsTowardTotal(SeriesKind k);

// A place: a GPU ordinal (>= 0) or the host.
inline constexpr int32_t kHostPlace = -1;
std::string PlaceName(int32_t place);  // "gpu0", "host"

inline constexpr size_t kNever = std::numeric_limits<size_t>::max();

struct AllocEvent {
  int64_t ts_ns = 0;
  MemoryOp op = MemoryOp::kUnknown;
  SeriesKind kind = SeriesKind::kOther;
  int32_t place = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint32_t tid = 0;  // calling thread; 0 when unknown
  uint32_t stream = 0;
  uint32_t correlation = 0;
  StringId api = kNoString;  // API that made the call; 0 when unknown
  int64_t call_ns = 0;       // when the call started (for NVTX attribution); = ts_ns when unknown
};

// One allocation matched with its free.
struct Allocation {
  size_t alloc_event = 0;
  size_t free_event = kNever;  // kNever: still live at the end
  int64_t alloc_ns = 0;
  int64_t free_ns = -1;
  uint64_t address = 0;
  uint64_t bytes = 0;
  SeriesKind kind = SeriesKind::kOther;
  int32_t place = 0;
  uint32_t tid = 0;
  uint32_t stream = 0;
  StringId api = kNoString;
  // Filled by the caller after BuildMemoryProfile (NVTX attribution).
  StringId range = kNoString;
  int64_t step = -1;

  bool LiveAfter(size_t event) const { return alloc_event <= event && event < free_event; }
};

struct SeriesKey {
  int32_t place;
  SeriesKind kind;
  bool operator<(const SeriesKey& o) const {
    return place != o.place ? place < o.place : kind < o.kind;
  }
};

struct SeriesStats {
  uint64_t peak_bytes = 0;
  int64_t peak_ns = -1;
  size_t peak_event = kNever;  // index of the event that reached the peak first
  uint64_t end_bytes = 0;      // in use after the last event
  uint64_t allocs = 0;
  uint64_t frees = 0;  // matched frees only
};

struct MemoryQuality {
  uint64_t unknown_frees = 0;  // free of an address with no live allocation
  uint64_t unknown_free_bytes = 0;
  uint64_t null_frees = 0;       // free of address 0
  uint64_t realloc_of_live = 0;  // allocation at a still-live address
  uint64_t unknown_ops = 0;      // op neither alloc nor free
};

struct TimelinePoint {
  int64_t ts_ns;
  int32_t place;
  SeriesKind kind;
  uint64_t bytes;  // in use right after ts_ns
};

struct MemoryProfile {
  std::vector<Allocation> allocations;  // in allocation order
  std::map<SeriesKey, SeriesStats> series;
  MemoryQuality quality;
  size_t num_events = 0;

  // Allocations live right after event `event` that count toward `key`
  // (for kTotal: every kind that counts toward the place's total), largest first.
  std::vector<const Allocation*> LiveAfter(size_t event, SeriesKey key) const;
  // Bytes in use in `key` right after `event` (sum of LiveAfter).
  uint64_t BytesAfter(size_t event, SeriesKey key) const;
};

// Replays `events` (sorted by time; ties keep their order). When `timeline` is
// given, appends one point per event for the event's series and one for its
// place's total (when the kind counts toward it).
MemoryProfile BuildMemoryProfile(const std::vector<AllocEvent>& events,
                                 std::vector<TimelinePoint>* timeline = nullptr);

// Index of the last event at or before `ts_ns` (kNever when none).
size_t LastEventAtOrBefore(const std::vector<AllocEvent>& events, int64_t ts_ns);

// Shrinks a timeline for charts: per series, the time range is cut into
// max_points/2 buckets and each bucket keeps its lowest and highest point, so
// every peak survives. Series with fewer points are kept whole.
std::vector<TimelinePoint> DownsampleTimeline(const std::vector<TimelinePoint>& points,
                                              size_t max_points_per_series);

}  // namespace stepscope::memory
