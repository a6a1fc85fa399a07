// host_sync: the host blocks in a synchronization inside the steps
// (sync-wait gaps after loss.item(), .cpu(), torch.cuda.synchronize()), one
// finding per blocking call and NVTX range. Fix: the host does not wait.
#include <map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  std::map<std::string, GapGroup> groups;  // by call and range: a deterministic order
  for (size_t i : c.GapsOf(GapOwner::kHostSync)) {
    const GpuGap& g = c.gaps[i];
    const uint32_t api = g.blocking_api;
    const std::string call =
        api != kNone ? m.ApiName(api)
                     : std::string("sync (") + SyncTypeName(m.syncs()[g.blocking_sync].type) + ")";
    const uint32_t range = api != kNone ? m.api_range()[api] : kNone;
    GapGroup& grp = groups[call + "\x01" + c.RangeName(range)];
    if (grp.f.rule.empty()) {
      grp.f.rule = "host_sync";
      grp.f.title = "Host synchronization " + call + " in " + c.RangeName(range) +
                    ": the GPU idles until the host issues more work";
      grp.f.fix =
          "Take the synchronization out of the loop: avoid loss.item(), .cpu(), print(tensor), "
          "torch.cuda.synchronize() every step; accumulate metrics on the GPU and read them "
          "every N steps; copy results with non_blocking=True into pinned memory.";
    }
    grp.Add(c, g, range);
    if (api != kNone) grp.f.apis.push_back(api);
  }
  for (auto& [key, grp] : groups) {
    grp.f.detail = std::to_string(grp.f.count) + " gaps, " + FormatDuration(grp.f.cost_ns) +
                   " of GPU idle time after the host returned from the blocking call";
    grp.Finish(c);
    out->push_back(grp.f);
  }
}

}  // namespace

extern const Rule kHostSyncRule{
    .id = "host_sync",
    .summary = "host synchronization in the loop (sync-wait): loss.item(), .cpu(), synchronize",
    .detect = Detect,
    .fix = RemoveLikeWaits,
    .host_evidence = IssuingPythonLines,
};

}  // namespace stepscope
