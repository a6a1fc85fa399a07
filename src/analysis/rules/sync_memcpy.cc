// sync_memcpy: synchronous memcpy/memset calls (the host blocks until the GPU
// has caught up). Cost: the sync-wait gaps after them. Fix: the host does not
// wait in them.
#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  CopyGroup copies(c, GapOwner::kSyncMemcpy, "sync_memcpy");
  int64_t undecided_copies = 0;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind == GpuOpKind::kKernel) continue;
    if (!c.InWindows(OpTime(m, o))) continue;
    const uint8_t is_async = o.kind == GpuOpKind::kMemcpy ? m.memcpys()[o.index].is_async
                                                          : m.memsets()[o.index].is_async;
    if (is_async == kAsyncUnknown) ++undecided_copies;  // unknown: not taken as synchronous
    if (is_async != 0) continue;
    // The host is blocked for the whole call.
    copies.Add(
        c, i,
        o.api != kNone ? m.apis()[o.api].end_ns - m.apis()[o.api].start_ns : o.end_ns - o.start_ns);
  }
  copies.Emit(c, "Synchronous memcpy/memset: the host blocks until the GPU has caught up",
              std::to_string(copies.ops.f.count) + " synchronous calls, the host blocked for " +
                  FormatDuration(copies.ops.f.cost_ns),
              "; no GPU idle time after them",
              "Use the async forms on a stream (cudaMemcpyAsync/cudaMemsetAsync; tensor.to(..., "
              "non_blocking=True) with pinned memory) and synchronize once, where the result is "
              "needed.",
              /*own_cost=*/0, out);
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
