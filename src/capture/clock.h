// The tracer's host clock. CUPTI stamps activity records with
// clock_gettime(CLOCK_REALTIME) on Linux by default; NVTX events use the same
// clock (plus a measured offset, normally 0) so that one clock covers every
// event and traces of processes on one host align without conversion.
#pragma once

#include <time.h>

#include <cstdint>

namespace stepscope {

inline int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace stepscope
