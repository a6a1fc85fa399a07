// Helpers shared by the importers: string interning without per-lookup
// allocation, and push/pop nesting depth of imported ranges.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "format/records.h"

namespace stepscope {

class TraceWriter;

// Interns strings through the TraceWriter once per distinct value; repeated
// lookups by string_view allocate nothing (the importers look up a name per
// event, millions of times).
class StringCache {
 public:
  explicit StringCache(TraceWriter* w) : w_(w) {}
  StringId Get(std::string_view s);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  TraceWriter* w_;
  std::unordered_map<std::string, StringId, Hash, std::equal_to<>> map_;
};

// Nesting depth of ranges that stream in, per key (a thread, or a thread and
// an NVTX domain). Algorithm: ranges of one key normally arrive sorted by
// start (enclosing range first on ties), so a stack of open range ends gives
// the depth: pop every range that ended at or before the new start; the depth
// is what remains. A range that breaks the order gets a provisional depth and
// marks its key; RecomputeNvtxDepth() (store/trace_fixups.h) then redoes that
// key from the stored rows, sorted by SQLite, so memory stays bounded whatever
// the order.
class RangeDepthTracker {
 public:
  uint8_t Depth(uint64_t key, int64_t start, int64_t end);
  const std::set<uint64_t>& unordered_keys() const { return unordered_; }
  uint64_t out_of_order() const { return out_of_order_; }
  // Partial overlaps seen on keys that arrived in order (the others are
  // counted again by RecomputeNvtxDepth).
  uint64_t partial_overlaps() const;

 private:
  struct Stack {
    int64_t last_start = INT64_MIN;
    int64_t last_end = INT64_MIN;
    std::vector<int64_t> ends;
    uint64_t partial = 0;
  };
  std::unordered_map<uint64_t, Stack> stacks_;
  std::set<uint64_t> unordered_;
  uint64_t out_of_order_ = 0;
};

// memcpy/memset.is_async of an imported trace, from the API call that issued
// each copy (same correlation id): a name with "Async" (cudaMemcpyAsync,
// cuMemsetD32Async, ...) or a graph launch -> 1; a synchronous copy/memset
// call (cudaMemcpy, cuMemcpyHtoD, cudaMemset, ...) -> 0; no such call, or a
// call of another name -> NULL (unknown: rules that need it say so). Neither
// Kineto's gpu_memcpy events nor nsys's CUPTI_ACTIVITY_KIND_MEMCPY table
// carry the CUPTI async flag; the launching call is the evidence. Counts go
// to import_copies_async / _sync / _async_unknown; unknowns are warned about.
class ImportStats;
Status ResolveCopyAsync(sqlite3* db, ImportStats* stats);

}  // namespace stepscope
