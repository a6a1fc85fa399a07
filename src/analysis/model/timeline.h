// FlatTimeline: the GPU timeline of one device (or of all devices together)
// flattened into disjoint busy segments, each labelled with Holistic Trace
// Analysis' temporal-breakdown category: compute where any compute kernel
// runs; else communication where an NCCL kernel runs; else memory where a
// memcpy/memset runs. Everything between segments is idle.
//
// Built in O(n) from the start-ordered ops: a union per category, then
// set differences of sorted disjoint interval lists. Window() answers "what
// did the GPU do in [lo, hi)" in O(log n) with prefix sums, so per-step
// breakdowns and GPU-gap scans cost nothing extra.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/summary.h"
#include "analysis/model/trace_model.h"

namespace stepscope {

struct Segment {
  int64_t start;
  int64_t end;
  OpCategory category;
};

class FlatTimeline {
 public:
  // device < 0: all devices together (busy when any device is busy).
  static FlatTimeline Build(const TraceModel& model, int device);

  const std::vector<Segment>& segments() const { return segments_; }
  bool empty() const { return segments_.empty(); }
  int64_t first_ns() const { return segments_.empty() ? 0 : segments_.front().start; }
  int64_t last_ns() const { return segments_.empty() ? 0 : segments_.back().end; }
  // Breakdown of [lo, hi).
  Breakdown Window(int64_t lo, int64_t hi) const;
  // Busy time in [lo, hi).
  int64_t Busy(int64_t lo, int64_t hi) const { return Window(lo, hi).busy; }

 private:
  std::vector<Segment> segments_;
  // prefix_[c][i]: total length of category c in segments_[0, i).
  std::vector<int64_t> prefix_[3];
};

}  // namespace stepscope
