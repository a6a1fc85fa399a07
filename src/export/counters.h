// Counter series over a trace, per device: GPU utilization per time bucket and
// device memory in use. The exporter draws them as counter tracks and the HTML
// report as charts.
//
// These are the front-ends' own small computations until the analysis library
// offers the same series (its `gpu_time_util` recipe and the memory timeline);
// then both callers switch to it and this file goes.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "store/trace_reader.h"

namespace stepscope {

struct CounterPoint {
  int64_t ts_ns;
  double value;
};

struct DeviceSeries {
  uint32_t device = 0;
  std::vector<CounterPoint> points;  // ordered by ts_ns
};

// Bucket width giving about `target_buckets` buckets over [first_ns, last_ns],
// rounded up to a 1-2-5 step of microseconds (at least 1 us).
int64_t AutoBucketNs(int64_t first_ns, int64_t last_ns, int target_buckets);

// GPU utilization: for each device, the percentage of each bucket
// [t0 + i*bucket, t0 + (i+1)*bucket) covered by the union of its kernels
// (any stream), t0 = the first kernel start of the trace. One point per bucket
// at the bucket start, from the first to the last bucket holding a kernel end.
// bucket_ns <= 0 picks AutoBucketNs(..., 2000); *used_bucket_ns tells which.
StatusOr<std::vector<DeviceSeries>> GpuUtilizationSeries(const TraceReader& reader,
                                                         int64_t bucket_ns,
                                                         int64_t* used_bucket_ns);

// Device memory in use: for each device, the bytes of live device-side
// allocations (every memory kind but pageable and pinned host memory) after
// each allocation or free, one point per distinct timestamp. A free of an
// address not allocated inside the trace changes nothing (the allocation
// predates the trace); *unknown_frees counts them.
StatusOr<std::vector<DeviceSeries>> DeviceMemorySeries(const TraceReader& reader,
                                                       int64_t* unknown_frees);

}  // namespace stepscope
