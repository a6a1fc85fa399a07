// The GPU metrics `profile --gpu-metrics` samples (CUPTI PM sampling,
// capture/pm_sampling.h), declared once: the tracer asks CUPTI for these
// names, in this order; the readers (stats gpu_metrics_sum, export, report)
// label the gpu_metrics rows with `label` and `unit`.
//
// Names: CUPTI's PM sampling metrics for Ampere GA10x and later (the CUPTI
// guide's PM sampling metrics table, CUDA 13), checked on the device at run
// time: a metric the chip does not have, or one that would not fit the single
// pass PM sampling allows, is left out (the optional ones first, from the end
// of the list) and the trace holds the rest. `core` metrics are the ones the
// rules and the report read.
#pragma once

#include <string_view>

namespace stepscope {

struct GpuMetricDef {
  std::string_view name;   // CUPTI metric name, as stored in gpu_metrics.metric_id
  std::string_view label;  // short name for tables and tracks
  std::string_view unit;   // "%", "B/s", "Hz"
  std::string_view doc;
  bool core;  // kept when the pass is too full; optional ones are dropped first
  // Stored value = CUPTI's value * scale. The dramc__ throughput metrics come
  // from CUPTI as a fraction despite their pct_of_peak name (a copy kernel at
  // 2.137e12 B/s read on an H200 gave 0.4626), so they are scaled to %. Their
  // peak is not ncu's: read + write over that copy was 1.045x ncu's
  // dram__throughput % on an H200 and 1.253x on an H100 (2026-11-28,
  // bench/results/2026-11-28/h*_pm_sampling_check.txt), so they are optional
  // and DRAM use is judged from the bytes per second (1.003x ncu on both).
  double scale = 1.0;
};

inline constexpr GpuMetricDef kGpuMetricDefs[] = {
    {"gr__cycles_active.sum.pct_of_peak_sustained_elapsed", "gr_active", "%",
     "cycles the compute engine had any work in the compute pipe", true},
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm_active", "%",
     "cycles an SM had at least one warp in flight, averaged over the SMs", true},
    {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", "tensor_active",
     "%", "cycles the SMs' tensor pipes were issuing tensor instructions", true},
    {"dram__bytes_read.sum.per_second", "dram_read_bw", "B/s", "DRAM bytes read per second", true},
    {"dram__bytes_write.sum.per_second", "dram_write_bw", "B/s", "DRAM bytes written per second",
     true},
    {"sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed", "sm_issue", "%",
     "cycles the warp schedulers issued an instruction", false},
    {"dramc__read_throughput.avg.pct_of_peak_sustained_elapsed", "dram_read", "%",
     "DRAM controller read throughput, of its own peak (not ncu's dram__throughput)", false, 100.0},
    {"dramc__write_throughput.avg.pct_of_peak_sustained_elapsed", "dram_write", "%",
     "DRAM controller write throughput, of its own peak (not ncu's dram__throughput)", false,
     100.0},
    {"pcie__read_bytes.avg.pct_of_peak_sustained_elapsed", "pcie_read", "%",
     "bytes received on PCIe, of the link's peak", false},
    {"pcie__write_bytes.avg.pct_of_peak_sustained_elapsed", "pcie_write", "%",
     "bytes transmitted on PCIe, of the link's peak", false},
    {"nvlrx__bytes.avg.pct_of_peak_sustained_elapsed", "nvlink_rx", "%",
     "bytes received on NVLink, of its peak", false},
    {"nvltx__bytes.avg.pct_of_peak_sustained_elapsed", "nvlink_tx", "%",
     "bytes transmitted on NVLink, of its peak", false},
    {"gpc__cycles_elapsed.avg.per_second", "gpc_clock", "Hz", "GPC (SM) clock frequency", false},
};

// The definition of a stored metric name; nullptr for a name not in the list
// (an imported or future metric: readers show its name as is).
inline const GpuMetricDef* FindGpuMetric(std::string_view name) {
  for (const GpuMetricDef& d : kGpuMetricDefs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// Label of a stored metric name: the short label, else the name itself.
inline std::string_view GpuMetricLabel(std::string_view name) {
  const GpuMetricDef* d = FindGpuMetric(name);
  return d ? d->label : name;
}

}  // namespace stepscope
