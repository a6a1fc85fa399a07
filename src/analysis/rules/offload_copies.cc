// offload_copies: pinned host<->device copies exposed on the analyzed device
// (no compute or communication runs while they do). Cost: their exposed
// time. Fix: without the copies (the side stream is priced beside it).
#include <algorithm>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

// Compute/communication busy intervals of the device: a copy is exposed where
// none of them runs.
std::vector<Interval> BusyIntervals(const TraceModel& m, int device) {
  std::vector<Interval> busy;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.device != device || o.category == OpCategory::kMemory) continue;
    if (!busy.empty() && o.start_ns <= busy.back().end) {
      busy.back().end = std::max(busy.back().end, o.end_ns);
    } else {
      busy.push_back({o.start_ns, o.end_ns});
    }
  }
  return busy;
}

int64_t Exposed(const std::vector<Interval>& busy, int64_t s, int64_t e) {
  int64_t covered = 0;
  auto it =
      std::partition_point(busy.begin(), busy.end(), [&](const Interval& x) { return x.end <= s; });
  for (; it != busy.end() && it->start < e; ++it)
    covered += std::min(e, it->end) - std::max(s, it->start);
  return (e - s) - covered;
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  const std::vector<Interval> busy = BusyIntervals(m, c.device);
  OpGroup offload;
  uint64_t h2d = 0, d2h = 0;
  int64_t total = 0;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kMemcpy || o.device != c.device) continue;
    const int64_t t = OpTime(m, o);
    if (!c.InWindows(t)) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    const bool host_side =
        r.copy_kind == CopyKind::kHostToDevice || r.copy_kind == CopyKind::kDeviceToHost;
    // Offload copies are the pinned async ones; the blocking kinds have their own rules.
    const bool blocking = o.api != kNone && c.blocking_copy[o.api] != 0;
    if (!host_side || blocking) continue;
    const int64_t x = Exposed(busy, o.start_ns, o.end_ns);
    total += o.end_ns - o.start_ns;
    if (x <= 0) continue;
    offload.Add(c, t, o.start_ns, o.end_ns, x, OpRange(m, o));
    offload.f.ops.push_back(static_cast<uint32_t>(&o - m.gpu_ops().data()));
    (r.copy_kind == CopyKind::kHostToDevice ? h2d : d2h) += r.bytes;
  }
  if (offload.f.count == 0) return;
  Finding& f = offload.f;
  f.rule = "offload_copies";
  f.title = "Host<->device copies on the critical path: the GPU computes nothing while they run";
  f.where = offload.Where(c) + "; device " + std::to_string(c.device);
  f.detail = std::to_string(f.count) + " copies (" + Mb(h2d) + " H2D, " + Mb(d2h) +
             " D2H) exposed for " + FormatDuration(f.cost_ns) + " of " + FormatDuration(total) +
             " copy time";
  f.fix =
      "Overlap the copies with compute (a side stream, pinned memory, prefetch the tensors a "
      "layer ahead) or avoid them: activation checkpointing trades the copies for "
      "recomputation; offload only what does not fit.";
  c.FinishAtThreshold(&f);
  out->push_back(f);
}

// Without the copies; the side stream instead is priced too, into the text.
Fix RemoveCopies(const PricingContext& p, Finding* f) {
  const std::vector<uint32_t> ops = OpNodes(p.g, f->ops);
  const whatif::Prediction side =
      p.e.Price([&](whatif::Graph* x) { return whatif::SideStream(x, ops); });
  auto ms = [](int64_t ns) { return FormatFixed(ns / 1e6, 1); };
  f->detail += "; with the copies on a side stream instead: step " + ms(side.base_ns) + " -> " +
               ms(side.fixed_ns) + " ms";
  return {[=](whatif::Graph* x) { return whatif::RemoveOps(x, ops); }, "without the copies"};
}

}  // namespace

extern const Rule kOffloadCopiesRule{
    .id = "offload_copies",
    .summary = "host<->device copies on the critical path (offload)",
    .detect = Detect,
    .fix = RemoveCopies,
    .host_evidence = IssuingPythonLines,
};

}  // namespace stepscope
