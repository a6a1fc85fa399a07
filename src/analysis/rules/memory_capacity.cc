// memory_capacity: device memory close to capacity at the peak of the live
// allocations. Its own cost model (not priced by replay): the allocator calls
// in the analyzed windows.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

// Peak of the live device allocations (alloc minus free by address) against
// the device's memory size. Cost: allocator calls (cudaMalloc/cudaFree and
// friends) inside the analyzed windows, the time an allocator under pressure
// spends freeing and re-allocating.
void Detect(const RuleContext& c, std::vector<Finding>* out) {
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

}  // namespace

extern const Rule kMemoryCapacityRule{
    .id = "memory_capacity",
    .summary = "device memory close to capacity",
    .detect = Detect,
};

}  // namespace stepscope
