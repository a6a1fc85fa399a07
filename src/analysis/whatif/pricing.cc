// Prices every finding by replaying the analyzed steps with its rule's fix
// applied (docs/whatif.md): the finding's cost is the simulated saving of the
// median step, its threshold applies to that saving. Also traces the critical
// path of the median step, and asks the rules for the findings the replay
// itself shows (host_bound).
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/whatif/pricing.h"

#include "analysis/rules/rule.h"
#include "common/strings.h"

namespace stepscope {
namespace {

using whatif::Graph;
using whatif::HostSpan;
using whatif::Prediction;
using whatif::WhatIfEngine;

std::string Ms(int64_t ns) { return FormatFixed(ns / 1e6, 1); }

// "step 12 (3.4 ms) is bound by host thread 608 (python3, main) 71% (CPU between calls
// 1.2, ...); ...": the three lanes that hold most of the path, three parts each.
std::string CriticalPathText(const Graph& g, const whatif::CriticalPath& path, int64_t number) {
  std::string s = "step " + std::to_string(number) + " (" + Ms(path.duration) + " ms) is bound by ";
  std::map<uint32_t, std::vector<const whatif::PathPart*>> by_lane;
  for (const auto& p : path.parts) by_lane[p.lane].push_back(&p);
  for (size_t k = 0; k < path.lanes.size() && k < 3; ++k) {
    const auto& [lane, ns] = path.lanes[k];
    s += std::string(k ? "; " : "") + g.lanes[lane].Name(g) + " " +
         FormatFixed(100.0 * ns / path.duration, 0) + "% (";
    const auto& parts = by_lane[lane];
    for (size_t j = 0; j < parts.size() && j < 3; ++j) {
      s += std::string(j ? ", " : "") + parts[j]->what + " " + Ms(parts[j]->ns);
    }
    s += ")";
  }
  return s;
}

// The finding's cost becomes the fix's simulated saving of the median step.
void ApplyPrice(const RuleContext& c, const Prediction& p, const std::string& what, Finding* f) {
  f->step_before_ns = p.base_ns;
  f->step_after_ns = p.fixed_ns;
  f->whatif = what;
  f->bound_after = p.bound_after;
  f->host_bound_after = p.host_bound_after;
  f->cost_per_step_ns = std::max<int64_t>(0, p.saving_ns());
  f->cost_ns = f->cost_per_step_ns * std::max<int64_t>(c.nsteps, 1);
  f->cost_pct = p.base_ns > 0 ? 100.0 * f->cost_per_step_ns / p.base_ns : 0.0;
  // Reported when the rule's own evidence was significant and the fix saves
  // at least the threshold.
  f->reported = f->reported && f->cost_pct >= c.opt.min_cost_pct;
}

// How much slower a traced host ran host-bound steps of loops nobody here
// wrote (docs/whatif.md "The tracer's speed"): whole-run traced against bare
// process pairs 1.07-1.47x (lent H200, 2026-11-28), traced against bare
// 1.18-1.55x (lent H100, suite run 2, 2026-11-27).
constexpr const char* kTracedHostSlower =
    "host-bound steps of external loops ran 1.1-1.6x slower traced than untraced (lent "
    "H100/H200, docs/whatif.md); --untraced-step-ms prices at your own untraced step";

}  // namespace

std::string HostBoundStepNote(bool host_bound, bool host_scaled) {
  if (!host_bound || host_scaled) return "";
  return std::string("the host bounds the step and the replay runs it at the traced speed: ") +
         "savings of host work can be smaller untraced; " + kTracedHostSlower;
}

std::string HostSpeedCaveat(bool host_bound_before, bool host_bound_after, bool host_scaled) {
  if (host_bound_before || !host_bound_after || host_scaled) return "";
  return std::string(
             "once fixed the host bounds the step, replayed at the traced speed: the "
             "saving can be larger untraced; ") +
         kTracedHostSlower;
}

whatif::Prediction PriceLargerBatch(const WhatIfEngine& e, const StepSet& steps,
                                    const std::vector<Finding>& findings, double n,
                                    size_t* bursts) {
  std::vector<int32_t> steady;
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    if (steps.steps[k].steady()) steady.push_back(static_cast<int32_t>(k));
  }
  std::vector<HostSpan> data;
  for (const Finding& f : findings) {
    const Rule* r = FindRule(f.rule);
    if (r && r->grows_with_batch) data = HostSpansOf(f.host_spans);
  }
  if (bursts) *bursts = data.size();
  return e.Price([&](Graph* x) { return whatif::ScaleBatch(x, steady, n, data); });
}

std::string LargerBatchNote(const whatif::Prediction& p, double n, int digits, size_t bursts) {
  return FormatFixed(p.base_ns > 0 ? 1.0 * p.fixed_ns / p.base_ns : 0, 2) + "x the time for " +
         FormatFixed(n, digits) + "x the samples" +
         (bursts == 0 ? std::string()
                      : "; the " + std::to_string(bursts) +
                            " CPU fault bursts of managed memory grow with it");
}

std::vector<whatif::PinnedCopy> PinnedCopiesOf(const TraceModel& m, const Graph& g,
                                               const std::vector<uint32_t>& ops,
                                               const MachineConstants& mc,
                                               const std::vector<uint32_t>& upload_sync,
                                               std::string* what) {
  std::vector<whatif::PinnedCopy> v;
  bool dir[2] = {false, false};  // host->device, device->host
  for (uint32_t i : ops) {
    if (i >= m.gpu_ops().size() || g.op_node[i] == kNone) continue;
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kMemcpy) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    const bool up = r.copy_kind == CopyKind::kHostToDevice;
    if (!up && r.copy_kind != CopyKind::kDeviceToHost) continue;
    dir[up ? 0 : 1] = true;
    const MachineValue bw = mc.Get(up ? "h2d_pinned" : "d2h_pinned");
    whatif::PinnedCopy p{g.op_node[i], g.nodes[g.op_node[i]].duration, kNone};
    if (bw.known()) p.ns = std::llround(static_cast<double>(r.bytes) / bw.value * 1e9);
    const uint32_t s = o.api != kNone && o.api < upload_sync.size() ? upload_sync[o.api] : kNone;
    if (s != kNone) p.sync = g.call_node[s];
    v.push_back(p);
  }
  if (what) {
    std::string bws;
    std::vector<std::string_view> keys;
    for (int d = 0; d < 2; ++d) {
      if (!dir[d]) continue;
      const char* key = d == 0 ? "h2d_pinned" : "d2h_pinned";
      const MachineValue bw = mc.Get(key);
      if (!bw.known()) continue;
      keys.push_back(key);
      bws += std::string(bws.empty() ? "" : ", ") + (d == 0 ? "host->device " : "device->host ") +
             FormatFixed(bw.value / 1e9, 1) + " GB/s";
    }
    const std::string unknown = dir[0] && !mc.Get("h2d_pinned").known()   ? mc.Unknown("h2d_pinned")
                                : dir[1] && !mc.Get("d2h_pinned").known() ? mc.Unknown("d2h_pinned")
                                                                          : "";
    *what = "pinned, non-blocking copies (" +
            (bws.empty() ? std::string() : bws + ": " + mc.SourceOf(keys) + "; ") +
            (unknown.empty()
                 ? ""
                 : "pinned bandwidth unknown, those copies keep their time: " + unknown + "; ") +
            "uploads do not block)";
  }
  return v;
}

void PriceFindings(const RuleContext& c, Analysis* a) {
  if (!c.opt.price || a->device < 0 || c.steps.steps.empty()) return;
  auto built =
      WhatIfEngine::Build(c.m, c.steps, a->device, c.opt.untraced_step_ns, c.opt.keep_tracer_time);
  if (!built.ok()) {
    a->whatif_error = built.status().message();
    return;
  }
  const WhatIfEngine& e = *built;
  if (e.base().median <= 0) {
    a->whatif_error = "no steady step with GPU work after the first";
    return;
  }
  a->measured_step_ns = e.measured().median;
  a->simulated_step_ns = e.traced_base_median();
  if (e.untraced_step_ns() > 0) {
    a->untraced_step_ns = e.untraced_step_ns();
    a->untraced_measured_steps = e.untraced_measured_steps();
    a->host_scale = e.host_scale();
    a->scaled_step_ns = e.base().median;
  } else if (e.tracer_ns_per_step() > 0) {
    a->tracer_ns_per_step = e.tracer_ns_per_step();
    a->estimated_untraced_step_ns = e.base().median;
  }
  const Graph& g = e.graph();
  const int ms = e.MedianStep();
  const whatif::CriticalPath path = TraceCriticalPath(g, e.base_replay(), e.base(), ms);
  if (path.duration > 0) {
    a->host_bound = path.host_bound;
    a->critical_path = CriticalPathText(g, path, c.steps.steps[ms].number);
  }
  // Each finding's fix, by its rule.
  const PricingContext pc{c, e, g};
  for (Finding& f : a->findings) {
    const Rule* r = FindRule(f.rule);
    if (!r || !r->fix) continue;
    const Fix fix = r->fix(pc, &f);
    ApplyPrice(c, e.Price(fix.transform), fix.what, &f);
  }
  // What the replay itself shows.
  std::vector<Finding> replayed;
  const ReplayContext rc{pc, path, *a};
  for (const Rule* r : Rules()) {
    if (r->detect_replayed) r->detect_replayed(rc, &replayed);
  }
  for (Finding& f : replayed) a->findings.push_back(std::move(f));
}

}  // namespace stepscope
