#include "common/intervals.h"

#include <algorithm>

#include "common/log.h"
#include "common/strings.h"

namespace stepscope {

int64_t MergeIntervals(std::vector<Interval>* v) {
  v->erase(std::remove_if(v->begin(), v->end(), [](const Interval& i) { return i.end <= i.start; }),
           v->end());
  if (v->empty()) return 0;
  std::sort(v->begin(), v->end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  size_t out = 0;
  for (size_t i = 1; i < v->size(); ++i) {
    Interval& cur = (*v)[out];
    if ((*v)[i].start <= cur.end) {
      cur.end = std::max(cur.end, (*v)[i].end);
    } else {
      (*v)[++out] = (*v)[i];
    }
  }
  v->resize(out + 1);
  int64_t total = 0;
  for (const Interval& i : *v) total += i.end - i.start;
  return total;
}

int64_t IntersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].start, b[j].start);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

bool ClampRecordTimes(int64_t* start, int64_t* end) {
  const int64_t s = *start, e = *end;
  const bool start_ok = s >= 0 && s < kMaxTraceTime, end_ok = e >= 0 && e < kMaxTraceTime;
  *start = std::clamp<int64_t>(s, 0, kMaxTraceTime);
  if (!start_ok && end_ok && (e < *start || e - *start > kMaxRecordDuration)) *start = e;
  *end = std::clamp<int64_t>(e, *start, std::min(kMaxTraceTime, *start + kMaxRecordDuration));
  return *start != s || *end != e;
}

bool ClampInstant(int64_t* ts) {
  const int64_t t = std::clamp<int64_t>(*ts, 0, kMaxTraceTime);
  const bool changed = t != *ts;
  *ts = t;
  return changed;
}

void WarnClampedTimes(const std::string& path, int64_t records) {
  if (records <= 0) return;
  LogWarn(
      "%s: %s records with negative or impossible times were clamped (zero-length, or cut to "
      "4.9 hours)",
      path.c_str(), FormatCount(records).c_str());
}

}  // namespace stepscope
