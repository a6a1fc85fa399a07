// sync_memcpy: synchronous memcpy/memset calls (the host blocks until the GPU
// has caught up). Cost: the sync-wait gaps after them. Fix: the host does not
// wait in them.
#include <algorithm>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  OpGroup sync_copy;
  int64_t undecided_copies = 0;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind == GpuOpKind::kKernel) continue;
    const int64_t t = OpTime(m, o);
    if (!c.InWindows(t)) continue;
    const uint8_t is_async = o.kind == GpuOpKind::kMemcpy ? m.memcpys()[o.index].is_async
                                                          : m.memsets()[o.index].is_async;
    if (is_async == kAsyncUnknown) ++undecided_copies;  // unknown: not taken as synchronous
    if (is_async != 0) continue;
    // The host is blocked for the whole call.
    const int64_t cost =
        o.api != kNone ? m.apis()[o.api].end_ns - m.apis()[o.api].start_ns : o.end_ns - o.start_ns;
    sync_copy.Add(c, t, o.start_ns, o.end_ns, std::max<int64_t>(cost, 0), OpRange(m, o));
    if (o.api != kNone) sync_copy.f.apis.push_back(o.api);
  }
  GapGroup gaps = BlockingCopyGaps(c, GapOwner::kSyncMemcpy);
  gaps.f.rule = "sync_memcpy";
  if (sync_copy.f.count > 0) {
    Finding& f = sync_copy.f;
    const int64_t blocked = f.cost_ns;
    f.rule = "sync_memcpy";
    f.title = "Synchronous memcpy/memset: the host blocks until the GPU has caught up";
    f.where = sync_copy.Where(c, false);
    f.cost_ns = gaps.f.cost_ns;
    f.detail = std::to_string(f.count) + " synchronous calls, the host blocked for " +
               FormatDuration(blocked) +
               (gaps.f.count > 0 ? "; " + gaps.f.detail : "; no GPU idle time after them");
    f.fix =
        "Use the async forms on a stream (cudaMemcpyAsync/cudaMemsetAsync; tensor.to(..., "
        "non_blocking=True) with pinned memory) and synchronize once, where the result is "
        "needed.";
    c.Finish(&f, true);
    f.reported = f.cost_pct >= c.opt.min_cost_pct;
    out->push_back(f);
  } else if (gaps.f.count > 0) {
    // Only the gaps (their copies outside the analyzed windows).
    gaps.Finish(c);
    out->push_back(gaps.f);
  }
  if (undecided_copies > 0 && c.undecided) {
    c.undecided->push_back(
        "sync_memcpy: " + std::to_string(undecided_copies) +
        " copies/memsets in the analyzed steps have no issuing API call in the trace, so "
        "whether they blocked the host is unknown; they are not classified");
  }
}

}  // namespace

extern const Rule kSyncMemcpyRule{
    .id = "sync_memcpy",
    .summary = "synchronous memcpy/memset",
    .detect = Detect,
    .fix = RemoveLikeWaits,
    .host_evidence = IssuingPythonLines,
};

}  // namespace stepscope
