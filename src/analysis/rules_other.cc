// The rules with their own cost models: pageable_memcpy, sync_memcpy,
// offload_copies, fp32_gemm, memory_capacity (see docs/rules.md).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/rules.h"
#include "common/strings.h"

namespace stepscope {
namespace {

// Host time of an op for the window test: its launch, else its start.
int64_t OpTime(const TraceModel& m, const GpuOp& o) {
  return o.api != kNone ? m.apis()[o.api].start_ns : o.start_ns;
}

std::string Mb(uint64_t bytes) { return FormatFixed(bytes / 1e6, 1) + " MB"; }

// Records one instance: cost, the step it is in, the costliest examples.
struct Acc {
  Finding f;
  std::vector<int> steps;
  std::map<std::string, int64_t> by_range;
  void Add(const RuleContext& c, int64_t host_t, int64_t s, int64_t e, int64_t cost,
           uint32_t range) {
    f.cost_ns += cost;
    ++f.count;
    const int st = c.steps.AtHostTime(host_t);
    if (st >= 0) steps.push_back(st);
    const std::string rn = range == kNone ? "" : c.m.String(c.m.nvtx()[range].name);
    by_range[c.RangeName(range)] += cost;
    f.examples.push_back({st >= 0 ? c.steps.steps[st].number : -1, s, e, rn, cost});
    std::sort(
        f.examples.begin(), f.examples.end(),
        [](const FindingExample& a, const FindingExample& b) { return a.cost_ns > b.cost_ns; });
    if (f.examples.size() > 3) f.examples.resize(3);
  }
  // "`forward` 12.0 ms, `backward` 3.0 ms"
  std::string Ranges() const {
    std::vector<std::pair<int64_t, std::string>> v;
    for (const auto& [k, t] : by_range) v.push_back({-t, k});
    std::sort(v.begin(), v.end());
    std::string s;
    for (size_t i = 0; i < v.size() && i < 3; ++i) {
      s += (i ? ", " : "") + v[i].second + " " + FormatDuration(-v[i].first);
    }
    return s;
  }
  // with_times: the per-range numbers are the finding's cost (else names only).
  std::string Where(const RuleContext& c, bool with_times = true) const {
    std::string s = c.StepsText(steps);
    std::string r = Ranges();
    if (!with_times) {
      r.clear();
      size_t n = 0;
      for (const auto& [k, t] : by_range) r += (n++ ? ", " : "") + k;
    }
    if (!r.empty()) s += (s.empty() ? "" : "; ") + std::string("in ") + r;
    return s;
  }
};

uint32_t RangeOf(const TraceModel& m, const GpuOp& o) {
  return o.api != kNone ? m.api_range()[o.api] : kNone;
}

}  // namespace

void CopyRules(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  const double min_pct = c.opt.min_cost_pct;
  // Compute/communication busy intervals of the analyzed device: a copy is
  // exposed where none of them runs.
  std::vector<Interval> busy;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.device != c.device || o.category == OpCategory::kMemory) continue;
    if (!busy.empty() && o.start_ns <= busy.back().end) {
      busy.back().end = std::max(busy.back().end, o.end_ns);
    } else {
      busy.push_back({o.start_ns, o.end_ns});
    }
  }
  auto exposed = [&](int64_t s, int64_t e) {
    int64_t covered = 0;
    auto it = std::partition_point(busy.begin(), busy.end(),
                                   [&](const Interval& x) { return x.end <= s; });
    for (; it != busy.end() && it->start < e; ++it)
      covered += std::min(e, it->end) - std::max(s, it->start);
    return (e - s) - covered;
  };
  Acc pageable, sync_copy, offload;
  uint64_t pageable_bytes = 0, offload_h2d = 0, offload_d2h = 0;
  int64_t offload_total = 0, undecided_copies = 0;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind == GpuOpKind::kKernel) continue;
    const int64_t t = OpTime(m, o);
    if (!c.InWindows(t)) continue;
    const int64_t dur = o.end_ns - o.start_ns;
    const uint32_t range = RangeOf(m, o);
    bool is_async;
    if (o.kind == GpuOpKind::kMemcpy) {
      const MemcpyRecord& r = m.memcpys()[o.index];
      is_async = r.is_async != 0;  // unknown: not taken as synchronous
      if (r.is_async == kAsyncUnknown) ++undecided_copies;
      const bool host_side =
          r.copy_kind == CopyKind::kHostToDevice || r.copy_kind == CopyKind::kDeviceToHost;
      if (r.is_async == 1 &&
          (r.src_kind == MemoryKind::kPageable || r.dst_kind == MemoryKind::kPageable)) {
        pageable.Add(c, t, o.start_ns, o.end_ns, dur, range);
        pageable.f.ops.push_back(static_cast<uint32_t>(&o - m.gpu_ops().data()));
        pageable_bytes += r.bytes;
      }
      // Offload copies are the pinned async ones; the blocking kinds have their own rules.
      const bool blocking = o.api != kNone && c.blocking_copy[o.api] != 0;
      if (host_side && o.device == c.device && !blocking) {
        const int64_t x = exposed(o.start_ns, o.end_ns);
        offload_total += dur;
        if (x > 0) {
          offload.Add(c, t, o.start_ns, o.end_ns, x, range);
          offload.f.ops.push_back(static_cast<uint32_t>(&o - m.gpu_ops().data()));
          (r.copy_kind == CopyKind::kHostToDevice ? offload_h2d : offload_d2h) += r.bytes;
        }
      }
    } else {
      is_async = m.memsets()[o.index].is_async != 0;
      if (m.memsets()[o.index].is_async == kAsyncUnknown) ++undecided_copies;
    }
    if (!is_async) {
      // The host is blocked for the whole call.
      const int64_t cost = o.api != kNone ? m.apis()[o.api].end_ns - m.apis()[o.api].start_ns : dur;
      sync_copy.Add(c, t, o.start_ns, o.end_ns, std::max<int64_t>(cost, 0), range);
      if (o.api != kNone) sync_copy.f.apis.push_back(o.api);
    }
  }
  // The sync-wait gaps these copies caused were collected by GapRules.
  auto take = [&](const char* rule) {
    Finding gaps;
    for (auto it = out->begin(); it != out->end(); ++it) {
      if (it->rule == rule) {
        gaps = *it;
        out->erase(it);
        break;
      }
    }
    return gaps;
  };
  if (pageable.f.count > 0) {
    const Finding gaps = take("pageable_memcpy");
    Finding& f = pageable.f;
    const int64_t copy_time = f.cost_ns;
    f.rule = "pageable_memcpy";
    f.title = "Async memcpy from/to pageable host memory: the host stalls and the copy is slow";
    f.where = pageable.Where(c, false);
    f.cost_ns = copy_time / 2 + gaps.cost_ns;
    f.detail = std::to_string(f.count) + " cudaMemcpyAsync copies, " + Mb(pageable_bytes) + ", " +
               FormatDuration(copy_time) +
               " of copy time staged through a pageable buffer (pinned "
               "memory copies about twice as fast: half of it counts)" +
               (gaps.count > 0 ? "; " + gaps.detail : std::string());
    f.fix =
        "Pin the host buffers: DataLoader(pin_memory=True), tensor.pin_memory(), cudaHostAlloc; "
        "then "
        "copy with non_blocking=True so the copy overlaps compute.";
    c.Finish(&f, true);
    f.reported = f.cost_pct >= min_pct;
    out->push_back(f);
  }
  if (sync_copy.f.count > 0) {
    const Finding gaps = take("sync_memcpy");
    Finding& f = sync_copy.f;
    const int64_t blocked = f.cost_ns;
    f.rule = "sync_memcpy";
    f.title = "Synchronous memcpy/memset: the host blocks until the GPU has caught up";
    f.where = sync_copy.Where(c, false);
    f.cost_ns = gaps.cost_ns;
    f.detail = std::to_string(f.count) + " synchronous calls, the host blocked for " +
               FormatDuration(blocked) +
               (gaps.count > 0 ? "; " + gaps.detail : "; no GPU idle time after them");
    f.fix =
        "Use the async forms on a stream (cudaMemcpyAsync/cudaMemsetAsync; tensor.to(..., "
        "non_blocking=True) with pinned memory) and synchronize once, where the result is needed.";
    c.Finish(&f, true);
    f.reported = f.cost_pct >= min_pct;
    out->push_back(f);
  }
  if (undecided_copies > 0 && c.undecided) {
    c.undecided->push_back(
        "sync_memcpy: " + std::to_string(undecided_copies) +
        " copies/memsets in the analyzed steps have no issuing API call in the trace, so "
        "whether they blocked the host is unknown; they are not classified");
  }
  if (offload.f.count > 0) {
    Finding& f = offload.f;
    f.rule = "offload_copies";
    f.title = "Host<->device copies on the critical path: the GPU computes nothing while they run";
    f.where = offload.Where(c) + "; device " + std::to_string(c.device);
    f.detail = std::to_string(f.count) + " copies (" + Mb(offload_h2d) + " H2D, " +
               Mb(offload_d2h) + " D2H) exposed for " + FormatDuration(f.cost_ns) + " of " +
               FormatDuration(offload_total) + " copy time";
    f.fix =
        "Overlap the copies with compute (a side stream, pinned memory, prefetch the tensors a "
        "layer "
        "ahead) or avoid them: activation checkpointing trades the copies for recomputation; "
        "offload "
        "only what does not fit.";
    c.Finish(&f, true);
    f.reported = f.cost_pct >= min_pct;
    out->push_back(f);
  }
}

// Cost model: bf16/fp16 tensor cores run a GEMM at least 2x faster than fp32
// on CUDA cores (peak ratios are 8-16x on A100/H100) and than TF32 (2x), so the
// estimated saving is half of the fp32 GEMM time and a quarter of the TF32 time.
void Fp32GemmRule(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  Acc acc;
  int64_t fp32 = 0, tf32 = 0;
  std::unordered_map<StringId, int64_t> by_name;
  std::string device_name;
  uint32_t cc = 0;
  int64_t no_device = 0;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kKernel) continue;
    const KernelRecord& k = m.kernels()[o.index];
    const GemmPrecision p = m.NameInfo(k.name).gemm;
    if (p != GemmPrecision::kFp32 && p != GemmPrecision::kTf32) continue;
    const DeviceRecord* d = m.Device(o.device);
    const int64_t t = OpTime(m, o);
    if (!d && c.InWindows(t)) ++no_device;
    if (!d || d->cc_major < 8) continue;
    if (!c.InWindows(t)) continue;
    const int64_t dur = o.end_ns - o.start_ns;
    (p == GemmPrecision::kFp32 ? fp32 : tf32) += dur;
    by_name[k.name] += dur;
    device_name = m.String(d->name);
    cc = d->cc_major * 10 + d->cc_minor;
    acc.Add(c, t, o.start_ns, o.end_ns, p == GemmPrecision::kFp32 ? dur / 2 : dur / 4,
            RangeOf(m, o));
    acc.f.ops.push_back(static_cast<uint32_t>(&o - m.gpu_ops().data()));
  }
  if (no_device > 0 && c.undecided) {
    c.undecided->push_back("fp32_gemm: " + std::to_string(no_device) +
                           " fp32/TF32 GEMM kernels on a device the trace does not describe "
                           "(no devices row: compute capability unknown)");
  }
  if (acc.f.count == 0) return;
  Finding& f = acc.f;
  f.rule = "fp32_gemm";
  f.title = std::string(fp32 > 0 ? "GEMMs run in fp32" : "GEMMs run in TF32") + " on " +
            (device_name.empty() ? "a GPU" : device_name) + " (sm_" + std::to_string(cc) +
            ") with bf16/fp16 tensor cores";
  f.where = acc.Where(c);
  std::vector<std::pair<int64_t, StringId>> names;
  for (const auto& [n, t] : by_name) names.push_back({-t, n});
  std::sort(names.begin(), names.end());
  std::string top;
  for (size_t i = 0; i < names.size() && i < 3; ++i) {
    top += (i ? ", " : "") + std::string(KernelBaseName(m.String(names[i].second))).substr(0, 60);
  }
  f.detail = std::to_string(f.count) + " GEMM kernels: " + FormatDuration(fp32) + " fp32 + " +
             FormatDuration(tf32) + " TF32 (" + top +
             "); estimated saving half the fp32 time and a "
             "quarter of the TF32 time";
  f.fix =
      "Run the model in bf16: torch.autocast(\"cuda\", dtype=torch.bfloat16) (AMP) or "
      "model.to(torch."
      "bfloat16); on Hopper consider FP8 (Transformer Engine). At the very least allow TF32: "
      "torch.backends.cuda.matmul.allow_tf32 = True.";
  c.Finish(&f, true);
  f.reported = c.analyzed_ns > 0 && 100.0 * (fp32 + tf32) / c.analyzed_ns >= c.opt.min_cost_pct;
  out->push_back(f);
}

// Peak of the live device allocations (alloc minus free by address) against
// the device's memory size. Cost: allocator calls (cudaMalloc/cudaFree and
// friends) inside the analyzed windows, the time an allocator under pressure
// spends freeing and re-allocating.
void MemoryCapacityRule(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  struct Peak {
    int64_t live = 0, peak = 0, peak_ts = 0;
  };
  std::map<uint32_t, Peak> peaks;
  std::unordered_map<uint64_t, std::pair<uint32_t, uint64_t>> live;  // address -> (device, bytes)
  for (const MemoryRecord& r : m.memory()) {
    if (r.memory_kind != MemoryKind::kDevice && r.memory_kind != MemoryKind::kUnknown) continue;
    Peak& p = peaks[r.device];
    if (r.op == MemoryOp::kAlloc) {
      live[r.address] = {r.device, r.bytes};
      p.live += static_cast<int64_t>(r.bytes);
      if (p.live > p.peak) {
        p.peak = p.live;
        p.peak_ts = r.ts_ns;
      }
    } else if (r.op == MemoryOp::kFree) {
      auto it = live.find(r.address);
      if (it == live.end()) continue;  // allocated before the trace started
      peaks[it->second.first].live -= static_cast<int64_t>(it->second.second);
      live.erase(it);
    }
  }
  int64_t alloc_time = 0, alloc_calls = 0;
  for (size_t i = 0; i < m.apis().size(); ++i) {
    const ApiRecord& a = m.apis()[i];
    const std::string& n = m.String(a.name);
    const bool allocator =
        (n.find("Malloc") != std::string::npos || n.find("Free") != std::string::npos ||
         n.find("MemAlloc") != std::string::npos) &&
        n.find("Host") == std::string::npos;
    if (allocator && c.InWindows(a.start_ns)) {
      alloc_time += a.end_ns - a.start_ns;
      ++alloc_calls;
    }
  }
  for (const auto& [dev, p] : peaks) {
    const DeviceRecord* d = m.Device(dev);
    if (!d || d->global_memory_bytes == 0 || p.peak <= 0) continue;
    const double pct = 100.0 * p.peak / static_cast<double>(d->global_memory_bytes);
    Finding f;
    f.rule = "memory_capacity";
    const bool close = pct >= c.opt.memory_capacity_pct;  // else a listing (--all), not a warning
    f.title = std::string(close ? "Device memory close to capacity" : "Device memory use") +
              " on device " + std::to_string(dev) + ": " +
              FormatBytes(static_cast<uint64_t>(p.peak)) + " of " +
              FormatBytes(d->global_memory_bytes) + " (" + FormatFixed(pct, 1) +
              "%) allocated at the peak";
    const int st = c.steps.AtHostTime(p.peak_ts);
    f.where = "device " + std::to_string(dev) + ", peak at " + c.Rel(p.peak_ts) +
              (st >= 0 ? " (step " + std::to_string(c.steps.steps[st].number) + ")" : "");
    f.detail =
        std::to_string(alloc_calls) +
        " allocator calls (cudaMalloc/cudaFree) in the analyzed "
        "steps took " +
        FormatDuration(alloc_time) + "; headroom " +
        FormatBytes(d->global_memory_bytes - std::min<uint64_t>(d->global_memory_bytes, p.peak));
    f.fix =
        "Make room before it fails or thrashes: activation checkpointing (torch.utils.checkpoint), "
        "offload optimizer state or activations, a smaller micro-batch with gradient accumulation, "
        "FSDP/ZeRO sharding; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against "
        "fragmentation.";
    f.cost_ns = alloc_time;
    f.count = 1;
    f.examples.push_back({st >= 0 ? c.steps.steps[st].number : -1, p.peak_ts, p.peak_ts, "", 0});
    c.Finish(&f, close);
    out->push_back(f);
  }
}

}  // namespace stepscope
