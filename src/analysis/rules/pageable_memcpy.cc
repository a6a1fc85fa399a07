// pageable_memcpy: async copies from/to pageable host memory (staged, about
// half the speed of pinned ones; the host stalls in them). Cost: half the copy
// time plus the sync-wait gaps after them. Fix: pinned copies.
#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  OpGroup pageable;
  uint64_t bytes = 0;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kMemcpy) continue;
    const int64_t t = OpTime(m, o);
    if (!c.InWindows(t)) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    if (r.is_async != 1 ||
        (r.src_kind != MemoryKind::kPageable && r.dst_kind != MemoryKind::kPageable))
      continue;
    pageable.Add(c, t, o.start_ns, o.end_ns, o.end_ns - o.start_ns, OpRange(m, o));
    pageable.f.ops.push_back(static_cast<uint32_t>(&o - m.gpu_ops().data()));
    bytes += r.bytes;
  }
  GapGroup gaps = BlockingCopyGaps(c, GapOwner::kPageableMemcpy);
  gaps.f.rule = "pageable_memcpy";
  if (pageable.f.count == 0) {
    // Only the gaps (their copies outside the analyzed windows).
    if (gaps.f.count > 0) {
      gaps.Finish(c);
      out->push_back(gaps.f);
    }
    return;
  }
  Finding& f = pageable.f;
  const int64_t copy_time = f.cost_ns;
  f.rule = "pageable_memcpy";
  f.title = "Async memcpy from/to pageable host memory: the host stalls and the copy is slow";
  f.where = pageable.Where(c, false);
  f.cost_ns = copy_time / 2 + gaps.f.cost_ns;
  f.detail = std::to_string(f.count) + " cudaMemcpyAsync copies, " + Mb(bytes) + ", " +
             FormatDuration(copy_time) +
             " of copy time staged through a pageable buffer (pinned "
             "memory copies about twice as fast: half of it counts)" +
             (gaps.f.count > 0 ? "; " + gaps.f.detail : std::string());
  f.fix =
      "Pin the host buffers: DataLoader(pin_memory=True), tensor.pin_memory(), cudaHostAlloc; "
      "then copy with non_blocking=True so the copy overlaps compute.";
  c.Finish(&f, true);
  f.reported = f.cost_pct >= c.opt.min_cost_pct;
  out->push_back(f);
}

Fix PinCopies(const PricingContext& p, Finding* f) {
  const std::vector<uint32_t> ops = OpNodes(p.g, f->ops);
  return {[=](whatif::Graph* x) { return whatif::PinCopies(x, ops, 2.0); },
          "pinned copies (2x faster, uploads do not block)"};
}

}  // namespace

extern const Rule kPageableMemcpyRule{
    .id = "pageable_memcpy",
    .summary = "async memcpy from/to pageable host memory",
    .detect = Detect,
    .fix = PinCopies,
    .host_evidence = IssuingPythonLines,
};

}  // namespace stepscope
