// launch_bound: host-wait gaps inside stretches of kernels that each run
// shorter than the time between their launches, one finding per NVTX range
// of the launches. Fix: CUDA graphs over the stretches, but only over those a
// graph can capture: a stretch that holds a host round trip (a
// synchronization) or borders a data-dependent one (its shapes come from the
// value read back) must lose the round trip first; the finding says which and
// prices the others only.
#include <algorithm>
#include <map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

struct Stretches : FindingData {
  size_t blocked = 0;  // stretches left out of the pricing: round trips in the way
};

constexpr const char* kGraphFix =
    "capture the step with CUDA graphs (torch.compile(mode=\"reduce-overhead\"), "
    "torch.cuda.CUDAGraph), fuse elementwise ops (torch.compile), or give each kernel more "
    "work (a larger batch).";

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  std::map<std::string, GapGroup> groups;  // by the launches' range
  std::map<std::string, std::vector<int32_t>> stretches;
  for (size_t i : c.GapsOf(GapOwner::kLaunchBound)) {
    const OwnedGap& o = c.owners.gaps[i];
    const std::string key = c.RangeName(o.launch_range);
    GapGroup& grp = groups[key];
    if (grp.f.rule.empty()) {
      grp.f.rule = "launch_bound";
      grp.f.title = "Launch-bound kernels in " + key +
                    ": kernels run shorter than the time between their launches";
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
    // For the what-if pricing: the host time of each stretch's launches, what
    // a CUDA graph would capture; stretches with round trips in the way stay.
    std::vector<int32_t> blockers;
    for (int32_t id : ids) {
      kernels += c.owners.stretch_len[id];
      const int32_t b = c.owners.stretch_blocker[id];
      if (b >= 0) {
        blockers.push_back(b);
      } else {
        f.host_spans.push_back(c.owners.stretch_span[id]);
      }
    }
    f.detail = std::to_string(ids.size()) +
               " stretches of >= " + std::to_string(kMinLaunchBoundStretch) + " kernels (" +
               std::to_string(kernels) + " kernels) each shorter than its launch interval; " +
               std::to_string(f.count) + " host-wait gaps in them, " + FormatDuration(f.cost_ns);
    f.fix = std::string("Launch fewer, larger kernels: ") + kGraphFix;
    if (!blockers.empty()) {
      std::sort(blockers.begin(), blockers.end());
      blockers.erase(std::unique(blockers.begin(), blockers.end()), blockers.end());
      const std::string sites = RoundTripSites(c, blockers);
      f.detail += "; " + std::to_string(ids.size() - f.host_spans.size()) +
                  " of the stretches hold, border or lie in loops of host round trips (" + sites +
                  "): a CUDA graph cannot capture them as they are, so only the other " +
                  std::to_string(f.host_spans.size()) + " are priced";
      f.fix = "First remove the host round trips in and around these stretches (" + sites +
              "; data_dependent_sync and host_sync say how): a CUDA graph cannot capture a "
              "synchronization, nor kernels whose shapes come from a value read back. Then " +
              kGraphFix;
    }
    auto data = std::make_shared<Stretches>();
    data->blocked = ids.size() - f.host_spans.size();
    f.data = data;
    grp.Finish(c);
    out->push_back(f);
  }
}

// The stretches are captured whole: the Python between their launches goes too.
Fix CudaGraphs(const PricingContext& p, Finding* f) {
  const std::vector<whatif::HostSpan> spans = HostSpansOf(f->host_spans);
  const auto* d = static_cast<const Stretches*>(f->data.get());
  const size_t blocked = d ? d->blocked : 0;
  return {[=](whatif::Graph* x) { return whatif::CudaGraph(x, spans, 20'000, INT64_MAX); },
          "CUDA graphs over the " + std::to_string(spans.size()) + " launch-bound stretches" +
              (blocked ? " without host round trips (" + std::to_string(blocked) +
                             " with round trips not priced)"
                       : std::string())};
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
