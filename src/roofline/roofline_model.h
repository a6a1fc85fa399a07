// The roofline model: hardware counter values -> work (FLOPs by precision,
// bytes by memory level) -> where a kernel sits under this GPU's ceilings.
//
// FLOP counting (the conventions of Nsight Compute's roofline sections and of
// the hierarchical-roofline method of Yang et al., so results compare with
// ncu):
//   fp64 = dadd + dmul + 2 * dfma      (sm__sass_thread_inst_executed_op_*_pred_on.sum)
//   fp32 = fadd + fmul + 2 * ffma
//   fp16 = hadd + hmul + 2 * hfma
//   tensor_<p> = sm__ops_path_tensor_src_<p>[_dst_<q>].sum (math ops, 1 FMA = 2 ops);
//     per source precision the aggregate counter is used when the chip has
//     one, else the sum of its _dst_ variants; _sparsity_ splits are ignored
//     (they would double count); integer tensor ops are kept apart.
// Bytes: DRAM = dram__bytes_read.sum + dram__bytes_write.sum; L2 =
// lts__t_bytes.sum; L1 = l1tex__t_bytes.sum. Duration = gpu__time_duration.sum.
//
// Bounding ceiling: each roof r turns the kernel's work into a minimum time
// t_r = work_r / peak_r. Compute is one roof whose time is the sum over the
// precisions the kernel used (sum of flops_p / peak_p), so mixed-precision
// kernels are handled; memory roofs are DRAM and L2. The roof with the
// largest t_r bounds the kernel; "% of bound" = t_r / measured duration (100%
// = running at that ceiling). This is the classic roofline test (intensity
// left or right of the ridge point) generalized to several roofs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "roofline/ceilings.h"

namespace stepscope {

enum class Precision : int {
  kFp64 = 0,
  kFp32,
  kFp16,
  kTensorFp64,
  kTensorTf32,
  kTensorFp16,
  kTensorBf16,
  kTensorFp8,
  kTensorOther,  // a floating-point tensor source this build does not name (fp4, fp6, ...)
  kCount,
};
inline constexpr int kPrecisionCount = static_cast<int>(Precision::kCount);
// "fp64", "fp32", "fp16", "tensor_fp64", ... also the ceiling key of that precision.
const char* PrecisionName(Precision p);

// What one or more launches of a kernel did, from counters. Counters are
// sums, so the work of several instances is the sum of their work.
struct KernelWork {
  int instances = 0;
  double duration_ns = 0;
  double flops[kPrecisionCount] = {};
  double tensor_int_ops = 0;  // integer tensor-core ops: not FLOPs
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double l2_bytes = 0;
  double l1_bytes = 0;

  double total_flops() const;
  double dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
  void Add(const KernelWork& o);
};

// The metrics every profiled kernel gets (tensor metrics are discovered per
// chip and added with IsTensorOpsMetric).
const std::vector<std::string>& FixedMetricNames();
// True for an sm__ops_path_tensor_src_*.sum counter the model reads (not a
// _sparsity_ split). Accepts names with or without the ".sum" rollup.
bool IsTensorOpsMetric(const std::string& name);

// Whether a metric belongs to the time-and-memory group, collected on its own
// launch in one pass (gpu__time_duration, dram__, lts__, l1tex__); the rest
// (FLOP counters) on another launch with kernel replay.
bool IsMemoryGroupMetric(const std::string& name);

// Counter values (metric name -> value) of one range, or the sum over
// several, -> work. Missing metrics count as 0; unknown ones are ignored.
KernelWork WorkFromCounters(const std::map<std::string, double>& counters, int instances = 1);

// Where a kernel sits under the ceilings.
struct RooflineResult {
  double flops = 0;
  double flops_per_s = 0;       // achieved
  double dram_bytes_per_s = 0;  // achieved
  double intensity_dram = 0;    // FLOP per DRAM byte (0 when no DRAM traffic)
  double intensity_l2 = 0;      // FLOP per L2 byte
  double intensity_l1 = 0;      // FLOP per L1 byte
  std::string precision;        // precision with the most FLOPs ("" when none)
  std::string bound;            // ceiling key of the bounding roof, e.g. "tensor_bf16", "dram_bw"
  std::string bound_kind;       // "compute", "memory" or "unknown"
  double bound_time_ns = 0;     // t of the bounding roof
  double pct_of_bound = 0;      // 100 * bound_time / duration
  double attainable_flops_per_s = 0;  // min(compute roof, DRAM bw * intensity) at this intensity
  std::vector<std::string> notes;     // e.g. "no ceiling for tensor_fp8"
};

RooflineResult Evaluate(const KernelWork& w, const Ceilings& c);

// Counters as JSON object text ({"name": value, ...}, sorted by name).
std::string CountersJson(const std::map<std::string, double>& counters);
// Parses CountersJson output; non-numeric members are skipped.
StatusOr<std::map<std::string, double>> CountersFromJson(const std::string& json);

}  // namespace stepscope
