// The roofline table (schema.cc) as typed rows: written by `stepscope
// roofline` (roofline/roofline_report.cc), read back by it and by the HTML
// report (report/report_roofline.cc); and the typed reads of the kernel
// selection that picks what to profile (roofline/selection.cc).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/row_cursor.h"
#include "store/trace_reader.h"

namespace stepscope {

// The per-precision FLOP columns, in the schema's order: flops_fp64,
// flops_fp32, flops_fp16, flops_tensor_fp64, flops_tensor_tf32,
// flops_tensor_fp16, flops_tensor_bf16, flops_tensor_fp8, flops_tensor_other.
inline constexpr int kRooflinePrecisionColumns = 9;

// One row of the roofline table, the names resolved (schema.cc documents
// each column).
struct RooflineRow {
  int64_t rank = 0;
  std::string name;     // name_id
  std::string mangled;  // mangled_id; "" when unknown
  int64_t grid[3] = {0, 0, 0};
  int64_t block[3] = {0, 0, 0};
  int64_t step = -1;
  int64_t step_gpu_ns = 0, step_launches = 0, instances = 0, first_launch_index = -1;
  double duration_ns = 0, flops = 0;
  double precision_flops[kRooflinePrecisionColumns] = {};
  double tensor_int_ops = 0, dram_read_bytes = 0, dram_write_bytes = 0, l2_bytes = 0, l1_bytes = 0;
  double intensity_dram = 0, flops_per_s = 0, dram_bytes_per_s = 0;
  std::string precision, bound, bound_kind;
  double pct_of_bound = 0;
  std::string counters_json;
};

// Replaces the roofline table of the trace at `trace_path` with `rows` (the
// table is created when the trace has none), sets meta roofline_device and
// roofline_ceilings, and raises meta.schema_minor to this build's when it is
// older: one transaction.
Status StoreRooflineTable(const std::string& trace_path, const std::vector<RooflineRow>& rows,
                          const std::string& device, const std::string& ceilings_json);

// The roofline table's rows by (rank, id); the caller checks that the table
// exists (TableExists).
StatusOr<std::vector<RooflineRow>> LoadRooflineTable(const TraceReader& trace);

// NVTX ranges (every row but marks) by start: as stored (end_ns < start_ns: never ended).
struct NvtxRangeRow {
  int64_t name_id, start_ns, end_ns, tid, domain_id;
};
StatusOr<std::vector<NvtxRangeRow>> LoadNvtxRanges(sqlite3* db);

// Whether the trace has API calls.
StatusOr<bool> HasApiRows(sqlite3* db);

// Kernel launches: name, mangled name, launch shape and duration (end - start).
struct KernelLaunchRow {
  int64_t name_id, mangled_id;
  int64_t grid[3], block[3];
  int64_t duration_ns;
};
// Which launches: all; those whose API call started in [from_ns, to_ns];
// those whose kernel started in it.
enum class LaunchFilter { kAll, kCalledIn, kStartedIn };
StatusOr<RowCursor<KernelLaunchRow>> KernelLaunches(sqlite3* db, LaunchFilter filter,
                                                    int64_t from_ns = 0, int64_t to_ns = 0);

}  // namespace stepscope
