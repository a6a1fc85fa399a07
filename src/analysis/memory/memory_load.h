// Loads what `stepscope memory` needs from a trace: the allocation events of
// the `memory` table (CUPTI MEMORY2, joined to the api row that made each call)
// and of the `host_alloc` table (host-mem tracing), the memory-pool events, and
// the out-of-memory evidence (the `oom` table and failed allocation API calls).
//
// Tables a trace may lack (older schema minors, categories not captured) load
// as empty. A trace cut off by a crash (meta.finalized = 0) loads like any
// other; `finalized` says so.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/memory/memory_model.h"
#include "common/status.h"
#include "format/records.h"
#include "store/trace_reader.h"

namespace stepscope::memory {

// An allocation that failed for lack of memory.
struct OomEvent {
  int64_t ts_ns = 0;
  uint32_t tid = 0;
  int32_t device = -1;  // -1: unknown (only the api row is known)
  uint32_t correlation = 0;
  StringId api = kNoString;
  int32_t return_code = 0;
  int64_t requested_bytes = -1;  // -1: unknown
  int64_t free_bytes = -1;
  int64_t total_bytes = -1;
  SeriesKind kind = SeriesKind::kDevice;
  bool from_oom_table = false;  // false: only a failed api row
};

struct MemoryTrace {
  std::vector<AllocEvent> events;  // memory + host_alloc rows, in time order
  std::vector<MemoryPoolRecord> pools;
  std::vector<OomEvent> ooms;                        // in time order
  std::map<uint32_t, uint64_t> device_memory_bytes;  // devices.global_memory_bytes
  uint64_t memory_rows = 0, host_alloc_rows = 0;
  bool has_host_alloc = false;
  bool finalized = false;
  int64_t start_ns = 0;  // meta.start_ns, else the first event
  int64_t end_ns = 0;    // meta.end_ns, else the last event
  int64_t wall_clock_offset_ns = 0;
  uint32_t pid = 0;
};

// True for CUDA runtime/driver functions that allocate memory (cudaMalloc*,
// cuMemAlloc*, cudaHostAlloc, cuMemHostAlloc, cuMemCreate).
bool IsAllocationApi(const std::string& name);

// Maps a MEMORY2 row to its series kind and place.
void ClassifyMemoryRow(MemoryKind memory_kind, bool is_async, uint32_t device, SeriesKind* kind,
                       int32_t* place);

StatusOr<MemoryTrace> LoadMemoryTrace(const TraceReader& reader);

}  // namespace stepscope::memory
