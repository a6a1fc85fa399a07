// ReportData: everything the HTML report shows, as plain values. Filled by
// CollectReportData (report_sources.cc) from the analysis library's results
// (steps.h, rules.h, recipes.h, analysis/memory) and the trace's stored
// `roofline` table, one function per section, and rendered by
// RenderHtmlReport (html_report.cc). The report computes nothing of its own:
// every number here is one that `stepscope steps`, `analyze`, `stats`,
// `memory` or `roofline --from` prints for the same trace (only the roofline
// chart's roof segments, ridge points and axes are geometry derived from the
// stored ceilings). Times are ns
// relative to summary.origin_ns (TraceModel::origin_ns(), the time axis of
// every CLI table) unless a name says otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/summary.h"
#include "common/table.h"

namespace stepscope {

struct ReportSummary {
  std::string trace_path, source, host, command_line, rank, world_size;
  std::vector<std::string> devices;  // "0: NVIDIA H200 (139.8 GiB)"
  int64_t origin_ns = 0;             // absolute trace time of relative 0
  int64_t duration_ns = 0;
  int64_t kernels = 0, kernel_time_ns = 0, memcpys = 0, memsets = 0, api_calls = 0, nvtx_ranges = 0;
  bool finalized = true;
};

// One row of the trace's `roofline` table (`stepscope roofline` stored it),
// as stored: the report re-derives none of these numbers.
struct RooflineKernel {
  int64_t rank = 0;
  std::string name;
  std::string launch;  // "grid 132x1x1 block 384x1x1"
  int64_t instances = 0;
  double duration_ns = 0;  // summed over the instances
  double flops = 0, dram_bytes = 0;
  double intensity = 0;    // FLOP per DRAM byte
  double flops_per_s = 0;  // achieved
  double dram_bytes_per_s = 0;
  std::string precision, bound, bound_kind;
  double pct_of_bound = 0;
  bool on_chart = false;  // FLOPs and DRAM bytes > 0: it has a place on a log-log chart
};

// A roof of the chart as the segment drawn: the DRAM roof (y = dram_bw * x)
// from the left edge up to the highest compute roof drawn; a compute roof
// (y = peak) from where the DRAM roof reaches it to the right edge.
struct RooflineRoof {
  std::string key;      // ceiling key: "dram_bw", "tensor_bf16", "fp32", ...
  bool memory = false;  // true: B/s, slanted; false: FLOP/s, flat
  double value = 0;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// Where a compute roof meets the DRAM roof: intensity = peak / dram_bw.
struct RooflineRidge {
  std::string key;
  double intensity = 0, flops_per_s = 0;
};

// The roofline section; present only when the trace has roofline rows.
struct ReportRoofline {
  std::string device;                   // meta.roofline_device
  std::string measured_at;              // of the stored ceilings
  int64_t step = -1;                    // the step the kernels were ranked in; -1: none
  std::vector<RooflineKernel> kernels;  // by rank
  std::vector<RooflineRoof> roofs;      // DRAM first, then compute roofs, highest first
  std::vector<RooflineRidge> ridges;
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;  // log axes, powers of ten
  std::vector<std::string> notes;                     // e.g. a precision without a stored ceiling
};

// One row of `stepscope steps`.
struct StepRow {
  int64_t number = 0;
  std::string name;
  int64_t start_ns = 0, end_ns = 0;  // the step's window on the GPU timeline
  std::string status;                // "ok", "warm-up", "open"
  int64_t gpu_ops = 0;
  Breakdown breakdown;  // analysis/model/summary.h: span = compute + communication + memory + idle
  // The idle part of the window on the analyzed device by cause (gaps.h:
  // FindGpuGaps over this window alone, the gaps `analyze` counts), indexed
  // by GapCause: host-wait, sync-wait, kernel-wait, other. All -1 when the
  // trace has no GPU activity.
  int64_t idle_by_cause_ns[4] = {-1, -1, -1, -1};
  struct Kernel {
    std::string name;
    int64_t total_ns = 0, count = 0;
  };
  std::vector<Kernel> top_kernels;  // up to 5, by time in the window
};

struct ReportStepSummary {
  std::string method;   // "nvtx", "kernel-sequence", "" (none found)
  std::string pattern;  // the name pattern or the anchor kernel
  int64_t steady = 0;   // complete, not warm-up: the statistics' steps
  double median_ns = 0, mean_ns = 0, stddev_ns = 0;
  int64_t min_ns = 0, max_ns = 0;
};

// One row of the cuda_gpu_kern_sum recipe.
struct KernelRow {
  std::string name;
  int64_t total_ns = 0, count = 0, min_ns = 0, max_ns = 0;
  double avg_ns = 0, median_ns = 0;
  double percent = 0;  // of all kernel time
};

// A time series for a chart (already downsampled by its source).
struct SeriesData {
  std::string name;  // legend: "GPU 0", "gpu0 total", "gpu0 torch-allocated"
  uint32_t device = 0;
  std::vector<int64_t> t_ns;  // relative
  std::vector<double> values;
  double peak = 0;
  int64_t peak_t_ns = 0;
  int64_t capacity = 0;  // device memory size, bytes (0: unknown)
};

// One finding of `stepscope analyze` (rules.h), strings ready to show.
struct FindingRow {
  std::string rule, title, where, detail, fix;
  int64_t cost_ns = 0, cost_per_step_ns = 0, count = 0;
  double cost_pct = 0;
  struct Example {
    int64_t step = -1;
    int64_t start_ns = 0, end_ns = 0;  // relative
    std::string nvtx;
  };
  std::vector<Example> examples;
  // What-if hook: the step time the what-if engine predicts once this finding
  // is fixed, ns; -1 while analysis::Finding carries no prediction (the page
  // then shows none).
  int64_t predicted_step_ns = -1;
  // analysis::Finding::evidence_only: no fix to replay, so no cost (the page
  // says "not priced" rather than 0).
  bool evidence_only = false;
};

// What `analyze` looked at: its header line.
struct AnalyzedSummary {
  int device = -1;  // -1: no GPU activity
  int64_t analyzed_ns = 0, busy_ns = 0, idle_ns = 0, steps = 0;
  int64_t host_wait_ns = 0, sync_wait_ns = 0, kernel_wait_ns = 0, other_idle_ns = 0;
};

// The memory peak of one GPU (`stepscope memory`'s peaks and live_at_peak rows
// for the place's total series).
struct MemoryPeak {
  std::string place;  // "gpu0"
  int64_t peak_bytes = 0, peak_t_ns = 0, capacity = 0;
  int64_t step = -1;
  std::string range;  // NVTX range of the allocation that reached the peak
  struct Group {
    std::string range, api;
    int64_t count = 0, bytes = 0;
    double share_pct = 0;
  };
  std::vector<Group> live;  // what held the memory at the peak, largest first
};

// The median steady step as a timeline (without steps, the GPU span of the
// trace): its GPU work per stream, the NVTX ranges and CUDA API calls of the
// threads that launched it, as recorded.
struct StepTimeline {
  int64_t step = -1;  // -1: no step
  // "step": the median step; "gpu_span": no steps, the GPU span of the trace
  // (every GPU op); "": nothing to show (no GPU op).
  std::string window;
  int64_t start_ns = 0, end_ns = 0;  // shown window: host range and GPU window together
  int64_t gpu_start_ns = 0, gpu_end_ns = 0;
  struct Lane {
    // "findings" (first, when any falls in the step), "GPU 0 stream 7",
    // "GPU 0 stream 7 annotations" (Kineto's gpu_user_annotation ranges: NVTX
    // rows whose tid is the stream), "thread 1234 NVTX", "thread 1234 CUDA API"
    std::string name;
    std::string kind;  // "finding", "gpu", "gpu_annotation", "nvtx", "api"
  };
  struct Event {
    int32_t lane = 0;
    int64_t start_ns = 0, end_ns = 0;
    int32_t name = 0;   // index into names
    int32_t depth = 0;  // NVTX nesting depth
    // "compute", "communication", "memory", "gpu_annotation", "nvtx", "api",
    // "sync", "finding"
    std::string cat;
    std::string rule;  // "finding" events: the finding's rule
  };
  // A counter lane ("gpu_metric" lanes: report_gpu_metrics.cc): the GPU
  // metrics samples in the shown window as a step function, each value held
  // from its t_ns to the next point's (the last one to end_ns). At most
  // ReportOptions::max_counter_points points: past that, equal buckets of
  // bucket_ns, each the time-weighted mean of the samples over it.
  struct Counter {
    int32_t lane = 0;
    uint32_t device = 0;
    std::string metric;         // "tensor_active", "sm_active", "dram_read_bw+dram_write_bw"
    std::string unit;           // "%", "B/s"
    std::vector<int64_t> t_ns;  // relative
    std::vector<double> values;
    int64_t end_ns = 0;     // relative: where the last value ends
    int64_t samples = 0;    // samples that overlap the window
    int64_t bucket_ns = 0;  // 0: every sample a point
    double max = 0;         // of the points: the lane's scale (100 for %)
  };
  std::vector<Lane> lanes;
  std::vector<std::string> names;
  std::vector<Event> events;
  std::vector<Counter> counters;
  int64_t dropped = 0;  // events left out past the cap (shortest first)
};

// One row of the gpu_metrics_sum recipe (`stepscope stats -r gpu_metrics_sum
// --time-range R`, R = ReportData::gpu_metrics_range): a metric of one device
// over the analyzed steps.
struct GpuMetricRow {
  int64_t device = 0;
  std::string metric, unit, name;  // label, unit (format/gpu_metric_names.h), CUPTI name
  int64_t samples = 0, covered_ns = 0;
  double mean = 0, min = 0, max = 0;  // mean weighted by each sample's length
};

// `report BEFORE AFTER`: the comparison of analysis/diff.h (`stepscope diff`),
// each table as header + rows of cell text, plus what the before trace's own
// analysis says (step summary, breakdown, findings).
struct ReportCompare {
  std::string before_path;
  std::string basis;
  double before_ns = 0, after_ns = 0, speedup = 0;
  struct TextTable {
    std::string name;
    std::vector<std::string> columns;  // the CLI's column names (snake_case keys)
    std::vector<std::string> titles;   // and titles, as `diff` prints them
    std::vector<std::vector<std::string>> rows;
  };
  std::vector<TextTable> tables;  // summary, kernels, nvtx, top5
  ReportStepSummary before_steps;
  Breakdown before_breakdown;
  std::vector<FindingRow> before_findings;
};

struct StatRow {
  std::string name, doc;
  int64_t value = 0;
};

struct ReportData {
  ReportSummary summary;
  ReportStepSummary step_summary;
  std::vector<StepRow> steps;
  Breakdown breakdown;
  std::string breakdown_window;  // "the 8 steady steps" or "the GPU span of the trace"
  int64_t utilization_bucket_ns = 0;
  std::vector<SeriesData> utilization;  // percent per bucket, over the focus window
  // The window the time charts open on: the steady steps (first start to last
  // end, relative) or, without steady steps, the trace. utilization_range is
  // the --time-range that reproduces the utilization series with
  // `stepscope stats --report gpu_time_util` (empty: the whole trace).
  int64_t focus_start_ns = 0, focus_end_ns = 0;
  std::string utilization_range;
  std::vector<SeriesData> memory;  // bytes in use
  std::vector<MemoryPeak> memory_peaks;
  std::vector<std::string> memory_notes;
  int64_t memory_unknown_frees = 0;
  std::vector<KernelRow> top_kernels;  // the first --top rows of `kernels`
  std::vector<KernelRow> kernels;      // every kernel name (up to 2000), the kernel table
  StepTimeline timeline;
  AnalyzedSummary analyzed;
  std::vector<FindingRow> findings;  // ranked by cost, highest first
  // `analyze`'s MFU line and value (docs/flops.md); empty / -1: none.
  std::string mfu_line;
  double mfu_pct = -1;
  std::string findings_note;  // shown when there are no findings (e.g. why)
  std::vector<StatRow> stats;
  bool has_roofline = false;  // the trace has roofline rows: `roofline` is filled
  ReportRoofline roofline;
  bool has_compare = false;  // `report BEFORE AFTER`: this data is AFTER's
  ReportCompare compare;
  // The host section (report_host.cc; docs/host.md): `stats -r thread_states`
  // and the first rows of `stats -r python_hotspots`, as those recipes print
  // them; only for traces with a host model.
  bool has_host = false;
  Table thread_states, python_hotspots;
  // GPU metrics (`profile --gpu-metrics`; report_gpu_metrics.cc): the
  // gpu_metrics_sum rows over the steady steps' GPU windows (the whole trace
  // without steady steps); empty when the trace has none, and then the page has
  // no section and the timeline no counter lane.
  std::vector<GpuMetricRow> gpu_metrics;
  std::string gpu_metrics_range;  // the --time-range of those rows; empty: the whole trace
};

}  // namespace stepscope
