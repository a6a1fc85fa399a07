// MFU: model FLOPs utilization per training step, and achieved FLOP/s per
// kernel class (`stepscope mfu`, the MFU line of `analyze`, the MFU column of
// `steps`; docs/flops.md).
//
//   MFU = FLOPs of one step / (step time x this GPU's peak for the dtype)
//
// FLOPs of a step, the first source that applies:
//   1. "model": the model spec's FLOPs (plan/flops.h, Narayanan et al. 2021
//      eq. 3, generalized), passed in by the caller (--model ...);
//   2. "roofline counters": the FLOPs the CUPTI counters of a `stepscope
//      roofline` run measured for the step's top kernels (the trace's
//      roofline table), scaled to each kernel's launches in the step: a lower
//      bound (only the profiled kernels), said with its coverage;
//   3. none: no MFU ("no FLOP source").
// The step time: the project's one step definition (analysis/model/steps.h), each
// step's window; the summary uses the median steady step.
// The peak (machine_constants.h): this machine's `stepscope bench` result for
// the GPU ("bench") when the ceilings file has it, else the table of GPU
// models ("datasheet"); the key follows the dtype: tensor_bf16 (bf16, fp16,
// amp-*), fp32 (CUDA cores; TF32 is not PyTorch's default for matmuls),
// tensor_fp8 (bench only).
//
// Per kernel class (common/kernel_names.h ClassifyKernelClass; kernels
// launched inside an `optimizer.step`/`optimizer` NVTX range count as
// optimizer): the GPU time of the median step's kernels, the FLOPs the model
// assigns to the class (GEMM: layer matmuls + head + adapters; attention: the
// attention core) and the FLOPs the counters measured, each as achieved FLOP/s
// and % of peak.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/model/machine_constants.h"
#include "analysis/model/steps.h"
#include "analysis/model/trace_model.h"
#include "common/kernel_names.h"
#include "common/table.h"

namespace stepscope {

// The model's FLOPs of one step (from plan::StepFlops), by class.
struct ModelStepFlops {
  double total = 0;
  double gemm = 0;       // layer matmuls + output head + LoRA adapters
  double attention = 0;  // attention core
  std::string what;      // "llama 8x1024, 8 x 512 tokens, forward x1, backward x2"
};

// One kernel a `stepscope roofline` run measured (the trace's roofline
// table, evaluated against the ceilings; roofline/mfu_counters.h reads them).
struct MeasuredKernel {
  std::string name;
  int64_t step = -1;          // the step the roofline run selected
  int64_t step_gpu_ns = 0;    // the kernel's GPU time in that step
  int64_t step_launches = 0;  // its launches in that step
  double flops = 0;           // per profiled instance, summed over instances
  double duration_ns = 0;     // of the profiled instances
  std::string bound;          // bounding roof ("tensor_bf16", "dram_bw")
  double pct_of_bound = 0;
  double intensity_dram = 0;
  double flops_per_s() const { return duration_ns > 0 ? flops / duration_ns * 1e9 : 0; }
  // The kernel's FLOPs in its step: the measured rate over its step GPU time.
  double step_flops() const { return flops_per_s() * static_cast<double>(step_gpu_ns) * 1e-9; }
};

struct MfuOptions {
  int device = -1;             // -1: the busiest device
  std::string dtype = "bf16";  // plan's precision name: bf16, fp16, fp32, amp-bf16, amp-fp16, fp8
  bool has_model = false;
  ModelStepFlops model;
  std::vector<MeasuredKernel> measured;    // empty: no roofline rows
  std::map<uint32_t, BenchResults> bench;  // by device id (AnalyzeOptions::bench)
};

struct MfuStep {
  int64_t number = 0;
  int64_t duration_ns = 0;
  std::string status;  // Step::status()
  double mfu_pct = 0;  // 0 when not steady or no FLOP/peak
};

struct MfuClass {
  KernelClass cls = KernelClass::kElementwise;
  int64_t gpu_ns = 0;   // kernels of the class launched in the median step
  int64_t kernels = 0;  // their launches
  double model_flops = 0;
  double measured_flops = 0;    // counters, over the measured kernels of the class
  int64_t measured_gpu_ns = 0;  // the step GPU time those kernels cover
};

struct MfuTopKernel {
  std::string name;
  KernelClass cls = KernelClass::kElementwise;
  int64_t total_ns = 0;
  int64_t count = 0;
  bool measured = false;
  double flops_per_s = 0;
  std::string bound;
  double pct_of_bound = 0;
  double intensity_dram = 0;
};

struct MfuReport {
  int device = -1;
  std::string gpu_name;
  std::string flop_source;  // "model", "roofline counters", "" (none)
  std::string flop_detail;  // the model, or the counters' coverage
  double flops_per_step = 0;
  std::string peak_key;       // "tensor_bf16"
  MachineValue peak;          // 0: unknown
  std::string peak_label;     // "bench", "datasheet", "" (unknown)
  std::string peak_source;    // where it came from, in words
  std::string peak_note;      // why unknown, or the datasheet figure beside a bench one
  int64_t median_step = -1;   // number of the steady step nearest the median (the class table's)
  double median_step_ns = 0;  // the median of the steady steps (StepSet::stats)
  int64_t class_step_ns = 0;  // the duration of step median_step
  double mfu_pct = 0;         // FLOPs / (median step x peak); 0 when unknown
  std::vector<MfuStep> steps;
  std::vector<MfuClass> classes;  // every class, in KernelClass order
  std::vector<MfuTopKernel> top;  // top 5 of the median step
  bool has_mfu() const { return mfu_pct > 0; }
};

// The ceiling key of a plan dtype name ("bf16" -> "tensor_bf16").
std::string PeakKeyOfDtype(const std::string& dtype);

MfuReport ComputeMfu(const TraceModel& m, const StepSet& steps, const MfuOptions& options);

// The one line `analyze` and `mfu` print: "MFU 38.2% (median step 13.6 ms ...)"
// or the reason there is none.
std::string MfuLine(const MfuReport& r);

// The report as tables (mfu_tables.cc): the summary (one row), the steps
// (number, time, MFU), the kernel classes of the median step, its top-5
// kernels with their roofline position.
Table MfuSummaryTable(const MfuReport& r);
Table MfuStepTable(const MfuReport& r);
Table MfuClassTable(const MfuReport& r);
Table MfuTopTable(const MfuReport& r);

}  // namespace stepscope
