// The typed reads of the timeline exporter (export/timeline.cc) and of its
// counter series (export/counters.cc): the trace's time bounds, the keys of
// its tracks, and cursors over the slices in the order a viewer's tracks need
// them (start ascending, end descending). The cursors stream: the exporter
// never holds a table (export/timeline.h, "Memory").
//
// Values are as stored (int64): callers narrow them as they did the columns.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/status.h"
#include "store/row_cursor.h"

namespace stepscope {

// The earliest timestamp of any event (kernels, memcpy, memset, api, nvtx,
// memory, thread_sched, samples, osrt); nullopt when every table is empty.
StatusOr<std::optional<int64_t>> EarliestEventTime(sqlite3* db);

// The latest time of each table that has rows, in this order: kernels,
// memcpy, memset, api (their latest end), nvtx (its latest end or start),
// memory (its latest ts). An empty table (or one whose read fails after
// prepare) gives no value.
StatusOr<std::vector<int64_t>> LatestEventTimes(sqlite3* db);

// Whether some NVTX range never ended (end_ns < 0).
StatusOr<bool> HasUnendedNvtx(sqlite3* db);

// The nonzero correlation ids of the GPU activities (kernels, memcpy,
// memset): one per row, unsorted.
StatusOr<std::vector<uint32_t>> GpuCorrelationIds(sqlite3* db);

// The nonzero correlation ids of the API calls, one per row.
StatusOr<RowCursor<uint32_t>> ApiCorrelationIds(sqlite3* db);

// The host threads with a track, ascending: those of API calls, of NVTX rows
// outside domain `skip_domain_id` (the GPU-side annotations' domain), and of
// the threads table.
StatusOr<std::vector<int64_t>> TimelineThreadIds(sqlite3* db, int64_t skip_domain_id);

// The (device, stream) pairs of the GPU activities, ascending.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> GpuStreamKeys(sqlite3* db);

// Slice rows, each cursor ordered by (start_ns, end_ns DESC).
struct NvtxSliceRow {
  int64_t start_ns, end_ns;  // end_ns: the given trace end for a range never ended
  int64_t tid, kind, name_id, domain_id;
};
struct ApiSliceRow {
  int64_t start_ns, end_ns, tid, correlation, name_id, return_code;
};
struct KernelSliceRow {
  int64_t start_ns, end_ns, device, stream, correlation, name_id;
  int64_t grid[3], block[3];
  int64_t registers_per_thread, shared_memory_bytes;  // static + dynamic
};
struct MemcpySliceRow {
  int64_t start_ns, end_ns, device, stream, correlation, bytes, copy_kind, src_kind, dst_kind;
};
struct MemsetSliceRow {
  int64_t start_ns, end_ns, device, stream, correlation, bytes, value;
};
StatusOr<RowCursor<NvtxSliceRow>> NvtxSlices(sqlite3* db, int64_t unended_end_ns);
StatusOr<RowCursor<ApiSliceRow>> ApiSlices(sqlite3* db);
StatusOr<RowCursor<KernelSliceRow>> KernelSlices(sqlite3* db);
StatusOr<RowCursor<MemcpySliceRow>> MemcpySlices(sqlite3* db);
StatusOr<RowCursor<MemsetSliceRow>> MemsetSlices(sqlite3* db);

// The kernels' first start, last end and count (count 0: no kernels, or the
// read failed).
struct KernelExtent {
  int64_t first_start_ns = 0, last_end_ns = 0, count = 0;
};
StatusOr<KernelExtent> LoadKernelExtent(sqlite3* db);

// Kernels by start: their device and times.
struct KernelSpanRow {
  int64_t device, start_ns, end_ns;
};
StatusOr<RowCursor<KernelSpanRow>> KernelSpansByStart(sqlite3* db);

// Allocations and frees of device-side memory (every memory kind but
// pageable and pinned host memory), by (ts_ns, id).
struct DeviceMemoryRow {
  int64_t ts_ns, op, address, bytes, device;
};
StatusOr<RowCursor<DeviceMemoryRow>> DeviceMemoryRows(sqlite3* db);

}  // namespace stepscope
