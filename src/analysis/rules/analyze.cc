// Analyze (rules.h): the analyzed windows, the rules' context, then every
// registered rule's detection, the pricing by replay, the host evidence, and
// the ranking.
#include <algorithm>

#include "analysis/model/timeline.h"
#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

// The device: the one asked for, else the busiest; -1 when it has no activity.
int PickDevice(const TraceModel& m, int asked) {
  int device = asked;
  if (device < 0 && m.active_devices().size() == 1)
    device = static_cast<int>(m.active_devices()[0]);
  if (device < 0 && !m.active_devices().empty()) {
    int64_t best = -1;
    for (uint32_t d : m.active_devices()) {
      const FlatTimeline& t = m.Timeline(static_cast<int>(d));
      const int64_t busy = t.Busy(t.first_ns(), t.last_ns());
      if (busy > best) {
        best = busy;
        device = static_cast<int>(d);
      }
    }
  }
  if (device >= 0 && std::find(m.active_devices().begin(), m.active_devices().end(),
                               static_cast<uint32_t>(device)) == m.active_devices().end()) {
    device = -1;  // asked for a device without activity
  }
  return device;
}

// The analyzed windows: the complete steps, else the GPU span, else the trace.
std::vector<Interval> AnalyzedWindows(const TraceModel& m, const FlatTimeline& tl, Analysis* a) {
  std::vector<Interval> windows;
  for (const Step& s : a->steps.steps) {
    if (!s.steady() || s.end_ns <= s.start_ns) continue;
    ++a->complete_steps;
    if (!windows.empty() && s.start_ns <= windows.back().end) {
      windows.back().end = std::max(windows.back().end, s.end_ns);
    } else {
      windows.push_back({s.start_ns, s.end_ns});
    }
  }
  if (windows.empty()) {
    if (!tl.empty()) {
      windows.push_back({tl.first_ns(), tl.last_ns()});
    } else if (m.end_ns() > m.origin_ns()) {
      windows.push_back({m.origin_ns(), m.end_ns()});
    }
  }
  return windows;
}

// Per api call: 1 a synchronous memcpy/memset, 2 an async memcpy to/from
// pageable memory or the stream synchronization of a pageable upload
// (PageableUploadSyncs), 0 otherwise (RuleContext::blocking_copy).
std::vector<uint8_t> BlockingCopies(const TraceModel& m, const std::vector<uint32_t>& upload_sync) {
  std::vector<uint8_t> v(m.apis().size(), 0);
  for (uint32_t s : upload_sync) {
    if (s != kNone) v[s] = 2;
  }
  for (const MemcpyRecord& r : m.memcpys()) {
    const uint32_t api = r.correlation ? m.ApiByCorrelation(r.correlation) : kNone;
    if (api == kNone) continue;
    if (r.is_async == 0) {
      v[api] = 1;
    } else if (IsPageableCopy(r)) {
      v[api] = 2;  // blocks the host whichever call issued it
    }
  }
  for (const MemsetRecord& r : m.memsets()) {
    const uint32_t api = r.correlation ? m.ApiByCorrelation(r.correlation) : kNone;
    if (api != kNone && r.is_async == 0) v[api] = 1;
  }
  return v;
}

// A finding that names a cause ranks before the symptoms (Rule::symptom) when
// it is worth at least this share of the step: a cause much smaller than the
// symptom it is part of (a 2% data-loading wait in a host-bound step) stays
// ranked by cost.
constexpr double kCauseBeforeSymptomPct = 5.0;

// Reported findings (all with --all), ranked: a dead run first, then the
// findings that name a cause worth kCauseBeforeSymptomPct of the step before
// the symptoms, then by cost; ties keep the registry's rule order, then the
// detection order.
std::vector<Finding> Ranked(std::vector<Finding>* findings, bool all) {
  std::vector<Finding> kept;
  for (Finding& f : *findings) {
    if (f.count > 0 && (f.reported || all)) kept.push_back(std::move(f));
  }
  auto order = [](const std::string& id) {
    const auto& rules = Rules();
    for (size_t i = 0; i < rules.size(); ++i) {
      if (id == rules[i]->id) return i;
    }
    return rules.size();
  };
  auto leads = [](const std::string& id) {
    const Rule* r = FindRule(id);
    return r && r->leads;
  };
  // 0: a cause worth kCauseBeforeSymptomPct; 1: a symptom or a smaller cause.
  auto tier = [](const Finding& f) {
    const Rule* r = FindRule(f.rule);
    const bool symptom = r && r->symptom;
    return symptom || !f.reported || f.cost_pct < kCauseBeforeSymptomPct ? 1 : 0;
  };
  std::stable_sort(kept.begin(), kept.end(), [&](const Finding& x, const Finding& y) {
    if (leads(x.rule) != leads(y.rule)) return leads(x.rule);
    if (tier(x) != tier(y)) return tier(x) < tier(y);
    if (x.cost_ns != y.cost_ns) return x.cost_ns > y.cost_ns;
    return order(x.rule) < order(y.rule);
  });
  return kept;
}

}  // namespace

MachineConstants MachineConstantsOf(const TraceModel& m, int device,
                                    const std::map<uint32_t, BenchResults>& bench) {
  const DeviceRecord* d = device >= 0 ? m.Device(static_cast<uint32_t>(device)) : nullptr;
  if (!d) return MachineConstants();
  auto it = bench.find(d->id);
  return MachineConstants(m.String(d->name), it == bench.end() ? nullptr : &it->second);
}

StatusOr<Analysis> Analyze(const TraceModel& m, const AnalyzeOptions& opt) {
  Analysis a;
  StepOptions so = opt.steps;
  so.device = opt.device;
  ASSIGN_OR_RETURN(a.steps, DetectSteps(m, so));
  a.device = PickDevice(m, opt.device);
  static const FlatTimeline kEmpty;
  const FlatTimeline& tl = a.device >= 0 ? m.Timeline(a.device) : kEmpty;
  const std::vector<Interval> windows = AnalyzedWindows(m, tl, &a);
  a.windows = windows;
  for (const Interval& w : windows) a.analyzed_ns += w.end - w.start;

  RuleContext c{m,        opt,     a.steps,       OpSteps(m, a.steps),
                a.device, windows, a.analyzed_ns, a.complete_steps};
  c.undecided = &a.undecided;
  c.machine = a.machine = MachineConstantsOf(m, a.device, opt.bench);
  c.upload_sync = PageableUploadSyncs(m);
  c.blocking_copy = BlockingCopies(m, c.upload_sync);
  c.is_step_range.assign(m.nvtx().size(), 0);
  for (const Step& s : a.steps.steps) {
    if (s.nvtx != kNone) c.is_step_range[s.nvtx] = 1;
  }
  if (a.device >= 0) {
    GapTotals totals;
    c.gaps = FindGpuGaps(m, tl, static_cast<uint32_t>(a.device), opt.gaps, &windows, &totals);
    a.idle.analyzed_ns = a.analyzed_ns;
    for (const Interval& w : windows) a.idle.busy_ns += tl.Busy(w.start, w.end);
    a.idle.idle_ns = a.analyzed_ns - a.idle.busy_ns;
    int64_t classified = 0;
    for (int k = 0; k < 4; ++k) classified += a.idle.by_cause[k] = totals.by_cause[k];
    // Idle time with no GPU op after it inside its window (a window's tail
    // before the next step's work): no launch to blame, so "other". The four
    // causes then add up to the idle time the header prints.
    if (a.idle.idle_ns > classified) {
      a.idle.by_cause[static_cast<int>(GapCause::kOther)] += a.idle.idle_ns - classified;
    }
    a.idle.gaps = totals.count;
  }
  FindRoundTrips(&c);
  c.owners = OwnGaps(c);
  for (const Rule* r : Rules()) {
    if (r->detect) r->detect(c, &a.findings);
  }
  PriceFindings(c, &a);
  HostEvidence(c, &a);
  a.findings = Ranked(&a.findings, opt.all);
  return a;
}

}  // namespace stepscope
