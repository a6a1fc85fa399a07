#include "analysis/model/timeline.h"

#include <algorithm>

namespace stepscope {
namespace {

// Appends [s, e) to a sorted disjoint list, merging with the last interval.
void Add(std::vector<Interval>* u, int64_t s, int64_t e) {
  if (e <= s) return;
  if (!u->empty() && s <= u->back().end) {
    u->back().end = std::max(u->back().end, e);
  } else {
    u->push_back({s, e});
  }
}

// a \ b for sorted disjoint lists.
std::vector<Interval> Subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& x : a) {
    int64_t s = x.start;
    while (j < b.size() && b[j].end <= s) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < x.end) {
      if (b[k].start > s) out.push_back({s, b[k].start});
      s = std::max(s, b[k].end);
      ++k;
    }
    if (s < x.end) out.push_back({s, x.end});
  }
  return out;
}

}  // namespace

FlatTimeline FlatTimeline::Build(const TraceModel& model, int device) {
  std::vector<Interval> u[3];
  for (const GpuOp& op : model.gpu_ops()) {
    if (device >= 0 && op.device != device) continue;
    Add(&u[static_cast<int>(op.category)], op.start_ns, op.end_ns);
  }
  const std::vector<Interval>& compute = u[0];
  std::vector<Interval> comm = Subtract(u[1], compute);
  std::vector<Interval> mem = Subtract(Subtract(u[2], compute), u[1]);
  FlatTimeline t;
  t.segments_.reserve(compute.size() + comm.size() + mem.size());
  size_t i[3] = {0, 0, 0};
  const std::vector<Interval>* lists[3] = {&compute, &comm, &mem};
  while (true) {
    int best = -1;
    for (int c = 0; c < 3; ++c) {
      if (i[c] < lists[c]->size() &&
          (best < 0 || (*lists[c])[i[c]].start < (*lists[best])[i[best]].start)) {
        best = c;
      }
    }
    if (best < 0) break;
    const Interval& x = (*lists[best])[i[best]++];
    t.segments_.push_back({x.start, x.end, static_cast<OpCategory>(best)});
  }
  for (auto& p : t.prefix_) p.assign(t.segments_.size() + 1, 0);
  for (size_t k = 0; k < t.segments_.size(); ++k) {
    for (int c = 0; c < 3; ++c) t.prefix_[c][k + 1] = t.prefix_[c][k];
    const Segment& s = t.segments_[k];
    t.prefix_[static_cast<int>(s.category)][k + 1] += s.end - s.start;
  }
  return t;
}

Breakdown FlatTimeline::Window(int64_t lo, int64_t hi) const {
  Breakdown b;
  b.span = std::max<int64_t>(0, hi - lo);
  if (hi <= lo || segments_.empty()) {
    b.idle = b.span;
    return b;
  }
  // First segment ending after lo, first segment starting at or after hi.
  size_t first =
      static_cast<size_t>(std::partition_point(segments_.begin(), segments_.end(),
                                               [&](const Segment& s) { return s.end <= lo; }) -
                          segments_.begin());
  size_t last =
      static_cast<size_t>(std::partition_point(segments_.begin(), segments_.end(),
                                               [&](const Segment& s) { return s.start < hi; }) -
                          segments_.begin());
  int64_t cat[3] = {0, 0, 0};
  if (first < last) {
    for (int c = 0; c < 3; ++c) cat[c] = prefix_[c][last] - prefix_[c][first];
    // Clip the partial segments at both ends.
    const Segment& f = segments_[first];
    if (f.start < lo) cat[static_cast<int>(f.category)] -= lo - f.start;
    const Segment& l = segments_[last - 1];
    if (l.end > hi) cat[static_cast<int>(l.category)] -= l.end - hi;
  }
  b.compute = cat[0];
  b.communication = cat[1];
  b.memory = cat[2];
  b.busy = cat[0] + cat[1] + cat[2];
  b.idle = b.span - b.busy;
  return b;
}

}  // namespace stepscope
