// CollectReportData: fills every section of the HTML report from a trace, as a
// thin front-end over the analysis library: steps and their breakdowns from
// analysis/model/steps.h (`stepscope steps`), findings from analysis/rules/rules.h
// (`stepscope analyze`), top kernels and utilization from the
// cuda_gpu_kern_sum and gpu_time_util recipes (`stepscope stats`), device
// memory over time, its peak and the live set at the peak from
// analysis/memory (`stepscope memory`), and the roofline rows `stepscope
// roofline` stored in the trace (report_roofline.h). The report keeps no
// analysis logic of its own: a number it shows is one a CLI command prints
// for the same trace.
#pragma once

#include <functional>
#include <string>

#include <vector>

#include "analysis/model/trace_model.h"
#include "analysis/rules/rules.h"
#include "common/status.h"
#include "report/report_data.h"
#include "store/trace_reader.h"

namespace stepscope {

struct ReportOptions {
  int top_kernels = 15;
  std::string step_regex;         // --step-range (steps and rules); empty: automatic
  int utilization_buckets = 500;  // gpu_time_util buckets over the GPU span
  int max_series_points = 2000;   // per memory series (downsampling keeps every peak)
  // Per GPU metrics lane of the timeline: more samples in the window are
  // averaged into this many equal buckets (time-weighted means).
  int max_counter_points = 500;
  int live_at_peak_rows = 10;  // groups of the live set at each GPU's peak
  // The analysis options of `stepscope analyze` for this trace (its ceilings:
  // this machine's bench results or the table of GPU models), set by the
  // front-end so that the report's findings are analyze's; none: defaults.
  std::function<void(const TraceModel&, AnalyzeOptions*)> analysis_options;
  // The MFU line of `stepscope analyze` (analysis/mfu.h's MfuLine) for this
  // trace over the analysis's steps on `device`, and its percentage; set by
  // the front-end (its --model flags, the stored roofline counters); none, or
  // an empty line: no MFU on the page.
  std::function<std::string(const TraceModel&, const StepSet&, int device, double* mfu_pct)>
      mfu_line;
};

// `reader` and `model` are the same trace (the model for the analysis, the
// reader for meta, stats and the memory library).
StatusOr<ReportData> CollectReportData(const TraceReader& reader, const TraceModel& model,
                                       const ReportOptions& options);

// The median steady step (the steady step whose duration is nearest the
// median; without steady steps the longest complete step) as lanes of
// recorded events: GPU ops per stream, the NVTX ranges and CUDA API calls of
// the launching threads (report_timeline.cc). Without steps (step stays -1),
// the GPU span of the trace; without GPU ops, nothing (window ""). Steps as
// chosen by options.step_regex.
Status CollectStepTimeline(const TraceModel& model, const ReportOptions& options, ReportData* data);

// The findings' own intervals in the timeline's step (host spans, blocking
// calls and GPU ops of each reported finding: data-loading waits, syncs,
// collective waits, ...), one row per rule, on a first lane "findings"
// (report_timeline.cc). Nothing when no finding falls in the step.
void AddFindingMarks(const TraceModel& model, const std::vector<Finding>& findings,
                     StepTimeline* timeline);

// The GPU metrics lanes of the timeline (report_gpu_metrics.cc): per device
// with gpu_metrics samples in the timeline's window, counter lanes for
// tensor_active and sm_active (%) and DRAM read + write (B/s), each after that
// device's stream lanes. Call after the timeline's events and findings lanes
// are in place. Nothing for a trace without GPU metrics.
void AddGpuMetricLanes(const TraceModel& model, const ReportOptions& options,
                       StepTimeline* timeline);

// The host section (report_host.cc): thread_states and the top of
// python_hotspots; leaves data->has_host false for a trace without a host model.
Status CollectHost(const TraceModel& model, ReportData* data);

// `report BEFORE AFTER`: `stepscope diff BEFORE AFTER` (analysis/diff.h) and
// the before trace's own steps and findings, into data->compare
// (report_compare.cc); `data` is AFTER's.
Status CollectReportCompare(const TraceReader& before_reader, const TraceModel& before,
                            const TraceModel& after, const ReportOptions& options,
                            ReportData* data);

}  // namespace stepscope
