// host_wait: the GPU idles waiting for the host to issue work (host-wait gaps
// no other rule owns), one finding per NVTX range of the host. Fix: the host
// issues the work without the delays.
#include <map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  std::map<std::string, GapGroup> groups;  // by the host's range
  for (size_t i : c.GapsOf(GapOwner::kHostWait)) {
    const GpuGap& g = c.gaps[i];
    const OwnedGap& o = c.owners.gaps[i];
    GapGroup& grp = groups[c.RangeName(o.host_range)];
    if (grp.f.rule.empty()) {
      grp.f.rule = "host_wait";
      grp.f.title = "GPU idle waiting for the host in " + c.RangeName(o.host_range);
      const std::string trips = DataDependentRoundTrips(c);
      grp.f.fix =
          "The host issues GPU work too slowly here: profile the Python side (py-spy, the CPU "
          "view of torch.profiler), move CPU work out of the loop or onto other threads, and "
          "remove per-step Python bookkeeping; CUDA graphs remove the launch overhead" +
          (trips.empty() ? std::string(".") : " once the " + trips + " are gone.");
    }
    grp.Add(c, g, o.host_range);
    grp.f.host_spans.push_back({o.tid, g.start_ns, std::max(g.launch_ns, g.start_ns)});
  }
  for (auto& [key, grp] : groups) {
    grp.f.detail = std::to_string(grp.f.count) +
                   " host-wait gaps (the next op was launched after the GPU went idle), " +
                   FormatDuration(grp.f.cost_ns);
    grp.Finish(c);
    out->push_back(grp.f);
  }
}

Fix CutDelays(const PricingContext& p, Finding* f) {
  const std::vector<whatif::HostSpan> spans = HostSpansOf(f->host_spans);
  return {[=](whatif::Graph* x) { return whatif::CutHostTime(x, spans, 0); },
          "the host issues the work without the " + std::to_string(spans.size()) + " delays"};
}

}  // namespace

extern const Rule kHostWaitRule{
    .id = "host_wait",
    .summary = "GPU idle waiting for the host to issue work (other host-wait)",
    .detect = Detect,
    .fix = CutDelays,
    .symptom = true,
};

}  // namespace stepscope
