#include "common/intervals.h"

#include <algorithm>

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

}  // namespace stepscope
