#include "analysis/whatif/transforms.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "analysis/whatif/untraced.h"
#include "common/stats.h"

namespace stepscope::whatif {
namespace {

// The launching call of an op node (its launch edge's source), or kNone.
uint32_t LaunchCall(const Graph& g, uint32_t op) {
  for (uint32_t k = g.in_begin[op]; k < g.in_begin[op + 1]; ++k) {
    const Edge& e = g.edges[g.in_edges[k]];
    if (e.kind == EdgeKind::kLaunch) return e.from;
  }
  return kNone;
}

}  // namespace

int RemoveWaits(Graph* g, const std::vector<uint32_t>& calls) {
  std::set<uint32_t> sel(calls.begin(), calls.end());
  int n = 0;
  for (Edge& e : g->edges) {
    if (e.kind == EdgeKind::kBlock && sel.count(e.to) && e.enabled) {
      e.enabled = false;
      ++n;
    }
  }
  return n;
}

int CutHostTime(Graph* g, const std::vector<HostSpan>& spans, int64_t residual_ns) {
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> by_tid;
  for (const HostSpan& s : spans) by_tid[s.tid].push_back({s.start_ns, s.end_ns});
  int n = 0;
  for (auto& [tid, v] : by_tid) std::sort(v.begin(), v.end());
  // Per span, the cut edges keep `residual_ns` between them.
  std::map<std::pair<uint32_t, size_t>, int64_t> left;
  for (Edge& e : g->edges) {
    if (e.kind != EdgeKind::kThread && e.kind != EdgeKind::kCrossThread) continue;
    const Node& to = g->nodes[e.to];
    const Lane& lane = g->lanes[to.lane];
    auto it = by_tid.find(lane.id);
    if (it == by_tid.end() || e.delay <= 0) continue;
    const int64_t a = to.measured_start - e.delay, b = to.measured_start;
    for (size_t k = 0; k < it->second.size(); ++k) {
      const auto& [s0, s1] = it->second[k];
      if (s0 >= b || s1 <= a) continue;
      int64_t& res = left.try_emplace({lane.id, k}, residual_ns).first->second;
      const int64_t keep = std::min(res, e.delay);
      res -= keep;
      e.delay = keep;
      ++n;
      break;
    }
  }
  return n;
}

int CutHostOverlap(Graph* g, const std::vector<HostSpan>& spans, int64_t residual_ns) {
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> by_tid;
  for (const HostSpan& s : spans) by_tid[s.tid].push_back({s.start_ns, s.end_ns});
  for (auto& [tid, v] : by_tid) std::sort(v.begin(), v.end());
  std::map<std::pair<uint32_t, size_t>, int64_t> left;  // residual still to keep, per span
  int n = 0;
  for (Edge& e : g->edges) {
    if ((e.kind != EdgeKind::kThread && e.kind != EdgeKind::kCrossThread) || e.delay <= 0) continue;
    const Node& to = g->nodes[e.to];
    auto it = by_tid.find(g->lanes[to.lane].id);
    if (it == by_tid.end()) continue;
    // The gap as measured: from the previous call's end to this call's start.
    const int64_t a = g->nodes[e.from].measured_end, b = to.measured_start;
    if (b <= a) continue;
    int64_t cut = 0;
    const std::vector<std::pair<int64_t, int64_t>>& v = it->second;
    // The spans are disjoint (sorted by start, so by end too): the first that ends after a.
    const size_t first = static_cast<size_t>(
        std::partition_point(v.begin(), v.end(), [&](const auto& x) { return x.second <= a; }) -
        v.begin());
    for (size_t k = first; k < v.size() && v[k].first < b; ++k) {
      const int64_t ov = std::min(b, v[k].second) - std::max(a, v[k].first);
      if (ov <= 0) continue;
      const int64_t scaled = static_cast<int64_t>(
          std::llround(static_cast<double>(ov) * e.delay / static_cast<double>(b - a)));
      int64_t& res = left.try_emplace({it->first, k}, residual_ns).first->second;
      const int64_t keep = std::min(res, scaled);
      res -= keep;
      cut += scaled - keep;
    }
    if (cut <= 0) continue;
    e.delay = std::max<int64_t>(0, e.delay - cut);
    ++n;
  }
  return n;
}

int ScaleHostTime(Graph* g, const std::vector<ScaledHostSpan>& spans) {
  if (spans.empty()) return 0;
  std::map<uint32_t, std::vector<const ScaledHostSpan*>> by_tid;
  for (const ScaledHostSpan& s : spans) by_tid[s.tid].push_back(&s);
  for (auto& [tid, v] : by_tid) {
    std::sort(v.begin(), v.end(), [](const ScaledHostSpan* a, const ScaledHostSpan* b) {
      return a->start_ns < b->start_ns;
    });
  }
  int n = 0;
  for (Edge& e : g->edges) {
    if (e.kind != EdgeKind::kThread && e.kind != EdgeKind::kCrossThread) continue;
    if (e.delay <= 0) continue;
    const Node& to = g->nodes[e.to];
    auto it = by_tid.find(g->lanes[to.lane].id);
    if (it == by_tid.end()) continue;
    const int64_t a = to.measured_start - e.delay, b = to.measured_start;
    // The last span starting at or before the gap's start.
    const auto& v = it->second;
    auto k = std::upper_bound(v.begin(), v.end(), a,
                              [](int64_t t, const ScaledHostSpan* s) { return t < s->start_ns; });
    if (k == v.begin()) continue;
    const ScaledHostSpan& s = **(k - 1);
    if (b > s.end_ns) continue;
    e.delay = static_cast<int64_t>(e.delay * std::clamp(s.factor, 0.0, 1.0) + 0.5);
    ++n;
  }
  return n;
}

int ShortenHostTime(Graph* g, const HostSpan& span, int64_t by_ns) {
  int n = 0;
  for (Edge& e : g->edges) {
    if (by_ns <= 0) break;
    if (e.kind != EdgeKind::kThread && e.kind != EdgeKind::kCrossThread) continue;
    const Node& to = g->nodes[e.to];
    if (g->lanes[to.lane].id != span.tid || e.delay <= 0) continue;
    const int64_t a = to.measured_start - e.delay, b = to.measured_start;
    if (a >= span.end_ns || b <= span.start_ns) continue;
    const int64_t cut =
        std::min({by_ns, e.delay, std::min(b, span.end_ns) - std::max(a, span.start_ns)});
    e.delay -= cut;
    by_ns -= cut;
    ++n;
  }
  return n;
}

int GrowHostTime(Graph* g, const HostSpan& span, double factor) {
  if (factor <= 1.0) return 0;
  int n = 0;
  for (Edge& e : g->edges) {
    if (e.kind != EdgeKind::kThread && e.kind != EdgeKind::kCrossThread) continue;
    const Node& to = g->nodes[e.to];
    if (g->lanes[to.lane].id != span.tid || e.delay <= 0) continue;
    const int64_t a = to.measured_start - e.delay, b = to.measured_start;
    const int64_t overlap = std::min(b, span.end_ns) - std::max(a, span.start_ns);
    if (overlap <= 0) continue;
    e.delay += static_cast<int64_t>(overlap * (factor - 1.0) + 0.5);
    ++n;
  }
  return n;
}

int SetDurations(Graph* g, const std::vector<uint32_t>& ops, const std::vector<int64_t>& ns) {
  int n = 0;
  for (size_t i = 0; i < ops.size() && i < ns.size(); ++i) {
    g->nodes[ops[i]].duration = std::max<int64_t>(0, ns[i]);
    ++n;
  }
  return n;
}

int ScaleOps(Graph* g, const std::vector<uint32_t>& ops, double factor) {
  for (uint32_t v : ops) {
    g->nodes[v].duration = static_cast<int64_t>(g->nodes[v].duration * factor + 0.5);
  }
  return static_cast<int>(ops.size());
}

int RemoveOps(Graph* g, const std::vector<uint32_t>& ops) {
  std::set<uint32_t> sel(ops.begin(), ops.end());
  std::set<uint32_t> calls;
  for (uint32_t v : ops) {
    g->nodes[v].duration = 0;
    const uint32_t c = LaunchCall(*g, v);
    if (c != kNone) calls.insert(c);
  }
  for (uint32_t c : calls) g->nodes[c].duration = 0;
  // A blocking call that waited for a removed op: the call goes (its own
  // time too), and the edge with it: the wait existed for the copy.
  std::set<uint32_t> waiting;
  for (Edge& e : g->edges) {
    if (e.kind == EdgeKind::kBlock && sel.count(e.from)) waiting.insert(e.to);
  }
  for (Edge& e : g->edges) {
    if (e.kind == EdgeKind::kBlock && waiting.count(e.to)) e.enabled = false;
  }
  for (uint32_t c : waiting) g->nodes[c].duration = 0;
  // The host work that prepared each removed copy (the Python of an offload
  // hook: the CPU time just before the call, up to kPrepareMax) goes with it.
  constexpr int64_t kPrepareMax = 200'000;
  for (Edge& e : g->edges) {
    // Before the copy and the wait, and after the wait (the hook's return).
    if (e.kind == EdgeKind::kThread &&
        (calls.count(e.to) || waiting.count(e.to) || waiting.count(e.from)))
      e.delay -= std::min(e.delay, kPrepareMax);
  }
  // The removed ops' queue gaps and launch latencies go too.
  for (Edge& e : g->edges) {
    if ((e.kind == EdgeKind::kStream || e.kind == EdgeKind::kLaunch) && sel.count(e.to)) {
      e.delay = 0;
    }
  }
  return static_cast<int>(ops.size() + waiting.size());
}

int RemoveRoundTrips(Graph* g, const std::vector<uint32_t>& calls,
                     const std::vector<uint32_t>& copies) {
  int n = RemoveWaits(g, calls);
  for (uint32_t c : calls) g->nodes[c].duration = 0;
  std::set<uint32_t> sel(copies.begin(), copies.end());
  for (uint32_t v : copies) {
    g->nodes[v].duration = 0;
    const uint32_t c = LaunchCall(*g, v);
    if (c != kNone) g->nodes[c].duration = 0;
  }
  for (Edge& e : g->edges) {
    if ((e.kind == EdgeKind::kStream || e.kind == EdgeKind::kLaunch) && sel.count(e.to))
      e.delay = 0;
  }
  return n + static_cast<int>(calls.size() + copies.size());
}

int BatchLoops(Graph* g, const std::vector<HostSpan>& spans) {
  int n = CutHostOverlap(g, spans, 0);
  for (Node& v : g->nodes) {
    if (v.kind != NodeKind::kCall) continue;
    const Lane& lane = g->lanes[v.lane];
    for (const HostSpan& s : spans) {
      if (lane.id != s.tid || v.measured_start < s.start_ns || v.measured_start >= s.end_ns)
        continue;
      v.duration = 0;
      ++n;
      break;
    }
  }
  return n;
}

int RemoveRecompute(Graph* g, const std::vector<uint32_t>& ops,
                    const std::vector<HostSpan>& segments, const std::vector<HostSpan>& boundaries,
                    int64_t boundary_ns, const std::vector<ScaledHostSpan>& scaled) {
  return RemoveOps(g, ops) + CutHostTime(g, segments, 0) + CutHostTime(g, boundaries, boundary_ns) +
         ScaleHostTime(g, scaled);
}

int PinCopies(Graph* g, const std::vector<PinnedCopy>& copies) {
  std::vector<uint32_t> calls;
  for (const PinnedCopy& p : copies) {
    Node& n = g->nodes[p.op];
    n.duration = std::min(n.duration, std::max<int64_t>(p.ns, 0));
    if (n.copy != CopyDirection::kHostToDevice) continue;
    const uint32_t c = LaunchCall(*g, p.op);
    if (c != kNone && g->nodes[c].block == BlockKind::kPageableCopy) {
      calls.push_back(c);
      g->nodes[c].duration = std::min(g->nodes[c].duration, kMaxNonWaitingCallNs);
    }
    if (p.sync != kNone) calls.push_back(p.sync);
  }
  RemoveWaits(g, calls);
  return static_cast<int>(copies.size());
}

int SideStream(Graph* g, const std::vector<uint32_t>& copy_ops) {
  if (copy_ops.empty()) return 0;
  std::set<uint32_t> sel(copy_ops.begin(), copy_ops.end());
  const uint32_t side = static_cast<uint32_t>(g->lanes.size());
  Lane lane = g->lanes[g->nodes[copy_ops[0]].lane];
  lane.id = kSideStreamId;
  g->lanes.push_back(lane);
  // The old streams' order, from their stream edges; those touching a moved
  // copy go and the stream is re-chained around it.
  std::map<uint32_t, uint32_t> prev, next;
  for (Edge& e : g->edges) {
    if (e.kind != EdgeKind::kStream || !e.enabled) continue;
    next[e.from] = e.to;
    prev[e.to] = e.from;
    if (sel.count(e.from) || sel.count(e.to)) e.enabled = false;
  }
  auto kept = [&](std::map<uint32_t, uint32_t>& m, uint32_t v) {
    auto it = m.find(v);
    uint32_t x = it == m.end() ? kNone : it->second;
    while (x != kNone && sel.count(x)) {
      it = m.find(x);
      x = it == m.end() ? kNone : it->second;
    }
    return x;
  };
  std::vector<uint32_t> moved(copy_ops.begin(), copy_ops.end());
  std::sort(moved.begin(), moved.end(), [&](uint32_t a, uint32_t b) {
    return g->nodes[a].measured_start < g->nodes[b].measured_start;
  });
  std::set<std::pair<uint32_t, uint32_t>> rechained;
  for (size_t k = 0; k < moved.size(); ++k) {
    const uint32_t v = moved[k];
    g->nodes[v].lane = side;
    if (k) g->AddEdge(moved[k - 1], v, g->queue_gap, EdgeKind::kStream);
    const uint32_t p = kept(prev, v), q = kept(next, v);
    // A download needs the data the op before it produced; an upload is
    // needed by the op after it.
    if (p != kNone && g->nodes[v].copy != CopyDirection::kHostToDevice)
      g->AddEdge(p, v, 0, EdgeKind::kCrossStream);
    if (q != kNone && g->nodes[v].copy == CopyDirection::kHostToDevice)
      g->AddEdge(v, q, 0, EdgeKind::kCrossStream);
    if (p != kNone && q != kNone && rechained.insert({p, q}).second)
      g->AddEdge(p, q, g->queue_gap, EdgeKind::kStream);
  }
  // The host no longer waits for the moved copies (non_blocking copies).
  for (Edge& e : g->edges) {
    if (e.kind == EdgeKind::kBlock && sel.count(e.from)) e.enabled = false;
  }
  Status st = g->Finalize();
  return st.ok() ? static_cast<int>(moved.size()) : 0;
}

int CudaGraph(Graph* g, const std::vector<HostSpan>& spans, int64_t graph_launch_ns,
              int64_t max_gap_ns) {
  // What a capture holds: on every launching thread (PyTorch's autograd
  // thread launches the backward pass of the same step), each run of
  // non-blocking calls in a span with at most kSegmentGap of CPU time between
  // them; eager Python between such runs (an optimizer step, logging) stays.
  std::vector<std::pair<int64_t, int64_t>> sorted;
  for (const HostSpan& s : spans) sorted.push_back({s.start_ns, s.end_ns});
  std::sort(sorted.begin(), sorted.end());
  auto span_of = [&](int64_t t) -> int64_t {
    auto it = std::partition_point(sorted.begin(), sorted.end(),
                                   [&](const auto& s) { return s.second < t; });
    if (it == sorted.end() || it->first > t) return -1;
    return it - sorted.begin();
  };
  int n = 0;
  for (uint32_t v = 0; v < g->nodes.size(); ++v) {
    Node& node = g->nodes[v];
    if (node.kind != NodeKind::kCall || node.block != BlockKind::kNone) continue;
    const int64_t span = span_of(node.measured_start);
    if (span < 0) continue;
    // Inside a segment: the previous call on the thread is in the same span,
    // not blocking, and close.
    Edge* thread_edge = nullptr;
    for (uint32_t k = g->in_begin[v]; k < g->in_begin[v + 1]; ++k) {
      Edge& e = g->edges[g->in_edges[k]];
      if (e.kind == EdgeKind::kThread) thread_edge = &e;
    }
    const Node* prev = thread_edge ? &g->nodes[thread_edge->from] : nullptr;
    const bool inside = prev && prev->block == BlockKind::kNone &&
                        span_of(prev->measured_start) == span && thread_edge->delay <= max_gap_ns;
    if (inside) {
      node.duration = 0;
      thread_edge->delay = 0;
    } else {
      node.duration = std::min(node.duration, graph_launch_ns);  // the segment's graph launch
    }
    ++n;
  }
  return n;
}

int ScaleBatch(Graph* g, const std::vector<int32_t>& step_indices, double n,
               const std::vector<HostSpan>& data_spans) {
  std::set<int32_t> sel(step_indices.begin(), step_indices.end());
  std::vector<uint32_t> ops;
  for (uint32_t v = 0; v < g->nodes.size(); ++v) {
    if (g->nodes[v].kind == NodeKind::kOp && sel.count(g->nodes[v].step)) ops.push_back(v);
  }
  int changed = ScaleOps(g, ops, n);
  for (const HostSpan& s : data_spans) changed += GrowHostTime(g, s, n);
  return changed;
}

int ScaleHost(Graph* g, double factor) {
  int n = 0;
  auto scaled = [&](int64_t v) { return static_cast<int64_t>(std::llround(v * factor)); };
  for (Node& x : g->nodes) {
    if (x.kind != NodeKind::kCall || x.duration <= 0) continue;
    x.duration = scaled(x.duration);
    ++n;
  }
  for (Edge& e : g->edges) {
    if ((e.kind != EdgeKind::kThread && e.kind != EdgeKind::kCrossThread) || e.delay <= 0) continue;
    e.delay = scaled(e.delay);
    ++n;
  }
  return n;
}

std::map<int32_t, int64_t> RemoveTracerTime(Graph* g, const TraceModel& m) {
  std::map<int32_t, int64_t> removed;
  const auto& apis = m.apis();
  for (Edge& e : g->edges) {
    if (e.kind != EdgeKind::kThread || e.delay <= 0) continue;
    const Node& to = g->nodes[e.to];
    if (to.kind != NodeKind::kCall || to.index >= apis.size()) continue;
    const int64_t cut = std::min<int64_t>(e.delay, apis[to.index].tracer_ns);
    if (cut <= 0) continue;
    e.delay -= cut;
    removed[to.step] += cut;
  }
  return removed;
}

StatusOr<WhatIfEngine> WhatIfEngine::Build(const TraceModel& m, const StepSet& steps, int device,
                                           int64_t untraced_step_ns, bool keep_tracer_time) {
  WhatIfEngine e;
  e.steps_ = &steps;
  e.device_ = device;
  GraphOptions opt;
  std::vector<int> steady;
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    if (steps.steps[k].steady()) steady.push_back(static_cast<int>(k));
  }
  if (static_cast<int>(steady.size()) > kMaxSteps) {
    const size_t mid = steady.size() / 2;
    e.first_ = steady[mid - kMaxSteps / 2];
    e.last_ = steady[mid + kMaxSteps / 2 - 1];
    const Step& before = steps.steps[e.first_ > 0 ? e.first_ - 1 : 0];
    opt.window_start = std::min(before.range_start_ns, before.start_ns);
    opt.window_end = steps.steps[e.last_].range_end_ns;
  }
  ASSIGN_OR_RETURN(e.g_, BuildGraph(m, OpSteps(m, steps), steps, opt));
  e.base_replay_ = Replay(e.g_);
  e.base_ = StepDurations(e.g_, e.base_replay_, steps, device, e.first_, e.last_);
  e.measured_ = StepDurations(e.g_, Measured(e.g_), steps, device, e.first_, e.last_);
  e.traced_base_median_ = e.base_.median;
  if (untraced_step_ns == kUntracedMeasured) {
    untraced_step_ns = 0;
    const std::optional<UntracedSteps> u = MeasuredUntracedSteps(m);
    if (u && u->UsableFor(e.base_.median)) {
      untraced_step_ns = u->median_ns;
      e.untraced_measured_steps_ = u->steps;
    }
  }
  if (untraced_step_ns > 0 && e.base_.median > 0) {
    e.untraced_step_ns_ = untraced_step_ns;
    // The host is taken to run slower (or faster) by the same factor as the step: the
    // least change of host speed that can account for the whole difference (the
    // simulated step is at least the factor times the traced one), and all of it
    // where the host bounds the step. A partly GPU-bound step then stays off the
    // untraced step, the rest unexplained. Solving for the exact untraced step
    // instead would blame every difference on the host however little of the step
    // it holds (a GPU-bound fp32 step 0.3% faster untraced: host time x1/64).
    e.host_scale_ = static_cast<double>(untraced_step_ns) / e.base_.median;
    ScaleHost(&e.g_, e.host_scale_);
    e.base_replay_ = Replay(e.g_);
    e.base_ = StepDurations(e.g_, e.base_replay_, steps, device, e.first_, e.last_);
  } else if (!keep_tracer_time) {
    const std::map<int32_t, int64_t> removed = RemoveTracerTime(&e.g_, m);
    std::vector<int64_t> per_step;
    for (int k = std::max(e.first_, 0); k <= std::min<int>(e.last_, steps.steps.size() - 1); ++k) {
      if (!steps.steps[k].steady()) continue;
      auto it = removed.find(k);
      per_step.push_back(it == removed.end() ? 0 : it->second);
    }
    e.tracer_ns_per_step_ = per_step.empty() ? 0 : MedianNs(per_step);
    if (!removed.empty()) {
      e.base_replay_ = Replay(e.g_);
      e.base_ = StepDurations(e.g_, e.base_replay_, steps, device, e.first_, e.last_);
    }
  }
  return e;
}

int WhatIfEngine::MedianStep() const {
  std::vector<std::pair<int64_t, int>> v;
  for (size_t k = 1; k < base_.duration.size(); ++k) {
    const int ki = static_cast<int>(k);
    if (base_.duration[k] >= 0 && steps_->steps[k].steady() && ki >= first_ && ki <= last_)
      v.push_back({base_.duration[k], static_cast<int>(k)});
  }
  if (v.empty()) return -1;
  return LowerMedian(&v).second;
}

Prediction WhatIfEngine::Price(const std::function<int(Graph*)>& transform) const {
  Prediction p;
  p.measured_ns = measured_.median;
  p.base_ns = base_.median;
  Graph g = g_;
  p.changed = transform(&g);
  if (p.changed == 0) {
    p.fixed_ns = p.base_ns;
    return p;
  }
  const ReplayResult r = Replay(g);
  const StepTimes t = StepDurations(g, r, *steps_, device_, first_, last_);
  p.fixed_ns = t.median;
  // The median step once fixed, and the lane that holds most of its path.
  std::vector<std::pair<int64_t, int>> v;
  for (size_t k = 1; k < t.duration.size(); ++k) {
    const int ki = static_cast<int>(k);
    if (t.duration[k] >= 0 && steps_->steps[k].steady() && ki >= first_ && ki <= last_)
      v.push_back({t.duration[k], ki});
  }
  if (!v.empty()) {
    const CriticalPath path = TraceCriticalPath(g, r, t, LowerMedian(&v).second);
    p.host_bound_after = path.host_bound;
    if (!path.lanes.empty() && path.duration > 0) {
      p.bound_after =
          g.lanes[path.lanes[0].first].Name(g) + " " +
          std::to_string(static_cast<int>(100.0 * path.lanes[0].second / path.duration + 0.5)) +
          "%";
    }
  }
  return p;
}

}  // namespace stepscope::whatif
