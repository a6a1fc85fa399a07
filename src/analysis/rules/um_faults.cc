// um_faults: kernels stretched by unified-memory page faults, and the CPU
// faulting the same pages back (docs/rules.md#um_faults, docs/um.md).
//
// Savings: for each kernel in the analyzed windows, its fault-stalled time
// minus the time a bulk prefetch of its bytes takes at the link bandwidth
// (analysis/model/um.h); for each burst of fault-driven device->host migrations
// while no kernel ran (the CPU touching managed memory), the burst's span
// minus its bytes at the device->host bandwidth. The finding's cost is the
// replayed saving of both (PrefetchManaged below: the kernels shortened, the
// bursts' CPU time shortened on the thread that faulted). The CPU part
// overlaps the gap rules' cost of the same idle time (host_sync /
// host_wait): those say where the host was, this says why it was slow there.
#include <algorithm>
#include <map>

#include "analysis/model/um.h"
#include "analysis/rules/rule.h"
#include "common/strings.h"

namespace stepscope {
namespace {

// The fix's numbers: each stalled kernel's duration once its data is
// prefetched (parallel to Finding::ops), and the CPU time the fix takes off
// each fault burst (parallel to Finding::host_spans).
struct Prefetched : FindingData {
  std::vector<int64_t> op_fixed_ns;
  std::vector<int64_t> host_span_cut_ns;
};

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  if (m.um().empty()) return;
  // The pinned-copy ceilings: this machine's bench results (second choice,
  // after the trace's prefetches), the table of GPU models (last resort).
  auto ceiling = [&](const char* key, bool bench) {
    const MachineValue v = c.machine.Get(key);
    return v.known() && v.bench == bench ? v.value / 1e9 : 0.0;
  };
  const UmAnalysis a =
      AnalyzeUm(m, c.device, ceiling("h2d_pinned", true), ceiling("d2h_pinned", true),
                ceiling("h2d_pinned", false), ceiling("d2h_pinned", false));
  Finding f;
  f.rule = "um_faults";
  auto fixed = std::make_shared<Prefetched>();
  std::vector<int> steps;
  int64_t stalled = 0, kernel_ns = 0, gpu_saving = 0, groups = 0, faults = 0, nkernels = 0;
  int64_t recorded = 0, by_resident = 0, by_tail = 0;
  uint64_t htod = 0;
  std::map<StringId, int64_t> by_name;
  auto example = [&](int64_t s, int64_t e, int64_t cost) {
    const int st = c.steps.AtHostTime(s);
    if (st >= 0) steps.push_back(st);
    f.examples.push_back({st >= 0 ? c.steps.steps[st].number : -1, s, e, "", cost});
  };
  for (const UmKernelStall& k : a.kernels) {
    const GpuOp& o = m.gpu_ops()[k.op];
    if (!c.InWindows(o.start_ns)) continue;
    const int64_t saving = UmPrefetchSaving(k.stalled_ns, k.htod_bytes, a.htod_bytes_per_ns);
    stalled += k.stalled_ns;
    recorded += k.recorded_ns;
    if (k.resident_ns >= 0)
      ++by_resident;
    else
      ++by_tail;
    kernel_ns += o.end_ns - o.start_ns;
    gpu_saving += saving;
    groups += k.fault_groups;
    faults += k.faults;
    htod += k.htod_bytes;
    ++nkernels;
    by_name[m.kernels()[o.index].name] += k.stalled_ns;
    example(o.start_ns, o.end_ns, saving);
    // For the replay: the kernel after a prefetch of its bytes on its stream.
    f.ops.push_back(k.op);
    fixed->op_fixed_ns.push_back((o.end_ns - o.start_ns) - saving);
  }
  int64_t cpu_span = 0, cpu_saving = 0, bursts = 0;
  uint64_t dtoh = 0;
  for (const UmCpuBurst& b : a.cpu_bursts) {
    if (!c.InWindows(b.start_ns)) continue;
    const int64_t saving =
        UmPrefetchSaving(b.end_ns - b.start_ns, b.dtoh_bytes, a.dtoh_bytes_per_ns);
    cpu_span += b.end_ns - b.start_ns;
    cpu_saving += saving;
    dtoh += b.dtoh_bytes;
    ++bursts;
    example(b.start_ns, b.end_ns, saving);
    // The thread that faulted: the one whose next CUDA call follows the burst
    // (api rows are in start order).
    const auto& apis = m.apis();
    auto it = std::lower_bound(apis.begin(), apis.end(), b.end_ns,
                               [](const ApiRecord& x, int64_t t) { return x.start_ns < t; });
    if (it != apis.end()) {
      f.host_spans.push_back({it->tid, b.start_ns, b.end_ns});
      fixed->host_span_cut_ns.push_back(saving);
    }
  }
  f.count = nkernels + bursts;
  if (f.count == 0) return;
  std::sort(f.examples.begin(), f.examples.end(),
            [](const FindingExample& x, const FindingExample& y) { return x.cost_ns > y.cost_ns; });
  if (f.examples.size() > 3) f.examples.resize(3);
  f.cost_ns = gpu_saving + cpu_saving;
  std::string top;
  int64_t top_ns = -1;
  for (const auto& [name, t] : by_name) {
    if (t > top_ns) top_ns = t, top = std::string(KernelBaseName(m.String(name))).substr(0, 60);
  }
  f.title = "kernels stall on unified-memory page faults (fault-driven migration)";
  f.where = c.StepsText(steps);
  if (!top.empty()) f.where += (f.where.empty() ? "" : "; ") + std::string("kernel `") + top + "`";
  auto gbps = [](double bpn) { return FormatFixed(bpn, 1) + " GB/s"; };
  std::string d;
  if (nkernels > 0) {
    d += std::to_string(nkernels) + " kernels (" + FormatDuration(kernel_ns) + ") spent " +
         FormatDuration(stalled) + " stalled on faults (" + FormatDuration(recorded) +
         " under recorded " +
         (groups > 0
              ? std::to_string(groups) + " GPU fault groups (" + std::to_string(faults) + " faults)"
          : faults > 0 ? std::to_string(faults) + " GPU faults in the driver's totals"
                       : std::string("fault-driven host->device migrations")) +
         (by_tail > 0 ? "; " + std::to_string(by_tail) +
                            " kernels with no fault-free run in the trace: counted whole, an upper "
                            "bound where a kernel computes while its faults are served"
                      : std::string()) +
         (by_resident > 0 ? "; " + std::to_string(by_resident) +
                                " kernels: their time beyond the median fault-free run of the same "
                                "kernel"
                          : std::string()) +
         "), pulling in " + FormatBytes(htod) + "; as one prefetch at " +
         gbps(a.htod_bytes_per_ns) + " (" + UmBandwidthSourceText(a.htod_bw_source) +
         ") the kernels would run " + FormatDuration(stalled) + " shorter for " +
         FormatDuration(stalled - gpu_saving) + " of prefetch: saving " +
         FormatDuration(gpu_saving);
  }
  if (bursts > 0) {
    d += std::string(d.empty() ? "" : "; ") + "the CPU faulted " + FormatBytes(dtoh) + " back in " +
         std::to_string(bursts) + " bursts over " + FormatDuration(cpu_span) +
         " while the GPU was idle (saving " + FormatDuration(cpu_saving) +
         " as a device->host prefetch)";
  }
  if (!a.has_gpu_faults) d += "; record the fault groups with --trace ...,um-gpu-faults";
  f.detail = d;
  f.fix =
      "Prefetch the managed buffers to the GPU before the kernels that use them "
      "(cudaMemPrefetchAsync(ptr, bytes, device, stream) on the kernel's stream; to the CPU, "
      "cudaCpuDeviceId, before host code touches them), or set the placement: "
      "cudaMemAdvise(ptr, bytes, cudaMemAdviseSetPreferredLocation, device) and "
      "cudaMemAdviseSetAccessedBy for the other processor (on Grace Hopper the GPU then reads "
      "host memory directly over NVLink-C2C instead of migrating). Or leave unified memory: "
      "device buffers with explicit pinned copies (cudaMemcpyAsync from cudaMallocHost memory); "
      "for PyTorch on managed memory, RMM's managed pool with prefetching.";
  f.data = std::move(fixed);
  c.Finish(&f, true);
  out->push_back(f);
}

// Each stalled kernel runs without its fault stall, after a prefetch of its
// bytes on its stream; each CPU fault burst becomes a bulk copy back.
Fix PrefetchManaged(const PricingContext& p, Finding* f) {
  static const Prefetched kEmpty;
  const auto* d = dynamic_cast<const Prefetched*>(f->data.get());
  if (!d) d = &kEmpty;
  std::vector<uint32_t> ops;
  std::vector<int64_t> fixed;
  for (size_t i = 0; i < f->ops.size() && i < d->op_fixed_ns.size(); ++i) {
    const uint32_t o = f->ops[i];
    if (o >= p.g.op_node.size() || p.g.op_node[o] == kNone) continue;
    ops.push_back(p.g.op_node[o]);
    fixed.push_back(d->op_fixed_ns[i]);
  }
  std::vector<std::pair<whatif::HostSpan, int64_t>> cuts;
  for (size_t i = 0; i < f->host_spans.size() && i < d->host_span_cut_ns.size(); ++i) {
    const Finding::Span& sp = f->host_spans[i];
    cuts.push_back({{sp.tid, sp.start_ns, sp.end_ns}, d->host_span_cut_ns[i]});
  }
  return {[=](whatif::Graph* x) {
            int n = whatif::SetDurations(x, ops, fixed);
            for (const auto& [span, by] : cuts) n += whatif::ShortenHostTime(x, span, by);
            return n;
          },
          "the managed buffers prefetched (" + std::to_string(ops.size()) +
              " kernels without their fault stalls, after the prefetch's copy; " +
              std::to_string(f->host_spans.size()) +
              " CPU fault bursts as bulk copies: an upper bound where the CPU computes while "
              "faulting)"};
}

}  // namespace

extern const Rule kUmFaultsRule{
    .id = "um_faults",
    .summary = "kernels stalled by unified-memory page faults (prefetch instead)",
    .detect = Detect,
    .fix = PrefetchManaged,
    .grows_with_batch = true,  // the CPU's fault bursts touch the batch's data
};

}  // namespace stepscope
