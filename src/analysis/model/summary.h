// Summary statistics and interval arithmetic shared by the recipes, the step
// view and the rules.
#pragma once

#include <cstdint>
#include <vector>

#include "common/intervals.h"  // Interval, MergeIntervals
#include "common/kernel_names.h"
#include "common/stats.h"  // Median

namespace stepscope {

// Statistics of a set of durations (ns). The median is common/stats.h's (the
// mean of the two middle values of an even count); stddev is the sample
// standard deviation (n - 1 in the denominator, 0 for a single value), as
// Nsight Systems' recipes report.
struct DurationStats {
  int64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double median = 0;
  double stddev = 0;
};
// Reorders *values (nth_element).
DurationStats Summarize(std::vector<int64_t>* values);

// Time of a window split by what the GPU was doing, with Holistic Trace
// Analysis' temporal-breakdown priorities: time when any compute kernel runs
// is compute; else when a communication kernel runs, communication; else when
// a memcpy/memset runs, memory; else idle.
struct Breakdown {
  int64_t span = 0;  // window length
  int64_t busy = 0;  // union of all ops
  int64_t compute = 0;
  int64_t communication = 0;
  int64_t memory = 0;
  int64_t idle = 0;
};
struct CategorizedInterval {
  int64_t start;
  int64_t end;
  OpCategory category;
};
// Intervals are clipped to [lo, hi); *v is reordered.
Breakdown ComputeBreakdown(std::vector<CategorizedInterval>* v, int64_t lo, int64_t hi);

}  // namespace stepscope
