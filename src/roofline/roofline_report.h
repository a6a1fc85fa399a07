// A roofline report: the selected kernels, their counters, and where they sit
// under the ceilings; rendered as a table and an SVG chart, stored in (and
// reloaded from) the trace's `roofline` table.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/table.h"
#include "roofline/ceilings.h"
#include "roofline/profile_io.h"
#include "roofline/roofline_model.h"
#include "roofline/roofline_svg.h"
#include "roofline/selection.h"
#include "store/trace_reader.h"

namespace stepscope {

struct RooflineEntry {
  KernelTarget target;
  int64_t first_launch_index = -1;
  int instances = 0;
  std::map<std::string, double> counters;  // summed over the instances
  KernelWork work;
  RooflineResult result;
};

struct RooflineReport {
  std::string gpu_name;
  std::string uuid;
  Ceilings ceilings;
  int64_t step = -1;  // -1: no step
  std::vector<RooflineEntry> entries;
};

// Combines the profiled instances with the selected kernels: one entry per
// target that got at least one instance, counters summed over its instances.
// Instances whose decode held other than exactly one range (another kernel
// slipped into the profiling window) are left out and named in `warnings`.
RooflineReport BuildReport(const Selection& sel, const ProfileResults& results,
                           std::vector<std::string>* warnings);

// Fills work and result of every entry from its counters and the ceilings.
void EvaluateReport(RooflineReport* r);

// One row per kernel: rank, instances, time, FLOPs, TFLOP/s, intensity,
// DRAM bandwidth, precision, bound, % of bound, name (shortened to fit a
// terminal when `short_names`; CSV/JSON keep the full demangled name).
Table RooflineTable(const RooflineReport& r, bool short_names);

// The roofs of a chart: every measured compute ceiling and DRAM/L2 bandwidth.
std::vector<ChartRoof> RoofsFromCeilings(const Ceilings& c);
std::string ReportSvg(const RooflineReport& r);

// Replaces the trace's `roofline` rows (creating the table in traces of an
// older minor schema) and records meta.roofline_device / roofline_ceilings.
Status StoreRoofline(const std::string& trace_path, const RooflineReport& r);
// Reads the stored rows back (targets and counters; evaluate again with
// EvaluateReport). An absent table is kInvalidInput (exit 2).
StatusOr<RooflineReport> LoadStoredRoofline(const TraceReader& trace);

// "ampere_bf16_s16816gemm_..." shortened to `max` characters for tables.
std::string ShortKernelName(const std::string& name, size_t max);

}  // namespace stepscope
