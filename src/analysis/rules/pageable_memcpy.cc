// pageable_memcpy: async copies from/to pageable host memory. The driver
// stages them through a pinned buffer of its own: the calling thread blocks
// for the whole copy, which runs at the pageable bandwidth, and PyTorch's
// blocking upload (`.to("cuda")`) adds a stream synchronization after it.
// Fix: pinned memory and non_blocking=True, priced by replay: each copy at its
// bytes over this machine's pinned bandwidth (machine_constants.h), the
// uploads' calls and their synchronizations no longer wait.
#include <algorithm>

#include "analysis/rules/rule.h"
#include "analysis/whatif/pricing.h"

namespace stepscope {
namespace {

std::string Gbps(double bytes_per_s) { return FormatFixed(bytes_per_s / 1e9, 1) + " GB/s"; }

// "host->device 55.7 GB/s, device->host 54.4 GB/s: H100 SXM table" (kind
// "pinned" or "pageable"), or why a constant is unknown.
std::string ConstantsText(const MachineConstants& mc, bool up, bool down, const std::string& kind) {
  std::string s;
  std::vector<std::string> keys;
  for (int d = 0; d < 2; ++d) {
    if (!(d == 0 ? up : down)) continue;
    keys.push_back((d == 0 ? "h2d_" : "d2h_") + kind);
    const MachineValue v = mc.Get(keys.back());
    if (!v.known()) return "unknown: " + mc.Unknown(keys.back());
    s += std::string(s.empty() ? "" : ", ") + (d == 0 ? "host->device " : "device->host ") +
         Gbps(v.value);
  }
  return s + ": " + mc.SourceOf({keys.begin(), keys.end()});
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  CopyGroup copies(c, GapOwner::kPageableMemcpy, "pageable_memcpy");
  int64_t pinned_ns = 0, sync_ns = 0, syncs = 0;
  bool up = false, down = false;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kMemcpy || !c.InWindows(OpTime(m, o))) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    if (r.is_async != 1 || !IsPageableCopy(r)) continue;
    const bool h2d = r.copy_kind == CopyKind::kHostToDevice;
    (h2d ? up : down) = true;
    const int64_t dur = o.end_ns - o.start_ns;
    const MachineValue bw = c.machine.Get(h2d ? "h2d_pinned" : "d2h_pinned");
    const int64_t at_pinned =
        bw.known() ? std::min<int64_t>(dur, static_cast<int64_t>(r.bytes / bw.value * 1e9)) : dur;
    pinned_ns += at_pinned;
    copies.Add(c, i, dur - at_pinned);
    const uint32_t s = o.api != kNone ? c.upload_sync[o.api] : kNone;
    if (s == kNone) continue;
    ++syncs;
    sync_ns += std::max<int64_t>(0, m.apis()[s].end_ns - m.apis()[s].start_ns);
  }
  const int64_t copy_ns = copies.op_ns;
  std::string detail =
      std::to_string(copies.ops.f.count) + " cudaMemcpyAsync copies, " + Mb(copies.bytes) + ", " +
      FormatDuration(copy_ns) + " of copy time staged through a pageable buffer (" +
      // A rate only where the bytes make one (small copies are latency).
      (copy_ns > 0 && copies.bytes >= 1'000'000 ? Gbps(copies.bytes / (copy_ns / 1e9)) + "; "
                                                : std::string()) +
      "pageable bandwidth " + ConstantsText(c.machine, up, down, "pageable") +
      "); the host blocked " + FormatDuration(copies.blocked_ns + sync_ns) + " in them" +
      (syncs > 0 ? " and the " + std::to_string(syncs) +
                       " stream synchronizations right after the uploads (non_blocking=False)"
                 : std::string()) +
      "; at the pinned bandwidth (" + ConstantsText(c.machine, up, down, "pinned") + ") " +
      FormatDuration(pinned_ns) + " of copy time";
  copies.Emit(c, "Async memcpy from/to pageable host memory: the host stalls and the copy is slow",
              std::move(detail), "",
              "Pin the host buffers: DataLoader(pin_memory=True), tensor.pin_memory(), "
              "cudaHostAlloc; then copy with non_blocking=True so the copy overlaps compute.",
              copy_ns - pinned_ns, out);
}

Fix PinCopies(const PricingContext& p, Finding* f) {
  std::string what;
  const std::vector<whatif::PinnedCopy> copies =
      PinnedCopiesOf(p.c.m, p.g, f->ops, p.c.machine, p.c.upload_sync, &what);
  return {[=](whatif::Graph* x) { return whatif::PinCopies(x, copies); }, what};
}

// The Python line of each copy: its call's stack, else (traces recorded
// before the tracer took pageable copies' stacks) its upload's stream
// synchronization's, issued by the same line. A finding of gaps only: the
// lines of its blocking calls.
void CopyPythonLines(const RuleContext& c, const Analysis& a, Finding* f) {
  const TraceModel& m = c.m;
  std::vector<std::string> lines;
  for (uint32_t row : f->ops) {
    const uint32_t api = m.gpu_ops()[row].api;
    if (api == kNone) continue;
    std::string line = m.ApiPythonLine(m.apis()[api].correlation);
    const uint32_t s = c.upload_sync[api];
    if (line.empty() && s != kNone) line = m.ApiPythonLine(m.apis()[s].correlation);
    lines.push_back(line);
  }
  if (lines.empty()) {
    IssuingPythonLines(c, a, f);
    return;
  }
  f->detail += IssuedAtText(lines);
}

}  // namespace

extern const Rule kPageableMemcpyRule{
    .id = "pageable_memcpy",
    .summary = "async memcpy from/to pageable host memory",
    .detect = Detect,
    .fix = PinCopies,
    .host_evidence = CopyPythonLines,
};

}  // namespace stepscope
