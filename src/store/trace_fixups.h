// Whole-table fix-ups of a trace being written, run once before it is
// finalized: what one record could not know when it was written.
#pragma once

#include <sqlite3.h>

#include "common/status.h"

namespace stepscope {

// Sync records carry no thread: each whose tid is 0 takes the thread of the
// API call of its correlation (0 when none).
Status FillSyncThreads(sqlite3* db);

// Host samples and sampled OS-runtime waits inside a blocking CUDA call
// (synchronizations, synchronous copies and memsets, frees: they synchronize
// the device): a sample becomes a CUDA wait (state 2) on that call; a sampled
// osrt wait overlapping one is dropped (the call explains it).
Status MarkBlockingCudaWaits(sqlite3* db);

}  // namespace stepscope
