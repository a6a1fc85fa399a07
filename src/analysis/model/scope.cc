#include "analysis/model/scope.h"

#include <algorithm>

#include "common/strings.h"

namespace stepscope {
namespace {

// Intersection of two sorted disjoint window lists.
std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].start, b[j].start), e = std::min(a[i].end, b[j].end);
    if (s < e) out.push_back({s, e});
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return out;
}

// Sorts and merges overlapping windows.
std::vector<Interval> Normalize(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& x, const Interval& y) { return x.start < y.start; });
  std::vector<Interval> out;
  for (const Interval& w : v) {
    if (w.end <= w.start) continue;
    if (!out.empty() && w.start <= out.back().end) {
      out.back().end = std::max(out.back().end, w.end);
    } else {
      out.push_back(w);
    }
  }
  return out;
}

}  // namespace

Status ParseTimeRange(const std::string& s, int64_t* start, int64_t* end) {
  const size_t colon = s.find(':');
  const std::string hint = "--time-range '" + s +
                           "': expected START:END as durations since the trace start, e.g. "
                           "2s:3.5s, 100ms:, :1.5s";
  if (colon == std::string::npos) return InvalidInput(hint);
  const std::string a = Trim(s.substr(0, colon)), b = Trim(s.substr(colon + 1));
  *start = 0;
  *end = -1;
  if (!a.empty() && !ParseDurationNs(a, start)) return InvalidInput(hint);
  if (!b.empty() && !ParseDurationNs(b, end)) return InvalidInput(hint);
  if (*end >= 0 && *end <= *start) return InvalidInput(hint + " (END must be after START)");
  return OkStatus();
}

StatusOr<Scope> Scope::Resolve(const TraceModel& m, const ScopeSpec& spec) {
  Scope scope;
  scope.device_ = spec.device;
  std::vector<std::vector<Interval>> filters;
  if (!spec.time_range.empty()) {
    int64_t a = 0, b = -1;
    RETURN_IF_ERROR(ParseTimeRange(spec.time_range, &a, &b));
    filters.push_back({{m.origin_ns() + a, b < 0 ? INT64_MAX : m.origin_ns() + b}});
  }
  if (!spec.nvtx.empty()) {
    std::vector<Interval> w;
    for (size_t i = 0; i < m.nvtx().size(); ++i) {
      const NvtxRecord& r = m.nvtx()[i];
      if (r.kind != NvtxKind::kMark && m.String(r.name) == spec.nvtx) {
        w.push_back({r.start_ns, m.RangeEnd(static_cast<uint32_t>(i))});
      }
    }
    filters.push_back(Normalize(std::move(w)));
  }
  if (spec.has_step) {
    StepOptions so;
    so.range_regex = spec.step_regex;
    so.device = spec.device;
    ASSIGN_OR_RETURN(StepSet steps, DetectSteps(m, so));
    const int k = steps.Find(spec.step);
    if (k < 0) {
      std::string have = steps.steps.empty()
                             ? "the trace has no steps (see 'stepscope steps --help')"
                             : "steps are " + std::to_string(steps.steps.front().number) + ".." +
                                   std::to_string(steps.steps.back().number);
      return InvalidInput(m.path() + ": --step " + std::to_string(spec.step) + ": no such step; " +
                          have);
    }
    const Step& s = steps.steps[k];
    filters.push_back({{s.range_start_ns, std::max(s.range_end_ns, s.range_start_ns + 1)}});
  }
  if (filters.empty()) return scope;
  scope.all_time_ = false;
  scope.windows_ = filters[0];
  for (size_t i = 1; i < filters.size(); ++i)
    scope.windows_ = Intersect(scope.windows_, filters[i]);
  return scope;
}

bool Scope::InTime(int64_t t) const {
  if (all_time_) return true;
  auto it = std::partition_point(windows_.begin(), windows_.end(),
                                 [&](const Interval& w) { return w.end <= t; });
  return it != windows_.end() && it->start <= t;
}

Interval Scope::Bounds(const TraceModel& m) const {
  if (all_time_) return {m.origin_ns(), m.end_ns()};
  if (windows_.empty()) return {0, 0};
  return {windows_.front().start,
          std::min(windows_.back().end, std::max(m.end_ns(), windows_.back().start))};
}

}  // namespace stepscope
