// per_param_optimizer: the optimizer updates one parameter tensor at a time
// (torch.optim's for-loop path: `foreach=False`, or an optimizer without a
// multi-tensor path), launching a handful of tiny kernels per tensor from
// Python. Evidence: the `optimizer.step CLASS(foreach=..., fused=...)` NVTX
// ranges that `stepscope profile` puts around the program's optimizer step
// (python/stepscope/_iteration_ranges.py), the launches in them. Gradient
// clipping the same way: the `clip_grad_norm_(foreach=...)` ranges around
// torch.nn.utils.clip_grad_norm_, one finding per kind of range.
// Fix: the fused (or multi-tensor) implementation. Priced by replaying the
// steps with each optimizer step's launches made one launch of the fused
// optimizer's host cost (CudaGraph over the range) and, for Adam and AdamW,
// the kernels' GPU time at the fused kernel's share (kFusedAdamGpuShare).
#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

constexpr std::string_view kStepRange = "optimizer.step ";
constexpr std::string_view kClipRange = "clip_grad_norm_(";
// A step with fewer launches than this per optimizer step is multi-tensor or
// fused whatever its name says (a few per parameter group and dtype).
constexpr double kMinLaunchesPerStep = 256;
// The fused optimizer's host time per launch of the for-loop path it
// replaces: H200, HF GPT-2 124M (148 tensors), AdamW fused=True 0.91 ms per
// step against 1,184 launches for foreach=False (bench/results/2026-11-27,
// tests/gpu/unmarked_steps_check.py): 0.77 us.
constexpr int64_t kFusedHostNsPerLaunch = 770;
// Fused Adam(W) reads p, g, m, v and writes p, m, v once (7 tensor passes);
// the for-loop path runs about 8 elementwise kernels per tensor, each reading
// and writing (about 21 passes): 1/3 of the GPU time. Measured on the same
// traces: 1.03 ms fused against 3.49 ms for-loop (0.30).
constexpr double kFusedAdamGpuShare = 1.0 / 3.0;

struct OptimizerStep {
  uint32_t nvtx;
  int step;  // step index
  std::vector<uint32_t> ops;
};

// The range's optimizer, "AdamW(foreach=False, fused=None)" -> "AdamW".
std::string ClassOf(std::string_view args) { return std::string(args.substr(0, args.find('('))); }

struct PerParamData : FindingData {
  bool adam = false;
  bool clip = false;
};

// The ranges named PREFIX... in the steady steps, each with the kernels
// launched in it by its thread.
std::vector<OptimizerStep> StepRanges(const RuleContext& c, std::string_view prefix) {
  const TraceModel& m = c.m;
  std::vector<OptimizerStep> out;
  for (uint32_t i = 0; i < m.nvtx().size(); ++i) {
    const NvtxRecord& r = m.nvtx()[i];
    if (r.kind != NvtxKind::kPushPop || r.end_ns <= r.start_ns) continue;
    if (!StartsWith(m.String(r.name), prefix)) continue;
    const int step = c.steps.AtHostTime(r.start_ns);
    if (step < 0 || !c.steps.steps[step].steady()) continue;
    out.push_back({i, step, {}});
  }
  std::sort(out.begin(), out.end(), [&](const OptimizerStep& a, const OptimizerStep& b) {
    return m.nvtx()[a.nvtx].start_ns < m.nvtx()[b.nvtx].start_ns;
  });
  for (uint32_t op = 0; op < m.gpu_ops().size(); ++op) {
    const GpuOp& o = m.gpu_ops()[op];
    if (o.kind != GpuOpKind::kKernel || o.api == kNone) continue;
    const ApiRecord& a = m.apis()[o.api];
    auto it = std::upper_bound(
        out.begin(), out.end(), a.start_ns,
        [&](int64_t t, const OptimizerStep& s) { return t < m.nvtx()[s.nvtx].start_ns; });
    if (it == out.begin()) continue;
    --it;
    const NvtxRecord& r = m.nvtx()[it->nvtx];
    if (a.start_ns <= r.end_ns && a.tid == r.tid) it->ops.push_back(op);
  }
  return out;
}

}  // namespace

bool PerParamOptimizerRange(const TraceModel& m, uint32_t nvtx) {
  if (nvtx == kNone || nvtx >= m.nvtx().size()) return false;
  const std::string& name = m.String(m.nvtx()[nvtx].name);
  return (StartsWith(name, kStepRange) || StartsWith(name, kClipRange)) &&
         name.find("foreach=False") != std::string::npos &&
         name.find("fused=True") == std::string::npos;
}

namespace {

bool PerParameter(const std::string& name, double launches_per_step) {
  if (name.find("fused=True") != std::string::npos) return false;
  if (name.find("foreach=False") != std::string::npos) return true;
  return name.find("foreach=True") == std::string::npos && launches_per_step >= kMinLaunchesPerStep;
}

// What one kind of range is: the optimizer's step or the gradient clipping.
struct RangeKind {
  std::string_view prefix;
  bool clip;
};

std::string TitleOf(const RangeKind& k, const std::string& cls, double per_step) {
  const std::string n = FormatFixed(per_step, 0);
  if (k.clip)
    return "Gradient clipping (clip_grad_norm_) runs one tensor at a time (" + n +
           " kernel launches per step)";
  return "The optimizer " + cls + " updates one parameter at a time (" + n +
         " kernel launches per step)";
}

std::string FixOf(const RangeKind& k, const std::string& cls) {
  if (k.clip)
    return "Clip all gradients in one multi-tensor pass: torch.nn.utils.clip_grad_norm_(..., "
           "foreach=True) (the default on CUDA: drop foreach=False); the same for the optimizer "
           "(fused=True) and zero_grad(set_to_none=True).";
  return "Use the fused or multi-tensor implementation: torch.optim." + cls +
         "(..., fused=True) (or foreach=True, the default on CUDA: drop foreach=False); "
         "also clip with torch.nn.utils.clip_grad_norm_(..., foreach=True) and zero the "
         "gradients with zero_grad(set_to_none=True).";
}

void DetectKind(const RuleContext& c, const RangeKind& k, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  const std::vector<OptimizerStep> ranges = StepRanges(c, k.prefix);
  if (ranges.empty()) return;
  int64_t launches = 0, host_ns = 0, gpu_ns = 0;
  for (const OptimizerStep& s : ranges) {
    launches += static_cast<int64_t>(s.ops.size());
    host_ns += m.nvtx()[s.nvtx].end_ns - m.nvtx()[s.nvtx].start_ns;
    for (uint32_t op : s.ops) gpu_ns += m.gpu_ops()[op].end_ns - m.gpu_ops()[op].start_ns;
  }
  const double n = static_cast<double>(ranges.size());
  const std::string name = m.String(m.nvtx()[ranges.front().nvtx].name);
  if (!PerParameter(name, static_cast<double>(launches) / n)) return;
  // "AdamW(foreach=False, fused=None)"; the clipping range's name is its own call.
  const std::string args = k.clip ? name : name.substr(k.prefix.size());
  const std::string cls = k.clip ? "clip_grad_norm_" : ClassOf(args);
  Finding f;
  f.rule = "per_param_optimizer";
  f.title = TitleOf(k, cls, static_cast<double>(launches) / n);
  std::vector<int> steps;
  const std::string label = k.clip ? "clip_grad_norm_" : "optimizer.step";
  for (const OptimizerStep& s : ranges) {
    steps.push_back(s.step);
    const NvtxRecord& r = m.nvtx()[s.nvtx];
    f.host_spans.push_back({r.tid, r.start_ns, r.end_ns});
    f.ops.insert(f.ops.end(), s.ops.begin(), s.ops.end());
    f.examples.push_back(
        {c.steps.steps[s.step].number, r.start_ns, r.end_ns, label, r.end_ns - r.start_ns});
  }
  std::stable_sort(
      f.examples.begin(), f.examples.end(),
      [](const FindingExample& a, const FindingExample& b) { return a.cost_ns > b.cost_ns; });
  if (f.examples.size() > 3) f.examples.resize(3);
  f.where = c.StepsText(steps) + (k.clip ? ", `" + args + "`" : ", `optimizer.step()` of " + args);
  f.detail = std::string(k.clip ? "each clipping: " : "each optimizer step: ") +
             FormatDuration(static_cast<int64_t>(host_ns / n)) + " on the host, " +
             FormatFixed(static_cast<double>(launches) / n, 0) + " kernels of " +
             FormatDuration(static_cast<int64_t>(gpu_ns / n)) +
             " GPU time in all (one small kernel per tensor and operation)";
  f.fix = FixOf(k, cls);
  f.count = static_cast<int64_t>(ranges.size());
  f.cost_ns = host_ns;
  // The launch-bound gaps inside these ranges are this finding's (gap_owners.cc).
  std::set<uint32_t> mine;
  for (const OptimizerStep& s : ranges) mine.insert(s.nvtx);
  for (size_t i : c.GapsOf(GapOwner::kPerParamOptimizer)) {
    if (mine.count(c.owners.gaps[i].launch_range))
      f.gap_ns[static_cast<int>(c.gaps[i].cause)] += c.gaps[i].length();
  }
  auto data = std::make_shared<PerParamData>();
  data->adam = !k.clip && cls.find("Adam") != std::string::npos;
  data->clip = k.clip;
  f.data = data;
  c.Finish(&f, true);
  out->push_back(std::move(f));
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  for (const RangeKind& k : {RangeKind{kStepRange, false}, RangeKind{kClipRange, true}})
    DetectKind(c, k, out);
}

Fix Fused(const PricingContext& p, Finding* f) {
  const bool adam = static_cast<const PerParamData&>(*f->data).adam;
  const bool clip = static_cast<const PerParamData&>(*f->data).clip;
  const std::vector<whatif::HostSpan> spans = HostSpansOf(f->host_spans);
  const std::vector<uint32_t> nodes = OpNodes(p.g, f->ops);
  const int64_t per_step = static_cast<int64_t>(
      std::llround(static_cast<double>(f->ops.size()) / std::max<int64_t>(f->count, 1)));
  const int64_t host_ns = per_step * kFusedHostNsPerLaunch;
  const double share = adam ? kFusedAdamGpuShare : 1.0;
  return {
      [=](whatif::Graph* x) {
        int n = whatif::CudaGraph(x, spans, host_ns, INT64_MAX);
        if (share < 1.0) n += whatif::ScaleOps(x, nodes, share);
        return n;
      },
      std::string(clip ? "multi-tensor clipping: each call" : "the fused optimizer: each step") +
          " one launch of " + FormatDuration(host_ns) + " host time" +
          (adam ? ", its kernels at 1/3 of their GPU time" : "")};
}

}  // namespace

extern const Rule kPerParamOptimizerRule{
    .id = "per_param_optimizer",
    .summary = "the optimizer steps one parameter tensor at a time (for-loop, not fused/foreach)",
    .detect = Detect,
    .fix = Fused,
};

}  // namespace stepscope
