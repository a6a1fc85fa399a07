#include "analysis/rules.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "analysis/timeline.h"

namespace stepscope {

const std::vector<RuleInfo>& RuleList() {
  static const std::vector<RuleInfo> kRules = {
      {"data_loading", "GPU idle waiting for the next batch at the start of steps (host-wait)"},
      {"host_sync",
       "host synchronization in the loop (sync-wait): loss.item(), .cpu(), synchronize"},
      {"launch_bound", "kernels shorter than the time between their launches (host-wait)"},
      {"host_wait", "GPU idle waiting for the host to issue work (other host-wait)"},
      {"pageable_memcpy", "async memcpy from/to pageable host memory"},
      {"sync_memcpy", "synchronous memcpy/memset"},
      {"offload_copies", "host<->device copies on the critical path (offload)"},
      {"fp32_gemm", "fp32 GEMMs on a GPU with bf16/fp16 tensor cores"},
      {"memory_capacity", "device memory close to capacity"},
      {"um_faults", "kernels stalled by unified-memory page faults (prefetch instead)"},
      {"recompute",
       "activation checkpointing recomputes the forward in the backward (GPU and host time)"},
      {"host_bound", "the host bounds the step (critical path): a larger batch amortizes it"},
      {"oom", "the process ran out of device memory: where, the holders, the changes that fit"},
  };
  return kRules;
}

bool RuleContext::InWindows(int64_t t) const {
  auto it = std::partition_point(windows.begin(), windows.end(),
                                 [&](const Interval& w) { return w.end < t; });
  return it != windows.end() && it->start <= t;
}

int RuleContext::StepAtWindow(int64_t t) const {
  const auto& s = steps.steps;
  auto it = std::partition_point(s.begin(), s.end(), [&](const Step& x) { return x.end_ns < t; });
  if (it == s.end() || it->start_ns > t) return -1;
  return static_cast<int>(it - s.begin());
}

std::string RuleContext::RangeName(uint32_t nvtx) const {
  if (nvtx == kNone) return "no NVTX range";
  if (nvtx < is_step_range.size() && is_step_range[nvtx]) return "the step range";
  return "`" + m.String(m.nvtx()[nvtx].name) + "`";
}

std::string RuleContext::Rel(int64_t t) const {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "+%.6f s", (t - m.origin_ns()) / 1e9);
  return buf;
}

std::string RuleContext::StepsText(const std::vector<int>& idx) const {
  if (idx.empty() || steps.steps.empty()) return "";
  std::set<int> u(idx.begin(), idx.end());
  std::vector<int64_t> nums;
  for (int i : u) nums.push_back(steps.steps[i].number);
  std::sort(nums.begin(), nums.end());
  bool contiguous = true;
  for (size_t k = 1; k < nums.size(); ++k) contiguous &= nums[k] == nums[k - 1] + 1;
  if (nums.size() == 1) return "step " + std::to_string(nums[0]);
  if (contiguous)
    return "steps " + std::to_string(nums.front()) + "-" + std::to_string(nums.back());
  if (nums.size() <= 5) {
    std::string s = "steps ";
    for (size_t k = 0; k < nums.size(); ++k) s += (k ? ", " : "") + std::to_string(nums[k]);
    return s;
  }
  return std::to_string(nums.size()) + " of " + std::to_string(nsteps) + " steps (" +
         std::to_string(nums.front()) + "-" + std::to_string(nums.back()) + ")";
}

void RuleContext::Finish(Finding* f, bool significant) const {
  f->cost_pct = analyzed_ns > 0 ? 100.0 * f->cost_ns / analyzed_ns : 0.0;
  f->cost_per_step_ns = nsteps > 0 ? f->cost_ns / nsteps : 0;
  f->reported = significant;
}

StatusOr<Analysis> Analyze(const TraceModel& m, const AnalyzeOptions& opt) {
  Analysis a;
  StepOptions so = opt.steps;
  so.device = opt.device;
  ASSIGN_OR_RETURN(a.steps, DetectSteps(m, so));
  // The device: the one asked for, else the busiest.
  a.device = opt.device;
  if (a.device < 0 && m.active_devices().size() == 1)
    a.device = static_cast<int>(m.active_devices()[0]);
  if (a.device < 0 && !m.active_devices().empty()) {
    int64_t best = -1;
    for (uint32_t d : m.active_devices()) {
      const FlatTimeline& t = m.Timeline(static_cast<int>(d));
      const int64_t busy = t.Busy(t.first_ns(), t.last_ns());
      if (busy > best) {
        best = busy;
        a.device = static_cast<int>(d);
      }
    }
  }
  if (a.device >= 0 && std::find(m.active_devices().begin(), m.active_devices().end(),
                                 static_cast<uint32_t>(a.device)) == m.active_devices().end()) {
    a.device = -1;  // asked for a device without activity
  }
  // The analyzed windows: the complete steps, else the GPU span, else the trace.
  std::vector<Interval> windows;
  for (const Step& s : a.steps.steps) {
    if (!s.steady() || s.end_ns <= s.start_ns) continue;
    ++a.complete_steps;
    if (!windows.empty() && s.start_ns <= windows.back().end) {
      windows.back().end = std::max(windows.back().end, s.end_ns);
    } else {
      windows.push_back({s.start_ns, s.end_ns});
    }
  }
  static const FlatTimeline kEmpty;
  const FlatTimeline& tl = a.device >= 0 ? m.Timeline(a.device) : kEmpty;
  if (windows.empty()) {
    if (!tl.empty()) {
      windows.push_back({tl.first_ns(), tl.last_ns()});
    } else if (m.end_ns() > m.origin_ns()) {
      windows.push_back({m.origin_ns(), m.end_ns()});
    }
  }
  a.windows = windows;
  for (const Interval& w : windows) a.analyzed_ns += w.end - w.start;

  RuleContext c{
      m,  opt, a.steps, OpSteps(m, a.steps), a.device, windows, a.analyzed_ns, a.complete_steps,
      {}, {},  {}};
  c.undecided = &a.undecided;
  c.blocking_copy.assign(m.apis().size(), 0);
  for (const MemcpyRecord& r : m.memcpys()) {
    const uint32_t api = r.correlation ? m.ApiByCorrelation(r.correlation) : kNone;
    if (api == kNone) continue;
    if (r.is_async == 0) {
      c.blocking_copy[api] = 1;
    } else if (r.src_kind == MemoryKind::kPageable || r.dst_kind == MemoryKind::kPageable) {
      c.blocking_copy[api] = 2;  // blocks the host whichever call issued it
    }
  }
  for (const MemsetRecord& r : m.memsets()) {
    const uint32_t api = r.correlation ? m.ApiByCorrelation(r.correlation) : kNone;
    if (api != kNone && r.is_async == 0) c.blocking_copy[api] = 1;
  }
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
    for (int k = 0; k < 4; ++k) a.idle.by_cause[k] = totals.by_cause[k];
    a.idle.gaps = totals.count;
  }
  GapRules(c, &a.findings);
  CopyRules(c, &a.findings);
  Fp32GemmRule(c, &a.findings);
  MemoryCapacityRule(c, &a.findings);
  UmFaultsRule(c, &a.findings);
  RecomputeRule(c, &a.findings);
  OomRule(c, &a.findings);
  PriceFindings(c, &a);
  HostEvidence(c, &a);
  std::vector<Finding> kept;
  for (Finding& f : a.findings) {
    if (f.count > 0 && (f.reported || opt.all)) kept.push_back(std::move(f));
  }
  // Rank by cost; ties keep the rule order of RuleList().
  auto order = [](const std::string& id) {
    const auto& rules = RuleList();
    for (size_t i = 0; i < rules.size(); ++i) {
      if (id == rules[i].id) return i;
    }
    return rules.size();
  };
  std::stable_sort(kept.begin(), kept.end(), [&](const Finding& x, const Finding& y) {
    if ((x.rule == "oom") != (y.rule == "oom")) return x.rule == "oom";  // a dead run leads
    if (x.cost_ns != y.cost_ns) return x.cost_ns > y.cost_ns;
    return order(x.rule) < order(y.rule);
  });
  a.findings = std::move(kept);
  return a;
}

}  // namespace stepscope
