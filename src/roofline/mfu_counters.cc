#include "roofline/mfu_counters.h"

#include "roofline/run_flow.h"

namespace stepscope {
namespace {

// The stored rows evaluated with the ceilings file, else with the ceilings
// stored beside them (possibly none: FLOPs and durations need no ceilings,
// only the bound does).
StatusOr<RooflineReport> StoredReport(const std::string& trace_path,
                                      const std::string& ceilings_path) {
  auto e = EvaluateStored(trace_path, ceilings_path);
  if (e.ok()) return std::move(e->report);
  ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> trace, TraceReader::Open(trace_path));
  ASSIGN_OR_RETURN(RooflineReport r, LoadStoredRoofline(*trace));
  EvaluateReport(&r);
  return r;
}

}  // namespace

std::vector<MeasuredKernel> MeasuredKernelsOf(const std::string& trace_path,
                                              const std::string& ceilings_path) {
  std::vector<MeasuredKernel> out;
  auto report = StoredReport(trace_path, ceilings_path);
  if (!report.ok()) return out;
  for (const RooflineEntry& r : report->entries) {
    MeasuredKernel k;
    k.name = r.target.name;
    k.step = report->step;
    k.step_gpu_ns = r.target.step_gpu_ns;
    k.step_launches = r.target.step_launches;
    k.flops = r.work.total_flops();
    k.duration_ns = r.work.duration_ns;
    k.bound = r.result.bound;
    k.pct_of_bound = r.result.pct_of_bound;
    k.intensity_dram = r.result.intensity_dram;
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace stepscope
