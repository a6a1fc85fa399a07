// Scope: the part of a trace a recipe looks at, from the common filters
//   --time-range START:END  (durations since the trace start, e.g. 2s:3.5s, 100ms:, :1s)
//   --nvtx NAME             (every instance of the NVTX range NAME)
//   --step N                (step N's host range, see steps.h)
//   --device D              (GPU activity of device D only)
// Time filters become a sorted list of host-time windows (intersected when
// several are given). A host-side event (api call, NVTX range, sync) is in
// scope when it starts inside a window; a GPU op is in scope when its
// launching api call is (so --nvtx forward selects the kernels forward
// launched even when they ran later), or, without a launching call, when the
// op starts inside a window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/steps.h"
#include "analysis/model/summary.h"
#include "analysis/model/trace_model.h"
#include "common/status.h"

namespace stepscope {

struct ScopeSpec {
  std::string time_range;  // "START:END"; empty: no time filter
  std::string nvtx;        // range name; empty: none
  int64_t step = -1;       // step number; -1: none
  bool has_step = false;
  std::string step_regex;  // --step-range, for resolving --step
  int device = -1;         // -1: all devices
};

class Scope {
 public:
  // Everything.
  Scope() = default;
  // InvalidInput for a malformed --time-range; a --step N the trace does not
  // have is InvalidInput too (names the steps it has). A --nvtx NAME without
  // instances gives an empty scope (tables are empty, not an error).
  static StatusOr<Scope> Resolve(const TraceModel& model, const ScopeSpec& spec);

  bool all_time() const { return all_time_; }
  const std::vector<Interval>& windows() const { return windows_; }
  int device() const { return device_; }

  bool InTime(int64_t t) const;
  bool HasDevice(uint32_t d) const { return device_ < 0 || static_cast<int>(d) == device_; }
  bool IncludesOp(const TraceModel& m, const GpuOp& op) const {
    if (!HasDevice(op.device)) return false;
    if (all_time_) return true;
    return InTime(op.api != kNone ? m.apis()[op.api].start_ns : op.start_ns);
  }
  // Overall [first, last) bounds of the windows (the trace span when all_time).
  Interval Bounds(const TraceModel& m) const;

 private:
  bool all_time_ = true;
  std::vector<Interval> windows_;
  int device_ = -1;
};

// Parses "START:END" (either side may be empty) into ns offsets; end = -1 when open.
Status ParseTimeRange(const std::string& s, int64_t* start, int64_t* end);

}  // namespace stepscope
