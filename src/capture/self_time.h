// The tracer's own time on the program's threads (overhead compensation,
// issue 32): what the injected library spends in its handlers on a thread —
// CUPTI API callbacks (enter and exit: the API record, the Python stack of a
// blocking call) and NVTX handlers — accumulates per thread and goes with the
// thread's next API record (ApiRecord::tracer_ns). The replay removes it from
// the host time before that call, so a prediction made on a traced run is
// priced at the program's own host speed. Not measured here: CUPTI's own work
// inside the API call (its activity record) and before our callback runs, and
// the collector's sampling (another process).
#pragma once

#include <cstdint>

#include "capture/clock.h"

namespace stepscope {

// Nanoseconds of handler time on this thread not yet attached to a record.
inline thread_local int64_t t_self_time_ns = 0;

// Times one handler call: its whole duration is added when it returns. Off
// (no clock read) where nothing is recorded: an untraced program pays nothing.
class SelfTimer {
 public:
  explicit SelfTimer(bool on = true) : start_(on ? MonotonicNs() : 0) {}
  ~SelfTimer() {
    if (start_ != 0) t_self_time_ns += MonotonicNs() - start_;
  }
  SelfTimer(const SelfTimer&) = delete;
  SelfTimer& operator=(const SelfTimer&) = delete;

 private:
  int64_t start_;
};

// The time accumulated since the last take, for the record being written
// (saturated to the field's range), and the count starts again.
inline uint32_t TakeSelfTime() {
  const int64_t v = t_self_time_ns;
  t_self_time_ns = 0;
  return v <= 0 ? 0u : v >= int64_t{0xffffffff} ? 0xffffffffu : static_cast<uint32_t>(v);
}

}  // namespace stepscope
