// The timeline of one step for the report: recorded events copied as they
// are (no analysis), grouped into lanes the way Nsight Systems shows them:
// one lane per (GPU, stream), then per launching thread its NVTX ranges and
// its CUDA API calls. Capped at kMaxEvents; past the cap the shortest events
// are left out (counted in `dropped`), so the picture keeps what takes time.
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/steps.h"
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
  if (k < 0) return OkStatus();
  const Step& step = set.steps[k];
  const int64_t origin = m.origin_ns();
  StepTimeline& t = d->timeline;
  t.step = step.number;
  t.gpu_start_ns = step.start_ns - origin;
  t.gpu_end_ns = step.end_ns - origin;
  const int64_t lo = std::min(step.start_ns, step.range_start_ns);
  const int64_t hi = std::max(step.end_ns, step.range_end_ns);
  t.start_ns = lo - origin;
  t.end_ns = hi - origin;

  std::map<std::string, int32_t> names;
  auto name_id = [&](const std::string& n) {
    auto [it, added] = names.emplace(n, static_cast<int32_t>(t.names.size()));
    if (added) t.names.push_back(n);
    return it->second;
  };
  std::map<std::pair<uint32_t, uint32_t>, std::vector<StepTimeline::Event>>
      gpu;                           // (device, stream)
  std::map<uint32_t, bool> threads;  // launching threads (and the step's own)
  threads[step.tid] = true;
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.end_ns <= step.start_ns || op.start_ns >= step.end_ns) continue;
    StepTimeline::Event e;
    e.start_ns = op.start_ns - origin;
    e.end_ns = op.end_ns - origin;
    e.name = name_id(m.OpName(op));
    e.cat = OpCategoryName(op.category);
    gpu[{op.device, op.stream}].push_back(std::move(e));
    if (op.api != kNone) threads[m.apis()[op.api].tid] = true;
  }
  std::vector<std::pair<StepTimeline::Lane, std::vector<StepTimeline::Event>>> lanes;
  for (auto& [key, ev] : gpu) {
    lanes.push_back(
        {{"GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second), "gpu"},
         std::move(ev)});
  }
  for (const auto& [tid, unused] : threads) {
    std::vector<StepTimeline::Event> nvtx, api;
    for (const NvtxRecord& r : m.nvtx()) {
      if (r.tid != tid || r.kind == NvtxKind::kMark) continue;
      const int64_t end = r.end_ns < 0 ? m.end_ns() : r.end_ns;
      if (end <= lo || r.start_ns >= hi) continue;
      nvtx.push_back({0, std::max(r.start_ns, lo) - origin, std::min(end, hi) - origin,
                      name_id(m.String(r.name)), r.depth, "nvtx"});
    }
    for (size_t i = 0; i < m.apis().size(); ++i) {
      const ApiRecord& a = m.apis()[i];
      if (a.tid != tid || a.end_ns <= lo || a.start_ns >= hi) continue;
      api.push_back({0, a.start_ns - origin, a.end_ns - origin, name_id(m.String(a.name)), 0,
                     m.IsBlockingApiName(a.name) ? "sync" : "api"});
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

}  // namespace stepscope
