// Statements run on a trace being written besides its rows: whole-table
// fix-ups, run once before it is finalized (what one record could not know
// when it was written), and the importers' write settings.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "format/records.h"

namespace stepscope {

// Sync records carry no thread: each whose tid is 0 takes the thread of the
// API call of its correlation (0 when none).
Status FillSyncThreads(sqlite3* db);

// Host samples and sampled OS-runtime waits inside a blocking CUDA call
// (synchronizations, synchronous copies and memsets, frees: they synchronize
// the device): a sample becomes a CUDA wait (state 2) on that call; a sampled
// osrt wait overlapping one is dropped (the call explains it).
Status MarkBlockingCudaWaits(sqlite3* db);

// Recomputes nvtx.depth for the push/pop rows of thread `tid` whose domain_id
// is one of `domains`, in (start, longest first) order. Returns the number of
// rows that overlap their parent without nesting in it (*partial).
Status RecomputeNvtxDepth(sqlite3* db, uint32_t tid, const std::vector<StringId>& domains,
                          uint64_t* partial);

// memcpy/memset.is_async from the API call that issued each copy (same
// correlation id): a name with "Async" or a graph launch -> 1; a synchronous
// copy/memset call (cudaMemcpy, cuMemcpyHtoD, cudaMemset, ...) -> 0; no such
// call, or a call of another name -> NULL (unknown).
Status ClassifyCopiesAsync(sqlite3* db);

// memcpy and memset rows by is_async: 1, 0 and NULL.
struct CopyAsyncCounts {
  int64_t async = 0, sync = 0, unknown = 0;
};
StatusOr<CopyAsyncCounts> CountCopiesByAsync(sqlite3* db);

// An import writes a temporary file that is renamed only once complete, so
// a journal's crash safety buys nothing: commits the open transaction, turns
// the journal off (each page written once, not WAL + checkpoint) and begins
// another.
Status StopJournal(sqlite3* db);

// Lets SQLite spill sorts (index builds sort every row) to a temporary file
// instead of memory, so peak memory does not grow with the trace.
Status SpillTempToFile(sqlite3* db);

}  // namespace stepscope
