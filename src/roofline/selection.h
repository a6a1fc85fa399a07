// Which kernels to profile: the top-N kernels of one training step by GPU
// time, read from a trace.
//
// A step is an NVTX range named "step N" (any domain; "step_N" and "Step N"
// too). A kernel belongs to the step when the API call that launched it
// (api.correlation = kernels.correlation) started inside the range, on any
// thread: backward kernels are launched by autograd threads while the main
// thread sits inside "step N". Traces without API rows (some imports) fall
// back to kernels whose GPU start lies in the range.
//
// A "kernel" here is a kernel function with one launch configuration (name,
// grid, block): one GEMM function run at several shapes is several kernels,
// each with its own FLOPs and intensity. They are ranked by their summed GPU
// time in the step, ties by name, then grid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/table.h"
#include "roofline/kernel_target.h"
#include "store/trace_reader.h"

namespace stepscope {

struct StepRange {
  int64_t number = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct SelectionOptions {
  int top = 5;               // 0: no limit
  std::string kernel_regex;  // "": no filter (ECMAScript, searched in the demangled name)
  int64_t step = -1;         // -1: the median step of the trace
};

struct Selection {
  bool has_step = false;  // false: the trace has no "step N" ranges; whole trace used
  StepRange step;
  int64_t steps_in_trace = 0;
  std::string method;          // "launch api in step", "gpu start in step", "whole trace"
  int64_t step_kernel_ns = 0;  // GPU time of all kernels of the step (for shares)
  std::vector<KernelTarget> targets;
  // Kernels left out because their name is longer than --kernel is searched
  // in (kMaxRegexSubject, common/bounded_regex.h).
  int64_t names_not_searched = 0;
};

// The trace's complete step ranges (common/step_names.h), sorted by start.
StatusOr<std::vector<StepRange>> FindSteps(const TraceReader& trace);
StatusOr<Selection> SelectKernels(const TraceReader& trace, const SelectionOptions& opt);

// The selection as a table (rank, time, share, launches, grid, block, name).
Table SelectionTable(const Selection& s);

}  // namespace stepscope
