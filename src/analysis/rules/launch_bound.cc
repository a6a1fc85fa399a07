// launch_bound: host-wait gaps inside stretches of kernels that each run
// shorter than the time between their launches, one finding per NVTX range
// of the launches. Fix: CUDA graphs over the stretches.
#include <algorithm>
#include <map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  std::map<std::string, GapGroup> groups;  // by the launches' range
  std::map<std::string, std::vector<int32_t>> stretches;
  for (size_t i : c.GapsOf(GapOwner::kLaunchBound)) {
    const OwnedGap& o = c.owners.gaps[i];
    if (PerParamOptimizerRange(c.m, o.launch_range)) continue;  // per_param_optimizer's
    const std::string key = c.RangeName(o.launch_range);
    GapGroup& grp = groups[key];
    if (grp.f.rule.empty()) {
      grp.f.rule = "launch_bound";
      grp.f.title = "Launch-bound kernels in " + key +
                    ": kernels run shorter than the time between their launches";
      grp.f.fix =
          "Launch fewer, larger kernels: capture the step with CUDA graphs "
          "(torch.compile(mode=\"reduce-overhead\"), torch.cuda.CUDAGraph), fuse elementwise "
          "ops (torch.compile), or give each kernel more work (a larger batch).";
    }
    stretches[key].push_back(o.stretch);
    grp.Add(c, c.gaps[i], o.host_range);
  }
  for (auto& [key, grp] : groups) {
    Finding& f = grp.f;
    int64_t kernels = 0;
    std::vector<int32_t> ids = stretches[key];
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int32_t id : ids) kernels += c.owners.stretch_len[id];
    // For the what-if pricing: the host time of each stretch's launches,
    // what a CUDA graph would capture.
    for (int32_t id : ids) f.host_spans.push_back(c.owners.stretch_span[id]);
    f.detail = std::to_string(ids.size()) +
               " stretches of >= " + std::to_string(kMinLaunchBoundStretch) + " kernels (" +
               std::to_string(kernels) + " kernels) each shorter than its launch interval; " +
               std::to_string(f.count) + " host-wait gaps in them, " + FormatDuration(f.cost_ns);
    grp.Finish(c);
    out->push_back(f);
  }
}

// The stretches are captured whole: the Python between their launches goes too.
Fix CudaGraphs(const PricingContext& p, Finding* f) {
  const std::vector<whatif::HostSpan> spans = HostSpansOf(f->host_spans);
  return {[=](whatif::Graph* x) { return whatif::CudaGraph(x, spans, 20'000, INT64_MAX); },
          "CUDA graphs over the " + std::to_string(spans.size()) + " launch-bound stretches"};
}

}  // namespace

extern const Rule kLaunchBoundRule{
    .id = "launch_bound",
    .summary = "kernels shorter than the time between their launches (host-wait)",
    .detect = Detect,
    .fix = CudaGraphs,
    .symptom = true,
};

}  // namespace stepscope
