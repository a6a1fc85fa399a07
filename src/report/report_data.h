// ReportData: everything the HTML report shows, as plain values. Filled by
// CollectReportData (report_sources.cc), one function per section, rendered
// by RenderHtmlReport (html_report.cc). Times are ns relative to
// summary.origin_ns unless a name says otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

struct ReportSummary {
  std::string trace_path, source, host, command_line, rank, world_size;
  std::vector<std::string> devices;  // "0: NVIDIA H200"
  int64_t origin_ns = 0;             // absolute trace time of relative 0
  int64_t duration_ns = 0;
  int64_t kernels = 0, kernel_time_ns = 0, memcpys = 0, memsets = 0, api_calls = 0, nvtx_ranges = 0;
  bool finalized = true;
};

// Time on the GPU by what it was doing, HTA-style: at each instant the
// highest of compute > communication > memcpy/memset > idle that is active.
struct Breakdown {
  int64_t compute_ns = 0, communication_ns = 0, memcpy_ns = 0, idle_ns = 0;
};

struct StepRow {
  int64_t number = 0;
  std::string name;
  int64_t start_ns = 0, end_ns = 0;
  Breakdown breakdown;
};

struct KernelRow {
  std::string name;
  int64_t total_ns = 0, count = 0, min_ns = 0, max_ns = 0;
  double percent = 0;  // of all kernel time
};

struct SeriesData {
  uint32_t device = 0;
  std::vector<int64_t> t_ns;  // relative
  std::vector<double> values;
  double peak = 0;
  int64_t peak_t_ns = 0;
  int64_t capacity = 0;  // device memory size, bytes (0: unknown)
};

struct Finding {
  std::string rule, severity, title, what, where, fix;
  int64_t cost_ns = 0;
};

struct StatRow {
  std::string name, doc;
  int64_t value = 0;
};

struct ReportData {
  ReportSummary summary;
  std::string steps_source;  // how the steps were found
  std::vector<StepRow> steps;
  Breakdown breakdown;
  std::string breakdown_window;  // "steps 1-10" or "whole trace"
  int64_t utilization_bucket_ns = 0;
  std::vector<SeriesData> utilization;  // percent per bucket
  std::vector<SeriesData> memory;       // bytes in use
  int64_t memory_unknown_frees = 0;
  std::vector<KernelRow> top_kernels;
  std::vector<Finding> findings;
  std::string findings_note;  // shown when there are no findings (e.g. why)
  std::vector<StatRow> stats;
};

}  // namespace stepscope
