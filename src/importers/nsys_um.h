// Unified-memory events of an Nsight Systems SQLite export -> the `um` table
// (docs/um.md lists the columns relied on). Called by the nsys importer.
#pragma once

#include <sqlite3.h>

#include "common/status.h"
#include "importers/import_stats.h"

namespace stepscope {

class TraceWriter;

// Reads, when present (nsys creates tables lazily; columns are read by name
// and a missing one reads as 0):
//   CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: start, end, counterKind, value,
//     address, srcId, dstId, flags (CUPTI's record, CUPTI's numbering);
//   CUDA_UM_CPU_PAGE_FAULT_EVENTS: start, address, originalFaultPc
//     (--cuda-um-cpu-page-faults=true);
//   CUDA_UM_GPU_PAGE_FAULT_EVENTS: start, end, address, numberOfPageFaults,
//     faultAccessType, deviceId (--cuda-um-gpu-page-faults=true).
// Rows with end < start are counted (um_bad_time) and skipped.
Status ImportNsysUnifiedMemory(sqlite3* src, TraceWriter* w, ImportStats* stats);

}  // namespace stepscope
