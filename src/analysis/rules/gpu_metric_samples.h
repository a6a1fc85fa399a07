// The GPU metrics (`profile --gpu-metrics`, table gpu_metrics) as the rules
// read them: tensor_idle (the GPU busy with its tensor pipes idle) and
// memory_bound (DRAM read + write near the device's peak). A PM sample is
// one interval of one device with a value per metric (one gpu_metrics row
// each); the rules look at the samples of the analyzed device inside the
// analyzed windows (the steady steps, else the GPU span: rules.h), each
// weighted by its overlap with them, and at the kernels that ran in the
// samples they flag (kernels of that device, by their overlap with the
// flagged samples' intervals).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/trace_model.h"
#include "common/intervals.h"

namespace stepscope {

struct RuleContext;
struct FindingExample;

// One PM sample of one device: its metrics by label (format/gpu_metric_names.h);
// a metric the trace did not sample there is -1.
struct MetricSample {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t weight_ns = 0;  // its overlap with the analyzed windows
  double gr_active = -1, sm_active = -1, tensor_active = -1;  // %
  double dram_read_bps = -1, dram_write_bps = -1;             // bytes/s
  // gr_active, else sm_active (a pass without gr_active): how busy the GPU was.
  double busy() const { return gr_active >= 0 ? gr_active : sm_active; }
  // DRAM read + write, bytes/s; -1 unless both were sampled.
  double dram_bps() const {
    return dram_read_bps >= 0 && dram_write_bps >= 0 ? dram_read_bps + dram_write_bps : -1;
  }
};

// The samples of `device` that overlap `windows` (sorted, disjoint), in time
// order, one per sample interval.
std::vector<MetricSample> MetricSamples(const TraceModel& m, uint32_t device,
                                        const std::vector<Interval>& windows);

// The step (index in c.steps) a sample lies in: the one of its middle, else
// of its start or end (a sample across a step's edge); -1 outside the steps.
int SampleStep(const RuleContext& c, const MetricSample& s);

// Time-weighted mean of a metric over samples (weight_ns); -1 when no sample
// with weight has it.
double WeightedMean(const std::vector<MetricSample>& samples, double (*value)(const MetricSample&));

// The flagged samples, clipped to the windows, joined into stretches where
// one ends at most `join_ns` before the next starts; sorted, disjoint.
std::vector<Interval> FlaggedStretches(const std::vector<MetricSample>& samples,
                                       const std::vector<char>& flagged,
                                       const std::vector<Interval>& windows, int64_t join_ns);

// The `n` longest stretches as a finding's examples (longest first; each in
// the step of its middle, else step -1).
std::vector<FindingExample> LongestStretchExamples(const RuleContext& c,
                                                   const std::vector<Interval>& stretches,
                                                   size_t n);

// Kernel time of one kernel name inside intervals.
struct KernelShare {
  StringId name = 0;
  int64_t ns = 0;     // overlap with the intervals
  int64_t count = 0;  // kernels that overlap them
};
// The kernels of `device` by their overlap with `intervals` (sorted,
// disjoint), most time first (ties by name id).
std::vector<KernelShare> KernelsIn(const TraceModel& m, uint32_t device,
                                   const std::vector<Interval>& intervals);
// "sgemm_128x64_nn 180.2 ms (64%), ...": the top `n`, each with its share of
// the total kernel time in the intervals.
std::string TopKernelsText(const TraceModel& m, const std::vector<KernelShare>& kernels, size_t n);

// The device's peak DRAM bandwidth (read + write), bytes/s, and where it came
// from: this machine's `stepscope bench` dram_bw ceiling for the GPU (the
// machine constants, machine_constants.h), else the trace's devices row
// (memory_bandwidth_bytes_per_s: CUPTI's figure from the memory clock and bus
// width, the datasheet's peak: 4.8 TB/s on an H200). 0: unknown.
struct DramPeak {
  double bps = 0;
  std::string source;
};
DramPeak DramPeakOf(const RuleContext& c);

// A sample whose DRAM read + write reaches this share of the peak is
// memory-bound (memory_bound's evidence; tensor_idle leaves such samples to
// it). A streaming kernel reaches 85-90% of the datasheet peak (the 2 GiB
// copy of tests/fixtures/gpu/h200_pm_gemm_copy: 4.28 of 4.81 TB/s, 89%) and
// about all of bench's measured one; 70% leaves room for the sample's edges
// (a 1 ms sample half filled by a copy reads half its rate) while staying
// far above what a GEMM-bound step draws (the fp32 and bf16 train_gpt
// fixtures: 0.46 and 0.74 TB/s on average, 15% at most).
inline constexpr double kMemoryBoundPctOfPeak = 70.0;
bool MemoryBoundSample(const MetricSample& s, const DramPeak& peak);

}  // namespace stepscope
