// host_sync: the host blocks in a synchronization inside the steps
// (sync-wait gaps after loss.item(), .cpu(), torch.cuda.synchronize()), one
// finding per blocking call and NVTX range. Fix: the host does not wait:
// the round trips of its gaps (rule.h, RoundTrip) go whole, every blocking
// call of each (loss.item()'s copy and stream sync before a synchronize()
// are one round trip: removing only the call that left the gap kept the host
// waiting in the other, priced 0 against 2.7 ms/step realized on an HF Qwen2
// loop, tests/gpu/external_suite.py qwen2_item_sync, H100, 2026-11-27);
// without round trips (no sync records), the like waits (RemoveLikeWaits).
#include <algorithm>
#include <map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

struct Trips : FindingData {
  std::vector<int32_t> trips;  // RuleContext::round_trips of the finding's gaps
};

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  std::map<std::string, GapGroup> groups;  // by call and range: a deterministic order
  std::map<std::string, std::vector<int32_t>> trips;
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
    if (const RoundTrip* t = c.RoundTripOf(g)) {
      trips[call + "\x01" + c.RangeName(range)].push_back(
          static_cast<int32_t>(t - c.round_trips.data()));
    }
  }
  for (auto& [key, grp] : groups) {
    grp.f.detail = std::to_string(grp.f.count) + " gaps, " + FormatDuration(grp.f.cost_ns) +
                   " of GPU idle time after the host returned from the blocking call";
    grp.Finish(c);
    std::vector<int32_t>& t = trips[key];
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    if (!t.empty()) {
      auto data = std::make_shared<Trips>();
      data->trips = t;
      grp.f.data = data;
    }
    out->push_back(grp.f);
  }
}

Fix RemoveTheWaits(const PricingContext& p, Finding* f) {
  const auto* d = static_cast<const Trips*>(f->data.get());
  if (!d) return RemoveLikeWaits(p, f);
  return RemoveRoundTripsOf(p, d->trips);
}

}  // namespace

extern const Rule kHostSyncRule{
    .id = "host_sync",
    .summary = "host synchronization in the loop (sync-wait): loss.item(), .cpu(), synchronize",
    .detect = Detect,
    .fix = RemoveTheWaits,
    .host_evidence = IssuingPythonLines,
};

}  // namespace stepscope
