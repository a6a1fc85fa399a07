// Typed reads of the memory evidence (analysis/memory/memory_load.cc and the
// oom rule): the memory table joined with the API call of each row, the oom
// table, and the API calls that failed for want of memory.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "format/records.h"
#include "store/row_cursor.h"

namespace stepscope {

// A memory row and the API call it belongs to (its correlation's): the
// call's name (strings.id), thread and start; 0, 0 and the row's ts_ns when
// the row has no traced call. By (ts_ns, id); streamed (the table can hold
// millions of rows).
struct MemoryApiRow {
  int64_t ts_ns, op, address, bytes, memory_kind, device, stream, correlation, is_async;
  int64_t api_name_id, api_tid, api_start_ns;
};
StatusOr<RowCursor<MemoryApiRow>> MemoryWithApiRows(sqlite3* db);

// The host_alloc table by (ts_ns, id); the caller checks that the trace has
// it (TableExists: older traces lack it).
StatusOr<std::vector<HostAllocRecord>> LoadHostAllocs(sqlite3* db);

// A row of the oom table; -1 for requested, free and total bytes when NULL.
// By (ts_ns, id); empty for a trace without the table.
struct OomTableRow {
  int64_t ts_ns, tid, device, correlation, name_id, return_code;
  int64_t requested_bytes, memory_kind, free_bytes, total_bytes;
};
StatusOr<std::vector<OomTableRow>> LoadOomTable(sqlite3* db);

// The API calls that returned 2 (cudaErrorMemoryAllocation and
// CUDA_ERROR_OUT_OF_MEMORY alike), by (start_ns, id).
struct FailedApiRow {
  int64_t end_ns, tid, correlation, name_id, return_code;
};
StatusOr<std::vector<FailedApiRow>> LoadOutOfMemoryApiCalls(sqlite3* db);

}  // namespace stepscope
