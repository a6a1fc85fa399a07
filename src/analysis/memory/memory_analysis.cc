#include "analysis/memory/memory_analysis.h"

#include <algorithm>

#include "common/file_util.h"

namespace stepscope::memory {

NvtxAt MemoryAnalysis::At(uint32_t tid, int64_t ts_ns) const {
  if (tid == 0) return nvtx.AtStepThread(ts_ns);
  return nvtx.At(tid, ts_ns);
}

double MemoryAnalysis::Seconds(int64_t ts_ns) const {
  return static_cast<double>(ts_ns - trace.start_ns) / 1e9;
}

std::vector<std::string> TorchMemoryCandidates(const std::string& trace_path, uint32_t pid) {
  std::vector<std::string> out = {trace_path + ".torch-memory.json"};
  size_t slash = trace_path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : trace_path.substr(0, slash);
  if (pid) out.push_back(dir + "/torch-memory-" + std::to_string(pid) + ".json");
  return out;
}

namespace {

Status LoadTorch(const TraceReader& reader, const MemoryOptions& opt, MemoryAnalysis* a) {
  if (opt.torch_memory_path == "none") return OkStatus();
  std::string path = opt.torch_memory_path;
  if (path.empty()) {
    for (const std::string& c : TorchMemoryCandidates(reader.path(), a->trace.pid)) {
      if (FileExists(c)) {
        path = c;
        break;
      }
    }
    if (path.empty()) return OkStatus();
  }
  auto file = ReadTorchMemoryFile(path);
  if (!file.ok()) {
    if (!opt.torch_memory_path.empty()) return file.status();
    // Found beside the trace but unreadable: the trace is still worth analyzing.
    a->notes.push_back("ignored the PyTorch memory file: " + file.status().message());
    return OkStatus();
  }
  a->has_torch = true;
  a->torch_path = path;
  a->torch = std::move(file).value();
  a->torch_devices = BuildTorchProfiles(a->torch, a->trace.wall_clock_offset_ns);

  // Clock check: PyTorch stamps its history with the Unix-epoch clock; a trace
  // on another clock (an import) would put the events outside the trace.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const TorchDeviceProfile& d : a->torch_devices) {
    for (const TimelinePoint& p : d.timeline) {
      lo = std::min(lo, p.ts_ns);
      hi = std::max(hi, p.ts_ns);
    }
  }
  constexpr int64_t kSlack = 60'000'000'000LL;
  if (lo <= hi && a->trace.end_ns > 0 &&
      (hi < a->trace.start_ns - kSlack || lo > a->trace.end_ns + kSlack)) {
    a->torch_clock_aligned = false;
    a->notes.push_back(
        "PyTorch allocator times do not fall within the trace (other clock?): "
        "its events get no step or NVTX range");
  }
  for (const TorchDeviceProfile& d : a->torch_devices) {
    if (d.history_full) {
      a->notes.push_back("gpu" + std::to_string(d.device) +
                         ": PyTorch's allocator history filled its ring (max_entries " +
                         std::to_string(a->torch.max_entries) +
                         "): the oldest events were lost; the start state comes from the final "
                         "snapshot");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<MemoryAnalysis> AnalyzeMemory(const TraceReader& reader, const MemoryOptions& opt) {
  MemoryAnalysis a;
  ASSIGN_OR_RETURN(a.trace, LoadMemoryTrace(reader));
  ASSIGN_OR_RETURN(std::vector<NvtxRecord> nvtx, reader.Nvtx());
  a.nvtx = NvtxContext(nvtx, reader.strings());
  a.profile = BuildMemoryProfile(a.trace.events, &a.timeline);
  for (Allocation& al : a.profile.allocations) {
    const AllocEvent& e = a.trace.events[al.alloc_event];
    NvtxAt at = a.nvtx.At(e.tid, e.call_ns);
    al.range = at.range;
    al.step = at.step;
  }
  if (!a.trace.finalized) {
    a.notes.push_back(
        "the trace was cut off (meta.finalized = 0): allocations live at its end "
        "are not necessarily leaks");
  }
  RETURN_IF_ERROR(LoadTorch(reader, opt, &a));
  return a;
}

std::vector<TimelinePoint> MemoryTimeline(const MemoryAnalysis& a, size_t max_points_per_series) {
  std::vector<TimelinePoint> all = a.timeline;
  for (const TorchDeviceProfile& d : a.torch_devices) {
    all.insert(all.end(), d.timeline.begin(), d.timeline.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const TimelinePoint& x, const TimelinePoint& y) {
    return x.ts_ns < y.ts_ns;
  });
  if (max_points_per_series > 0) return DownsampleTimeline(all, max_points_per_series);
  return all;
}

}  // namespace stepscope::memory
