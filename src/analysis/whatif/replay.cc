#include "analysis/whatif/replay.h"

#include <algorithm>
#include <map>

#include "common/stats.h"

namespace stepscope::whatif {

ReplayResult Replay(const Graph& g) {
  const size_t n = g.nodes.size();
  ReplayResult r;
  r.start.assign(n, 0);
  r.end.assign(n, 0);
  r.bound_start.assign(n, kNone);
  r.bound_end.assign(n, kNone);
  for (uint32_t ev : g.order) {
    const uint32_t v = ev / 2;
    const Node& node = g.nodes[v];
    const uint32_t b = g.in_begin[v], e = g.in_begin[v + 1];
    if ((ev & 1) == 0) {
      int64_t start = INT64_MIN;
      bool any = false;
      for (uint32_t k = b; k < e; ++k) {
        const Edge& x = g.edges[g.in_edges[k]];
        if (x.to_end()) continue;
        any = true;
        if (!x.enabled) continue;
        const int64_t t = (x.from_start() ? r.start[x.from] : r.end[x.from]) + x.delay;
        if (t > start) {
          start = t;
          r.bound_start[v] = g.in_edges[k];
        }
      }
      // Anchors (no incoming edge) and nodes whose every edge was disabled.
      if (!any || start == INT64_MIN) start = node.measured_start;
      r.start[v] = start;
      continue;
    }
    int64_t end = r.start[v] + node.duration;
    for (uint32_t k = b; k < e; ++k) {
      const Edge& x = g.edges[g.in_edges[k]];
      if (!x.to_end() || !x.enabled) continue;
      const int64_t t = r.end[x.from] + x.delay;
      if (t > end) {
        end = t;
        r.bound_end[v] = g.in_edges[k];
      }
    }
    r.end[v] = end;
  }
  return r;
}

ReplayResult Measured(const Graph& g) {
  ReplayResult r;
  for (const Node& n : g.nodes) {
    r.start.push_back(n.measured_start);
    r.end.push_back(n.measured_end);
  }
  r.bound_start.assign(g.nodes.size(), kNone);
  r.bound_end.assign(g.nodes.size(), kNone);
  return r;
}

StepTimes StepDurations(const Graph& g, const ReplayResult& r, const StepSet& steps, int device,
                        int first_counted, int last_counted) {
  StepTimes t;
  const size_t ns = steps.steps.size();
  t.end.assign(ns, -1);
  t.duration.assign(ns, -1);
  t.last_node.assign(ns, kNone);
  std::vector<int64_t> first(ns, INT64_MAX);
  for (uint32_t v = 0; v < g.nodes.size(); ++v) {
    const Node& n = g.nodes[v];
    if (n.step < 0 || n.step >= static_cast<int32_t>(ns)) continue;
    first[n.step] = std::min(first[n.step], r.start[v]);
    if (n.kind != NodeKind::kOp) continue;
    if (device >= 0 && g.lanes[n.lane].device != static_cast<uint32_t>(device)) continue;
    if (r.end[v] > t.end[n.step]) {
      t.end[n.step] = r.end[v];
      t.last_node[n.step] = v;
    }
  }
  std::vector<int64_t> steady;
  int64_t prev = -1;
  for (size_t k = 0; k < ns; ++k) {
    if (t.end[k] < 0) continue;
    t.duration[k] = prev >= 0 ? t.end[k] - prev : t.end[k] - first[k];
    prev = t.end[k];
    const int ki = static_cast<int>(k);
    if (steps.steps[k].steady() && k > 0 && ki >= first_counted && ki <= last_counted)
      steady.push_back(t.duration[k]);
  }
  if (!steady.empty()) {
    t.median = MedianNs(steady);
    int64_t sum = 0;
    for (int64_t d : steady) sum += d;
    t.mean = sum / static_cast<int64_t>(steady.size());
  }
  return t;
}

CriticalPath TraceCriticalPath(const Graph& g, const ReplayResult& r, const StepTimes& t,
                               int step) {
  CriticalPath p;
  p.step = step;
  if (step < 0 || step >= static_cast<int>(t.end.size()) || t.last_node[step] == kNone) return p;
  const int64_t w1 = t.end[step];
  const int64_t w0 = w1 - t.duration[step];
  p.duration = w1 - w0;
  std::map<std::pair<uint32_t, std::string>, int64_t> acc;
  auto add = [&](uint32_t lane, const char* what, int64_t a, int64_t b) {
    a = std::max(a, w0);
    b = std::min(b, w1);
    if (b > a) acc[{lane, what}] += b - a;
  };
  uint32_t v = t.last_node[step];
  bool at_end = true;  // arrived at the node's end (else at its start: a launch edge)
  for (int guard = 0; guard < 10'000'000 && v != kNone; ++guard) {
    const Node& n = g.nodes[v];
    if (at_end && r.end[v] <= w0) break;
    if (!at_end && r.start[v] <= w0) break;
    if (at_end && r.bound_end[v] != kNone) {
      const Edge& e = g.edges[r.bound_end[v]];
      add(n.lane, "sync return", r.end[v] - e.delay, r.end[v]);
      v = e.from;
      continue;
    }
    if (at_end)
      add(n.lane, n.kind == NodeKind::kCall ? "API calls" : "GPU ops", r.start[v], r.end[v]);
    const uint32_t k = r.bound_start[v];
    if (k == kNone) break;
    const Edge& e = g.edges[k];
    const char* what = "CPU between calls";
    uint32_t lane = n.lane;
    switch (e.kind) {
      case EdgeKind::kThread:
      case EdgeKind::kCrossThread:
        break;
      case EdgeKind::kLaunch:
        what = "launch latency";
        break;
      case EdgeKind::kStream:
      case EdgeKind::kCrossStream:
        what = "queue gaps";
        break;
      case EdgeKind::kBlock:
        what = "sync return";
        break;
    }
    add(lane, what, r.start[v] - e.delay, r.start[v]);
    at_end = !e.from_start();
    v = e.from;
  }
  std::map<uint32_t, int64_t> lanes;
  for (const auto& [key, ns] : acc) {
    p.parts.push_back({key.first, key.second, ns});
    lanes[key.first] += ns;
  }
  std::sort(p.parts.begin(), p.parts.end(),
            [](const PathPart& a, const PathPart& b) { return a.ns > b.ns; });
  for (const auto& [l, ns] : lanes) p.lanes.push_back({l, ns});
  std::sort(p.lanes.begin(), p.lanes.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  int64_t host = 0, gpu = 0;
  for (const PathPart& x : p.parts) {
    if (x.what == "launch latency" || x.what == "sync return") continue;
    (g.lanes[x.lane].host ? host : gpu) += x.ns;
  }
  p.host_bound = host > gpu;
  return p;
}

}  // namespace stepscope::whatif
