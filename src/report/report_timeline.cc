// The timeline of one step for the report: recorded events copied as they
// are (no analysis), grouped into lanes the way Nsight Systems shows them:
// one lane per (GPU, stream), under it the stream's GPU-side annotations
// (Kineto's gpu_user_annotation ranges, stored as NVTX rows whose tid is the
// stream: never a host thread), then per launching thread its NVTX ranges and
// its CUDA API calls. Capped at kMaxEvents; past the cap the shortest events
// are left out (counted in `dropped`), so the picture keeps what takes time.
// AddFindingMarks puts the findings' own intervals in the step (`analyze`'s:
// data-loading waits, blocking syncs, collective waits, ...) on a first lane.
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/model/steps.h"
#include "common/step_names.h"
#include "report/report_sources.h"

namespace stepscope {
namespace {

constexpr size_t kMaxEvents = 12000;

// The steady step nearest the median duration; else the longest complete step.
int PickStep(const StepSet& set) {
  int best = -1;
  double best_d = 0;
  for (size_t i = 0; i < set.steps.size(); ++i) {
    const Step& s = set.steps[i];
    if (!s.steady() || s.end_ns <= s.start_ns) continue;
    const double d = std::fabs(static_cast<double>(s.duration()) - set.stats.median);
    if (best < 0 || d < best_d) {
      best = static_cast<int>(i);
      best_d = d;
    }
  }
  if (best >= 0) return best;
  for (size_t i = 0; i < set.steps.size(); ++i) {
    const Step& s = set.steps[i];
    if (s.complete && s.end_ns > s.start_ns &&
        (best < 0 || s.duration() > set.steps[best].duration()))
      best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

Status CollectStepTimeline(const TraceModel& m, const ReportOptions& o, ReportData* d) {
  StepOptions so;
  so.range_regex = o.step_regex;
  ASSIGN_OR_RETURN(StepSet set, DetectSteps(m, so));
  const int k = PickStep(set);
  const int64_t origin = m.origin_ns();
  StepTimeline& t = d->timeline;
  // The step's GPU window and its host range; without steps, the GPU span of
  // the trace (every op), so a trace without steps still gets a timeline.
  int64_t gpu_lo = 0, gpu_hi = 0, lo = 0, hi = 0;
  std::map<uint32_t, bool> threads;  // launching threads (and the step's own)
  if (k >= 0) {
    const Step& step = set.steps[k];
    t.step = step.number;
    t.window = "step";
    gpu_lo = step.start_ns;
    gpu_hi = step.end_ns;
    lo = std::min(step.start_ns, step.range_start_ns);
    hi = std::max(step.end_ns, step.range_end_ns);
    threads[step.tid] = true;
  } else {
    if (m.gpu_ops().empty()) return OkStatus();
    gpu_lo = m.gpu_ops().front().start_ns;
    for (const GpuOp& op : m.gpu_ops()) {
      gpu_lo = std::min(gpu_lo, op.start_ns);
      gpu_hi = std::max(gpu_hi, op.end_ns);
    }
    if (gpu_hi <= gpu_lo) return OkStatus();
    t.window = "gpu_span";
    lo = gpu_lo;
    hi = gpu_hi;
  }
  t.gpu_start_ns = gpu_lo - origin;
  t.gpu_end_ns = gpu_hi - origin;
  t.start_ns = lo - origin;
  t.end_ns = hi - origin;

  std::map<std::string, int32_t> names;
  auto name_id = [&](const std::string& n) {
    auto [it, added] = names.emplace(n, static_cast<int32_t>(t.names.size()));
    if (added) t.names.push_back(n);
    return it->second;
  };
  std::map<std::pair<uint32_t, uint32_t>, std::vector<StepTimeline::Event>>
      gpu;  // (device, stream)
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.end_ns <= gpu_lo || op.start_ns >= gpu_hi) continue;
    StepTimeline::Event e;
    e.start_ns = op.start_ns - origin;
    e.end_ns = op.end_ns - origin;
    e.name = name_id(m.OpName(op));
    e.cat = OpCategoryName(op.category);
    gpu[{op.device, op.stream}].push_back(std::move(e));
    if (op.api != kNone) threads[m.apis()[op.api].tid] = true;
  }
  // GPU-side annotations: NVTX rows of the gpu_user_annotation domain, whose
  // tid is the stream. On the stream's device (the first that has the stream
  // in the trace; device 0 when none does).
  std::map<StringId, bool> gpu_side;  // domain -> is the GPU-side domain
  auto is_gpu_side = [&](StringId domain) {
    auto [it, added] = gpu_side.emplace(domain, false);
    if (added) it->second = domain != kNoString && m.String(domain) == kGpuSideDomain;
    return it->second;
  };
  std::map<uint32_t, uint32_t> stream_device;
  for (const GpuOp& op : m.gpu_ops()) stream_device.emplace(op.stream, op.device);
  std::map<std::pair<uint32_t, uint32_t>, std::vector<StepTimeline::Event>> annotations;
  for (const NvtxRecord& r : m.nvtx()) {
    if (r.kind == NvtxKind::kMark || !is_gpu_side(r.domain)) continue;
    const int64_t end = r.end_ns < 0 ? m.end_ns() : r.end_ns;
    if (end <= lo || r.start_ns >= hi) continue;
    auto dev = stream_device.find(r.tid);
    annotations[{dev == stream_device.end() ? 0u : dev->second, r.tid}].push_back(
        {0, std::max(r.start_ns, lo) - origin, std::min(end, hi) - origin,
         name_id(m.String(r.name)), r.depth, "gpu_annotation", ""});
  }
  std::vector<std::pair<StepTimeline::Lane, std::vector<StepTimeline::Event>>> lanes;
  auto add_annotations = [&](std::pair<uint32_t, uint32_t> key) {
    auto it = annotations.find(key);
    if (it == annotations.end()) return;
    lanes.push_back({{"GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second) +
                          " annotations",
                      "gpu_annotation"},
                     std::move(it->second)});
    annotations.erase(it);
  };
  for (auto& [key, ev] : gpu) {
    lanes.push_back(
        {{"GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second), "gpu"},
         std::move(ev)});
    add_annotations(key);
  }
  while (!annotations.empty()) add_annotations(annotations.begin()->first);
  for (const auto& [tid, unused] : threads) {
    std::vector<StepTimeline::Event> nvtx, api;
    for (const NvtxRecord& r : m.nvtx()) {
      if (r.tid != tid || r.kind == NvtxKind::kMark || is_gpu_side(r.domain)) continue;
      const int64_t end = r.end_ns < 0 ? m.end_ns() : r.end_ns;
      if (end <= lo || r.start_ns >= hi) continue;
      nvtx.push_back({0, std::max(r.start_ns, lo) - origin, std::min(end, hi) - origin,
                      name_id(m.String(r.name)), r.depth, "nvtx", ""});
    }
    for (size_t i = 0; i < m.apis().size(); ++i) {
      const ApiRecord& a = m.apis()[i];
      if (a.tid != tid || a.end_ns <= lo || a.start_ns >= hi) continue;
      api.push_back({0, a.start_ns - origin, a.end_ns - origin, name_id(m.String(a.name)), 0,
                     m.IsBlockingApiName(a.name) ? "sync" : "api", ""});
    }
    const std::string who = "thread " + std::to_string(tid);
    if (!nvtx.empty()) lanes.push_back({{who + " NVTX", "nvtx"}, std::move(nvtx)});
    if (!api.empty()) lanes.push_back({{who + " CUDA API", "api"}, std::move(api)});
  }
  std::vector<StepTimeline::Event> all;
  for (size_t i = 0; i < lanes.size(); ++i) {
    t.lanes.push_back(lanes[i].first);
    for (StepTimeline::Event& e : lanes[i].second) {
      e.lane = static_cast<int32_t>(i);
      all.push_back(std::move(e));
    }
  }
  if (all.size() > kMaxEvents) {
    std::nth_element(all.begin(), all.begin() + kMaxEvents, all.end(),
                     [](const StepTimeline::Event& a, const StepTimeline::Event& b) {
                       return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
                     });
    t.dropped = static_cast<int64_t>(all.size() - kMaxEvents);
    all.resize(kMaxEvents);
  }
  t.events = std::move(all);
  return OkStatus();
}

namespace {

// What a finding's mark says on the timeline.
std::string MarkLabel(const std::string& rule) {
  static const std::map<std::string, std::string> kLabels = {
      {"data_loading", "data loading"},     {"host_sync", "sync"},
      {"sync_memcpy", "sync copy"},         {"data_dependent_sync", "sync (data-dependent)"},
      {"pageable_memcpy", "pageable copy"}, {"collective_wait", "collective wait"},
      {"host_wait", "host wait"},           {"launch_bound", "launch-bound"},
      {"offload_copies", "offload copy"},   {"fp32_gemm", "fp32 GEMM"}};
  auto it = kLabels.find(rule);
  return it != kLabels.end() ? it->second : rule;
}

}  // namespace

void AddFindingMarks(const TraceModel& m, const std::vector<Finding>& findings, StepTimeline* t) {
  if (t->window.empty()) return;
  const int64_t origin = m.origin_ns();
  const int64_t lo = t->start_ns + origin, hi = t->end_ns + origin;
  // Per rule, the intervals in the window, merged where they touch.
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> by_rule;
  std::vector<std::string> order;  // rules in the findings' order (by cost)
  for (const Finding& f : findings) {
    if (!f.reported) continue;
    std::vector<std::pair<int64_t, int64_t>> spans;
    auto add = [&](int64_t a, int64_t b) {
      a = std::max(a, lo);
      b = std::min(b, hi);
      if (b > a) spans.push_back({a, b});
    };
    for (const Finding::Span& s : f.host_spans) add(s.start_ns, s.end_ns);
    for (uint32_t i : f.apis)
      if (i < m.apis().size()) add(m.apis()[i].start_ns, m.apis()[i].end_ns);
    for (uint32_t i : f.ops)
      if (i < m.gpu_ops().size()) add(m.gpu_ops()[i].start_ns, m.gpu_ops()[i].end_ns);
    if (spans.empty()) continue;
    auto [it, added] = by_rule.emplace(f.rule, std::vector<std::pair<int64_t, int64_t>>{});
    if (added) order.push_back(f.rule);
    it->second.insert(it->second.end(), spans.begin(), spans.end());
  }
  if (order.empty()) return;
  // The findings lane goes first: every other lane moves down one.
  for (StepTimeline::Event& e : t->events) ++e.lane;
  for (StepTimeline::Counter& c : t->counters) ++c.lane;
  t->lanes.insert(t->lanes.begin(), {"findings (stepscope analyze)", "finding"});
  int32_t depth = 0;
  for (const std::string& rule : order) {
    std::vector<std::pair<int64_t, int64_t>>& v = by_rule[rule];
    std::sort(v.begin(), v.end());
    const int32_t name = static_cast<int32_t>(t->names.size());
    t->names.push_back(MarkLabel(rule));
    int64_t a = v[0].first, b = v[0].second;
    auto flush = [&] {
      t->events.push_back({0, a - origin, b - origin, name, depth, "finding", rule});
    };
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i].first <= b) {
        b = std::max(b, v[i].second);
      } else {
        flush();
        a = v[i].first;
        b = v[i].second;
      }
    }
    flush();
    ++depth;  // one row per rule
  }
}

}  // namespace stepscope
