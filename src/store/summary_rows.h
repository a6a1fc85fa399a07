// Typed reads of a trace's totals and stats: the collector's end-of-run
// summary (collector/run_summary.cc), the report's stats table and the
// roofline flow's kernel count.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope {

// The kernels' count and summed durations (end - start), ns.
struct KernelTotals {
  int64_t count = 0;
  int64_t gpu_ns = 0;
};
StatusOr<KernelTotals> LoadKernelTotals(sqlite3* db);

// Rows of the nvtx table (ranges and marks).
StatusOr<int64_t> CountNvtxRows(sqlite3* db);

// A row of the stats table.
struct StatsTableRow {
  std::string name;
  int64_t value = 0;
  std::string doc;
};
// Every stat, by name.
StatusOr<std::vector<StatsTableRow>> LoadStats(sqlite3* db);
// The nonzero drop counters (dropped_<kind> and cupti_dropped_records), most first.
StatusOr<std::vector<StatsTableRow>> LoadDropStats(sqlite3* db);

// Unified memory: bytes migrated host to device and device to host, GPU fault
// groups, and rows of the um table.
struct UmTotals {
  int64_t htod_bytes = 0, dtoh_bytes = 0, fault_groups = 0, rows = 0;
};
StatusOr<UmTotals> LoadUmTotals(sqlite3* db);

// Kernel names by summed GPU time, most first: at most `limit`.
struct KernelNameTotal {
  int64_t name_id = 0, total_ns = 0, count = 0;
};
StatusOr<std::vector<KernelNameTotal>> LoadTopKernelNames(sqlite3* db, int limit);

}  // namespace stepscope
