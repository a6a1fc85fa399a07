// NvtxContext: "what was the program doing at time t?" in NVTX terms.
//
// Two questions, both asked for every allocation and every peak:
//  * the innermost push/pop range open on thread `tid` at `t` (the range a
//    cudaMalloc or malloc was called from);
//  * the training step running at `t`: a step range by the one definition
//    of common/step_names.h (as `steps`, roofline and ranks).
//
// Algorithm: ranges are grouped per thread and sorted by start; a stack sweep
// at construction gives each range its enclosing range (parent). A query
// binary-searches the last range that started at or before t and walks up the
// parent chain to the first range still open at t: with properly nested
// push/pop ranges that is exactly the innermost open range, in O(log n +
// depth). Ranges never closed (end_ns = -1, a trace cut off mid-run) are open
// until the end of time.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/records.h"

namespace stepscope::memory {

// True for a step name of common/step_names.h ("step 12", "step_12",
// "Step#12", "step12", "ProfilerStep#12"); *number receives the step number.
bool IsStepName(const std::string& name, int64_t* number);

struct NvtxAt {
  StringId range = kNoString;  // innermost push/pop range on the thread; 0 when none
  int64_t step = -1;           // step number; -1 when no step range contains t
};

class NvtxContext {
 public:
  NvtxContext() = default;
  // `strings` resolves NvtxRecord::name (the trace's strings table).
  NvtxContext(const std::vector<NvtxRecord>& ranges, const std::vector<std::string>& strings);

  // Innermost push/pop range on `tid` at `t`, and the step at `t`.
  NvtxAt At(uint32_t tid, int64_t t) const;
  // The step at `t` and the innermost range on the thread that ran that step
  // (for events without a thread, such as PyTorch allocator events).
  NvtxAt AtStepThread(int64_t t) const;
  int64_t StepAt(int64_t t, uint32_t* step_tid = nullptr) const;
  bool has_steps() const { return !steps_.empty(); }

 private:
  struct Range {
    int64_t start, end;  // end = INT64_MAX when never closed
    StringId name;
    int32_t parent;  // index in the same thread's vector, -1 at top level
  };
  struct Step {
    int64_t start, end;
    int64_t number;
    uint32_t tid;
  };
  StringId Innermost(uint32_t tid, int64_t t) const;

  std::unordered_map<uint32_t, std::vector<Range>> by_thread_;
  std::vector<Step> steps_;  // sorted by start
};

}  // namespace stepscope::memory
