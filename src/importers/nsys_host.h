// The host half of an Nsight Systems SQLite export -> the host model
// (schema 1.5, docs/host.md). Called by the nsys importer.
#pragma once

#include <sqlite3.h>

#include <set>

#include "common/status.h"
#include "importers/import_stats.h"

namespace stepscope {

class TraceWriter;

// Reads, when present (columns by name; a missing column reads as NULL):
//   SCHED_EVENTS(start, cpu, isSchedIn, globalTid, threadState, threadBlock):
//     per thread, a sched-in to the next sched-out is a running interval on
//     `cpu`; a sched-out to the next sched-in is an interval in the state the
//     sched-out names (ENUM_SCHEDULING_THREAD_BLOCK, else
//     ENUM_SAMPLING_THREAD_STATE; unknown when neither says) -> thread_sched;
//   OSRT_API(start, end, globalTid, nameId, callchainId) and
//     OSRT_CALLCHAINS(id, symbol, module, stackDepth) -> osrt (source 3) with
//     the native stack as a callsite;
//   COMPOSITE_EVENTS(id, start, globalTid, threadState) and
//     SAMPLING_CALLCHAINS(id, symbol, module, stackDepth) -> samples.
// Callchain frames: stackDepth 0 is the innermost; symbol and module are
// StringIds ids. Thread names and the set of processes whose threads to name
// come back in `host_pids` / `host_tids` (threads with host rows).
Status ImportNsysHost(sqlite3* src, TraceWriter* w, ImportStats* stats,
                      std::set<uint32_t>* host_pids, std::set<uint32_t>* host_tids);

}  // namespace stepscope
