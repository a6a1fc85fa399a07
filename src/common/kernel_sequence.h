// The kernel-sequence step detector: the steps of a trace without step ranges
// (common/step_names.h), found on the GPU timeline of one device. Shared by
// `steps` and the rules (analysis/model/steps.cc) and the per-rank summaries
// (ranks/summarize.cc), so that every command sees the same steps.
//
// The anchor is the kernel name that occurs most often (at least 3 times) at
// a uniform spacing: every occurrence the same number of kernels after the
// previous one, within 10% (ties: the earliest first occurrence). Each
// occurrence starts a step. Per-layer kernels are not uniform (the step
// boundary breaks the spacing); the once-per-step optimizer kernel is.
// A step runs from its anchor kernel's start (earlier: the copies and
// memsets on the device right before it, the step's input) to the next
// step's start; the last one to the latest end of its anchor's period of
// kernels. The caller rejects anchors that repeat only inside one forward
// range (IsForwardRangeName: the layers of one call, not steps).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stepscope {

// One GPU operation of the device, in start order.
struct SequenceOp {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t name = 0;   // the caller's name id (kernels only)
  bool kernel = true;  // false: a copy or memset
};

struct KernelSequence {
  bool found = false;
  uint32_t anchor = 0;          // the anchor's name id
  std::vector<size_t> anchors;  // indices into the ops of each step's anchor kernel
  std::vector<std::pair<int64_t, int64_t>> ranges;  // each step's [start, end) on the GPU timeline
};

// `ops`: one device's kernels, copies and memsets sorted by start; name ids
// below `name_bound`.
KernelSequence FindKernelSequence(const std::vector<SequenceOp>& ops, size_t name_bound);

// "LlamaModel.forward", "## forward ##", "nn.Module: GPT": a module's forward call.
bool IsForwardRangeName(std::string_view name);

}  // namespace stepscope
