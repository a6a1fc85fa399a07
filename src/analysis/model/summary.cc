#include "analysis/model/summary.h"

#include <algorithm>
#include <cmath>

namespace stepscope {

DurationStats Summarize(std::vector<int64_t>* values) {
  DurationStats s;
  std::vector<int64_t>& v = *values;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  s.min = v[0];
  s.max = v[0];
  long double sum = 0;
  for (int64_t x : v) {
    s.total += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    sum += x;
  }
  s.mean = static_cast<double>(sum / v.size());
  long double sq = 0;
  for (int64_t x : v)
    sq += (x - static_cast<long double>(s.mean)) * (x - static_cast<long double>(s.mean));
  s.stddev = v.size() > 1 ? std::sqrt(static_cast<double>(sq / (v.size() - 1))) : 0.0;
  s.median = MedianInPlace(&v);
  return s;
}

Breakdown ComputeBreakdown(std::vector<CategorizedInterval>* v, int64_t lo, int64_t hi) {
  Breakdown b;
  b.span = std::max<int64_t>(0, hi - lo);
  struct Edge {
    int64_t t;
    int delta;
    int cat;
  };
  std::vector<Edge> edges;
  edges.reserve(v->size() * 2);
  for (const CategorizedInterval& i : *v) {
    const int64_t s = std::max(i.start, lo), e = std::min(i.end, hi);
    if (e <= s) continue;
    edges.push_back({s, +1, static_cast<int>(i.category)});
    edges.push_back({e, -1, static_cast<int>(i.category)});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& c) { return a.t < c.t; });
  int count[3] = {0, 0, 0};
  int64_t prev = lo;
  for (const Edge& e : edges) {
    const int64_t d = e.t - prev;
    if (d > 0) {
      if (count[0] > 0) {
        b.compute += d;
      } else if (count[1] > 0) {
        b.communication += d;
      } else if (count[2] > 0) {
        b.memory += d;
      }
    }
    prev = e.t;
    count[e.cat] += e.delta;
  }
  b.busy = b.compute + b.communication + b.memory;
  b.idle = b.span - b.busy;
  return b;
}

}  // namespace stepscope
