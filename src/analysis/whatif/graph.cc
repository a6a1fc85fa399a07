#include "analysis/whatif/graph.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/model/gaps.h"
#include "common/stats.h"

namespace stepscope::whatif {
namespace {

// The upper median (common/stats.h says why this side), `fallback` when empty.
int64_t UpperMedianOr(std::vector<int64_t> v, int64_t fallback) {
  return v.empty() ? fallback : UpperMedian(&v);
}

}  // namespace

const char* EdgeKindName(EdgeKind k) {
  switch (k) {
    case EdgeKind::kThread:
      return "thread";
    case EdgeKind::kCrossThread:
      return "cross-thread";
    case EdgeKind::kLaunch:
      return "launch";
    case EdgeKind::kStream:
      return "stream";
    case EdgeKind::kCrossStream:
      return "cross-stream";
    case EdgeKind::kBlock:
      return "block";
  }
  return "?";
}

namespace {
// A thread's name as the trace gives it, without the "thread TID (NAME)" wrapper of
// torch.profiler's traces; "" for a name that only repeats the id ("thread TID").
std::string ShortThreadName(uint32_t tid, const std::string& name) {
  const std::string id = "thread " + std::to_string(tid);
  const std::string wrap = id + " (";
  if (name.size() > wrap.size() + 1 && name.compare(0, wrap.size(), wrap) == 0 &&
      name.back() == ')') {
    return name.substr(wrap.size(), name.size() - wrap.size() - 1);
  }
  return name == id ? "" : name;
}
}  // namespace

std::string Lane::Name(const Graph& g) const {
  if (host) {
    auto it = g.thread_names.find(id);
    std::string label = it == g.thread_names.end() ? "" : ShortThreadName(id, it->second);
    if (g.pid != 0 && id == g.pid) label += label.empty() ? "main" : ", main";
    return "host thread " + std::to_string(id) + (label.empty() ? "" : " (" + label + ")");
  }
  if (id == kSideStreamId) return "the side stream (device " + std::to_string(device) + ")";
  return "GPU stream " + std::to_string(id) + " (device " + std::to_string(device) + ")";
}

Status Graph::Finalize() {
  const size_t n = nodes.size();
  in_begin.assign(n + 1, 0);
  for (const Edge& e : edges) ++in_begin[e.to + 1];
  for (size_t i = 0; i < n; ++i) in_begin[i + 1] += in_begin[i];
  in_edges.assign(edges.size(), 0);
  std::vector<uint32_t> fill(in_begin.begin(), in_begin.end() - 1);
  for (uint32_t k = 0; k < edges.size(); ++k) in_edges[fill[edges[k].to]++] = k;
  // Kahn's algorithm over events: 2v is node v's start, 2v + 1 its end. A
  // launch edge leaves a start, a block edge reaches an end (a blocking copy
  // launches the op it then waits for). Ties go by measured time.
  const size_t ne = 2 * n;
  auto src = [&](const Edge& e) { return 2 * e.from + (e.from_start() ? 0 : 1); };
  auto dst = [&](const Edge& e) { return 2 * e.to + (e.to_end() ? 1 : 0); };
  std::vector<uint32_t> out_begin(ne + 1, 0);
  for (const Edge& e : edges) ++out_begin[src(e) + 1];
  for (uint32_t v = 0; v < n; ++v) ++out_begin[2 * v + 1];  // start -> end
  for (size_t i = 0; i < ne; ++i) out_begin[i + 1] += out_begin[i];
  std::vector<uint32_t> out(out_begin[ne]);
  std::vector<uint32_t> ofill(out_begin.begin(), out_begin.end() - 1);
  std::vector<uint32_t> indeg(ne, 0);
  for (const Edge& e : edges) {
    out[ofill[src(e)]++] = dst(e);
    ++indeg[dst(e)];
  }
  for (uint32_t v = 0; v < n; ++v) {
    out[ofill[2 * v]++] = 2 * v + 1;
    ++indeg[2 * v + 1];
  }
  auto time = [&](uint32_t ev) {
    return ev & 1 ? nodes[ev / 2].measured_end : nodes[ev / 2].measured_start;
  };
  auto later = [&](uint32_t a, uint32_t b) {
    return time(a) != time(b) ? time(a) > time(b) : a > b;
  };
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < ne; ++i) {
    if (indeg[i] == 0) ready.push_back(i);
  }
  std::make_heap(ready.begin(), ready.end(), later);
  order.clear();
  order.reserve(ne);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    const uint32_t v = ready.back();
    ready.pop_back();
    order.push_back(v);
    for (uint32_t k = out_begin[v]; k < out_begin[v + 1]; ++k) {
      if (--indeg[out[k]] == 0) {
        ready.push_back(out[k]);
        std::push_heap(ready.begin(), ready.end(), later);
      }
    }
  }
  if (order.size() != ne) {
    // Input, not a bug: op times that contradict their order (found by the fuzz campaign,
    // issue 36: kernels whose start_ns is text) close a cycle. Exit 2, one line.
    return InvalidInput("what-if graph has a cycle (" + std::to_string(ne - order.size()) +
                        " events); the trace's timestamps are inconsistent");
  }
  return OkStatus();
}

namespace {

// A wait of a blocking call for an op.
struct Wait {
  uint32_t call;
  uint32_t op;
};
// A thread that handed over to another thread in a gap of its own.
struct Handover {
  size_t thread_edge;  // of the thread that handed over
  uint32_t other;      // the other thread's first call in the gap
  uint32_t prev;       // the call before the gap
};

// BuildGraph's steps, in order, and what they hand each other.
class GraphBuilder {
 public:
  GraphBuilder(const TraceModel& m, const std::vector<int32_t>& op_step, const StepSet& steps,
               const GraphOptions& opt)
      : m(m), op_step(op_step), steps(steps), opt(opt) {}

  StatusOr<Graph> Build() {
    g.main_tid = m.main_tid();
    g.pid = m.pid();
    g.call_node.assign(m.apis().size(), kNone);
    g.op_node.assign(m.gpu_ops().size(), kNone);
    ClassifyBlocking();
    AddNodes();
    OrderLanes();
    MeasureLaunchLatency();
    AddOpEdges();
    AddHostEdges();
    DiscountHandovers();
    AddBlockEdges();
    MarkQueueFullLaunches();
    RETURN_IF_ERROR(g.Finalize());
    return std::move(g);
  }

 private:
  // Which calls block, and on what.
  void ClassifyBlocking() {
    const auto& apis = m.apis();
    const auto& ops = m.gpu_ops();
    block.assign(apis.size(), BlockKind::kNone);
    for (size_t i = 0; i < apis.size(); ++i) {
      if (m.IsBlockingApiName(apis[i].name)) block[i] = BlockKind::kSync;
    }
    own_op.assign(apis.size(), kNone);
    for (size_t i = 0; i < ops.size(); ++i) {
      const GpuOp& o = ops[i];
      if (o.api == kNone) continue;
      if (o.kind == GpuOpKind::kMemcpy) {
        const MemcpyRecord& r = m.memcpys()[o.index];
        own_op[o.api] = static_cast<uint32_t>(i);
        if (!r.is_async) {
          block[o.api] = BlockKind::kSyncCopy;
        } else if (IsPageableCopy(r)) {
          block[o.api] = BlockKind::kPageableCopy;
        }
      } else if (o.kind == GpuOpKind::kMemset) {
        own_op[o.api] = static_cast<uint32_t>(i);
        if (!m.memsets()[o.index].is_async) block[o.api] = BlockKind::kSyncCopy;
      }
    }
    // Sync records name the stream a synchronization waited on.
    for (const SyncRecord& s : m.syncs()) {
      const uint32_t a = s.correlation ? m.ApiByCorrelation(s.correlation) : kNone;
      if (a == kNone) continue;
      sync_by_api[a] = &s;
      if (s.type != SyncType::kStreamWaitEvent) block[a] = BlockKind::kSync;
    }
  }

  // The nodes: calls in the window, then their ops (and ops without a call in the
  // window), each on its lane.
  void AddNodes() {
    const auto& apis = m.apis();
    const auto& ops = m.gpu_ops();
    launches.assign(apis.size(), 0);
    for (const GpuOp& o : ops) {
      if (o.api != kNone) launches[o.api] = 1;
    }
    std::map<uint32_t, uint32_t> thread_lane;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> stream_lane;  // (device, stream)
    for (size_t i = 0; i < apis.size(); ++i) {
      const ApiRecord& a = apis[i];
      if (a.start_ns < opt.window_start || a.start_ns > opt.window_end) continue;
      auto [it, fresh] = thread_lane.try_emplace(a.tid, static_cast<uint32_t>(g.lanes.size()));
      if (fresh) {
        g.lanes.push_back({true, a.tid, 0});
        if (!m.ThreadName(a.tid).empty()) g.thread_names[a.tid] = m.ThreadName(a.tid);
      }
      if (launches[i]) launching_thread[a.tid] = true;
      Node n;
      n.kind = NodeKind::kCall;
      n.block = block[i];
      n.index = static_cast<uint32_t>(i);
      n.lane = it->second;
      n.step = steps.AtHostTime(a.start_ns);
      n.measured_start = a.start_ns;
      n.measured_end = std::max(a.end_ns, a.start_ns);
      n.duration = n.measured_end - n.measured_start;
      g.call_node[i] = static_cast<uint32_t>(g.nodes.size());
      g.nodes.push_back(n);
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const GpuOp& o = ops[i];
      if (o.api != kNone ? g.call_node[o.api] == kNone
                         : o.start_ns < opt.window_start || o.start_ns > opt.window_end) {
        continue;
      }
      auto [it, fresh] =
          stream_lane.try_emplace({o.device, o.stream}, static_cast<uint32_t>(g.lanes.size()));
      if (fresh) g.lanes.push_back({false, o.stream, o.device});
      Node n;
      n.kind = NodeKind::kOp;
      n.index = static_cast<uint32_t>(i);
      n.lane = it->second;
      n.step = i < op_step.size() ? op_step[i] : -1;
      n.measured_start = o.start_ns;
      n.measured_end = std::max(o.end_ns, o.start_ns);
      n.duration = n.measured_end - n.measured_start;
      if (o.kind == GpuOpKind::kMemcpy) {
        const CopyKind k = m.memcpys()[o.index].copy_kind;
        n.copy = k == CopyKind::kHostToDevice   ? CopyDirection::kHostToDevice
                 : k == CopyKind::kDeviceToHost ? CopyDirection::kDeviceToHost
                                                : CopyDirection::kNone;
      }
      g.op_node[i] = static_cast<uint32_t>(g.nodes.size());
      g.nodes.push_back(n);
    }
  }

  // Per lane, its nodes in order (calls by start; ops by start = stream order).
  void OrderLanes() {
    lane_nodes.assign(g.lanes.size(), {});
    for (uint32_t v = 0; v < g.nodes.size(); ++v) lane_nodes[g.nodes[v].lane].push_back(v);
    for (auto& ln : lane_nodes) {
      std::stable_sort(ln.begin(), ln.end(), [&](uint32_t a, uint32_t b) {
        return g.nodes[a].measured_start < g.nodes[b].measured_start;
      });
    }
  }

  // The typical launch latency and queued-op gap; which ops the launch bounded.
  void MeasureLaunchLatency() {
    const auto& apis = m.apis();
    const auto& ops = m.gpu_ops();
    // Typical launch latency (ops that started well after their predecessor on
    // the stream, so the launch bounded them) and queued-op gap.
    std::vector<int64_t> lat, qgap;
    prev_on_stream.assign(g.nodes.size(), kNone);
    for (size_t l = 0; l < g.lanes.size(); ++l) {
      if (g.lanes[l].host) continue;
      const auto& ln = lane_nodes[l];
      for (size_t k = 1; k < ln.size(); ++k) prev_on_stream[ln[k]] = ln[k - 1];
    }
    // Launch latency from ops launched onto an empty stream.
    std::vector<int64_t> gap_of(ops.size(), INT64_MAX);
    lat_of.assign(ops.size(), -1);
    std::vector<int64_t> prev_end(ops.size(), INT64_MIN);
    for (size_t i = 0; i < ops.size(); ++i) {
      const uint32_t v = g.op_node[i];
      if (v == kNone) continue;
      const Node& n = g.nodes[v];
      const uint32_t p = prev_on_stream[v];
      if (p != kNone) {
        prev_end[i] = g.nodes[p].measured_end;
        gap_of[i] = n.measured_start - prev_end[i];
      }
      if (ops[i].api == kNone) continue;
      lat_of[i] = std::max<int64_t>(0, n.measured_start - apis[ops[i].api].start_ns);
      if (prev_end[i] != INT64_MIN && apis[ops[i].api].start_ns >= prev_end[i])
        lat.push_back(lat_of[i]);
    }
    const int64_t typical_latency = UpperMedianOr(lat, 5'000);
    // An op is launch-bound when, launched with the typical latency, it would
    // have found its stream empty; else it was queued behind its predecessor.
    launch_bound.assign(ops.size(), 0);
    for (size_t i = 0; i < ops.size(); ++i) {
      if (g.op_node[i] == kNone) continue;
      if (ops[i].api == kNone || prev_end[i] == INT64_MIN) {
        launch_bound[i] = ops[i].api != kNone;
        continue;
      }
      launch_bound[i] = apis[ops[i].api].start_ns + typical_latency > prev_end[i] &&
                        gap_of[i] > opt.queued_gap_max_ns;
      if (!launch_bound[i] && gap_of[i] >= 0 && gap_of[i] <= opt.queued_gap_max_ns)
        qgap.push_back(gap_of[i]);
    }
    g.launch_latency = typical_latency;
    g.queue_gap = UpperMedianOr(qgap, 1'000);
  }

  // Op edges: stream order, launch, unexplained cross-stream waits.
  void AddOpEdges() {
    const auto& ops = m.gpu_ops();
    // Ends of all ops per device, sorted, for the cross-stream search.
    for (uint32_t v = 0; v < g.nodes.size(); ++v) {
      const Node& n = g.nodes[v];
      if (n.kind == NodeKind::kOp)
        ends_by_device[ops[n.index].device].push_back({n.measured_end, v});
    }
    for (auto& [d, v] : ends_by_device) std::sort(v.begin(), v.end());
    for (size_t i = 0; i < ops.size(); ++i) {
      const uint32_t v = g.op_node[i];
      if (v == kNone) continue;
      const Node& n = g.nodes[v];
      const uint32_t p = prev_on_stream[v];
      const int64_t gap = p == kNone ? -1 : n.measured_start - g.nodes[p].measured_end;
      const uint32_t api = ops[i].api;
      const int64_t l0 = lat_of[i] < 0 ? 0 : lat_of[i];
      const bool queued = !launch_bound[i];
      // A wait that neither the launch nor the stream order explains (an event
      // on another stream: the optimizer's kernels after DDP's all-reduces):
      // the op on another stream of the device that ended last, shortly before
      // this op started. kNone when there is none.
      auto other_stream = [&]() -> uint32_t {
        const auto& ends = ends_by_device[ops[i].device];
        auto it = std::partition_point(ends.begin(), ends.end(),
                                       [&](const auto& e) { return e.first <= n.measured_start; });
        while (it != ends.begin()) {
          --it;
          if (g.nodes[it->second].lane == n.lane) continue;
          if (n.measured_start - it->first > opt.cross_stream_min_ns) return kNone;
          return it->second;
        }
        return kNone;
      };
      // A queued op (launched before its predecessor ended) that still started
      // well after it waited for another stream: that op bounds it, so the wait
      // shrinks when the other stream's work does (else the measured gap stays,
      // a fixed delay on the stream).
      const uint32_t queued_wait =
          queued && gap > g.queue_gap + opt.cross_stream_min_ns ? other_stream() : kNone;
      if (p != kNone) {
        const int64_t d =
            queued && queued_wait == kNone ? std::max<int64_t>(gap, 0) : std::min(g.queue_gap, gap);
        g.AddEdge(p, v, d, EdgeKind::kStream);
      }
      if (queued_wait != kNone) {
        g.AddEdge(queued_wait, v, n.measured_start - g.nodes[queued_wait].measured_end,
                  EdgeKind::kCrossStream);
      }
      if (api == kNone) continue;
      int64_t launch_delay = queued ? std::min(g.launch_latency, l0) : l0;
      if (!queued && l0 > g.launch_latency + opt.cross_stream_min_ns) {
        // Waited for something else: the op on another stream.
        const uint32_t w = other_stream();
        if (w != kNone) {
          g.AddEdge(w, v, n.measured_start - g.nodes[w].measured_end, EdgeKind::kCrossStream);
          launch_delay = std::min(g.launch_latency, l0);
        }
      }
      g.AddEdge(g.call_node[api], v, launch_delay, EdgeKind::kLaunch);
    }
  }

  // Host edges: thread order, cross-thread order; the waits of blocking calls.
  void AddHostEdges() {
    const auto& apis = m.apis();
    const auto& ops = m.gpu_ops();
    std::vector<std::pair<int64_t, uint32_t>> call_ends;  // of launching threads
    for (uint32_t i = 0; i < apis.size(); ++i) {
      if (g.call_node[i] != kNone && launching_thread.count(apis[i].tid))
        call_ends.push_back({g.nodes[g.call_node[i]].measured_end, g.call_node[i]});
    }
    std::sort(call_ends.begin(), call_ends.end());
    std::vector<std::pair<int64_t, uint32_t>> call_starts;
    for (const auto& [end, v] : call_ends) call_starts.push_back({g.nodes[v].measured_start, v});
    std::sort(call_starts.begin(), call_starts.end());
    // Launch order on each stream, for "the last op launched before the sync".
    std::map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>>
        launched;  // lane -> (launch start, node)
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].api == kNone || g.op_node[i] == kNone) continue;
      launched[g.nodes[g.op_node[i]].lane].push_back({apis[ops[i].api].start_ns, g.op_node[i]});
    }
    for (auto& [l, v] : launched) std::sort(v.begin(), v.end());
    for (size_t l = 0; l < g.lanes.size(); ++l) {
      if (!g.lanes[l].host) continue;
      const auto& ln = lane_nodes[l];
      const bool launching = launching_thread.count(g.lanes[l].id) > 0;
      for (size_t k = 0; k < ln.size(); ++k) {
        const uint32_t v = ln[k];
        Node& n = g.nodes[v];
        const int64_t prev_end = k ? g.nodes[ln[k - 1]].measured_end : INT64_MIN;
        const size_t thread_edge = g.edges.size();
        if (k)
          g.AddEdge(ln[k - 1], v, std::max<int64_t>(0, n.measured_start - prev_end),
                    EdgeKind::kThread);
        if (launching && k) {
          // The call of another launching thread that ended last while this
          // thread was idle.
          auto it = std::partition_point(call_ends.begin(), call_ends.end(), [&](const auto& e) {
            return e.first <= n.measured_start;
          });
          while (it != call_ends.begin()) {
            --it;
            if (it->first <= prev_end) break;
            if (g.nodes[it->second].lane == n.lane) continue;
            g.AddEdge(it->second, v, n.measured_start - it->first, EdgeKind::kCrossThread);
            // The thread handed over: its own CPU time in the gap is what it
            // did before the other thread's first call; the rest was waiting.
            auto f = std::partition_point(call_starts.begin(), call_starts.end(),
                                          [&](const auto& e) { return e.first <= prev_end; });
            for (; f != call_starts.end() && f->first < n.measured_start; ++f) {
              if (g.nodes[f->second].lane == n.lane) continue;
              g.edges[thread_edge].delay = std::max<int64_t>(0, f->first - prev_end);
              handovers.push_back({thread_edge, f->second, ln[k - 1]});
              break;
            }
            break;
          }
        }
        if (n.block == BlockKind::kNone) continue;
        const uint32_t api = n.index;
        if (n.block != BlockKind::kSync) {
          if (own_op[api] != kNone && g.op_node[own_op[api]] != kNone)
            waits.push_back({v, g.op_node[own_op[api]]});
          continue;
        }
        // A synchronization waits for the last op launched before it on the
        // stream it names, else on every stream of the device(s).
        auto rec = sync_by_api.find(api);
        const SyncRecord* s = rec == sync_by_api.end() ? nullptr : rec->second;
        for (auto& [lane, v2] : launched) {
          if (s && s->stream != 0xffffffffu && s->type == SyncType::kStreamSynchronize &&
              g.lanes[lane].id != s->stream) {
            continue;
          }
          auto it = std::partition_point(v2.begin(), v2.end(),
                                         [&](const auto& e) { return e.first < n.measured_start; });
          if (it != v2.begin()) waits.push_back({v, std::prev(it)->second});
        }
      }
    }
  }

  // Handovers whose other thread waited for this one.
  void DiscountHandovers() {
    // Where the other thread's first call itself waited for this thread (its
    // cross-thread edge comes from the call before the gap), that wait was not
    // this thread's CPU time either: the thread handed over at once.
    std::unordered_map<uint32_t, const Edge*> cross_into;
    for (const Edge& e : g.edges) {
      if (e.kind == EdgeKind::kCrossThread) cross_into[e.to] = &e;
    }
    for (const Handover& h : handovers) {
      auto it = cross_into.find(h.other);
      if (it == cross_into.end() || it->second->from != h.prev) continue;
      Edge& e = g.edges[h.thread_edge];
      e.delay = std::max<int64_t>(0, e.delay - it->second->delay);
    }
  }

  // Block edges and the typical sync return latency.
  void AddBlockEdges() {
    // Block edges: return latency measured where the op bounded the call.
    std::unordered_map<uint32_t, int64_t> last_end;  // call -> latest end of what it waits for
    std::vector<int64_t> returns;
    for (const Wait& w : waits) {
      const int64_t end = g.nodes[w.op].measured_end;
      if (end > g.nodes[w.call].measured_end) continue;
      int64_t& e = last_end.try_emplace(w.call, INT64_MIN).first->second;
      e = std::max(e, end);
    }
    for (const auto& [call, op_end] : last_end) {
      const Node& n = g.nodes[call];
      if (op_end > n.measured_start && op_end <= n.measured_end)
        returns.push_back(n.measured_end - op_end);
    }
    g.sync_return = UpperMedianOr(returns, 5'000);
    for (const Wait& w : waits) {
      Node& n = g.nodes[w.call];
      const int64_t op_end = last_end[w.call];
      const int64_t this_end = g.nodes[w.op].measured_end;
      if (this_end > n.measured_end) continue;  // not what it waited for
      const bool waited = op_end > n.measured_start;
      // The op that ended last bounded the call: its return latency is the
      // measured one; the others get the typical value (they did not bind).
      const int64_t ret = waited && this_end == op_end
                              ? n.measured_end - op_end
                              : std::min(g.sync_return, n.measured_end - this_end);
      // The call's own time is what it would take without waiting.
      if (waited) n.duration = std::min(n.duration, std::min(g.sync_return, kMaxNonWaitingCallNs));
      g.AddEdge(w.op, w.call, ret, EdgeKind::kBlock);
    }
  }

  // Launches that waited for room in the GPU's queue.
  void MarkQueueFullLaunches() {
    const auto& apis = m.apis();
    // A launch that took far longer than its kind usually does and returned
    // just as an op of the device ended, waited for room in the GPU's queue
    // (the host was far ahead): it waits for that op, not for the CPU.
    std::unordered_map<StringId, std::vector<int64_t>> by_name;
    for (size_t i = 0; i < apis.size(); ++i) {
      if (g.call_node[i] != kNone && launches[i] && block[i] == BlockKind::kNone)
        by_name[apis[i].name].push_back(apis[i].end_ns - apis[i].start_ns);
    }
    std::unordered_map<StringId, int64_t> typical;
    // Typical: the 10th percentile (in a run far ahead of its GPU, most
    // launches may wait once the queue is full).
    for (auto& [name, v] : by_name) {
      std::nth_element(v.begin(), v.begin() + v.size() / 10, v.end());
      typical[name] = v[v.size() / 10];
    }
    for (size_t i = 0; i < apis.size(); ++i) {
      if (g.call_node[i] == kNone || !launches[i] || block[i] != BlockKind::kNone) continue;
      Node& n = g.nodes[g.call_node[i]];
      const int64_t t = typical[apis[i].name];
      if (n.duration < std::max(opt.queue_full_min_ns, 5 * t)) continue;
      bool found = false;
      for (const auto& [d, ends] : ends_by_device) {
        auto it = std::partition_point(ends.begin(), ends.end(),
                                       [&](const auto& e) { return e.first <= n.measured_end; });
        if (it == ends.begin()) continue;
        --it;
        if (n.measured_end - it->first > opt.queue_full_return_ns || it->first <= n.measured_start)
          continue;
        g.AddEdge(it->second, g.call_node[i], n.measured_end - it->first, EdgeKind::kBlock);
        found = true;
        break;
      }
      if (!found) continue;
      n.block = BlockKind::kQueueFull;
      n.duration = t;
    }
  }

  const TraceModel& m;
  const std::vector<int32_t>& op_step;
  const StepSet& steps;
  const GraphOptions& opt;
  Graph g;
  std::vector<BlockKind> block;                                 // per call
  std::vector<uint32_t> own_op;                                 // per call: a copy's own op
  std::unordered_map<uint32_t, const SyncRecord*> sync_by_api;  // the stream a sync waited on
  std::vector<char> launches;                                   // per call: it launched an op
  std::map<uint32_t, bool> launching_thread;
  std::vector<std::vector<uint32_t>> lane_nodes;  // per lane, by start
  std::vector<uint32_t> prev_on_stream;           // per node
  std::vector<int64_t> lat_of;                    // per op: its launch latency, -1 without a call
  std::vector<char> launch_bound;                 // per op
  // Ends of all ops per device, sorted, for the cross-stream search.
  std::map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>> ends_by_device;
  std::vector<Wait> waits;
  std::vector<Handover> handovers;
};

}  // namespace

StatusOr<Graph> BuildGraph(const TraceModel& m, const std::vector<int32_t>& op_step,
                           const StepSet& steps, const GraphOptions& opt) {
  return GraphBuilder(m, op_step, steps, opt).Build();
}

}  // namespace stepscope::whatif
