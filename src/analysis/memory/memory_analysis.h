// `stepscope memory` as a library: everything the CLI and the HTML report show
// about memory, computed once from a trace (and the PyTorch memory file beside
// it, when there is one).
#pragma once

#include <string>
#include <vector>

#include "analysis/memory/memory_load.h"
#include "analysis/memory/memory_model.h"
#include "analysis/memory/nvtx_context.h"
#include "analysis/memory/torch_allocator_model.h"
#include "analysis/memory/torch_memory_file.h"
#include "common/status.h"
#include "store/trace_reader.h"

namespace stepscope::memory {

struct MemoryOptions {
  // The PyTorch memory file: "" looks beside the trace (TorchMemoryCandidates);
  // "none" ignores it; any other value must name a readable file.
  std::string torch_memory_path;
};

struct MemoryAnalysis {
  MemoryTrace trace;
  NvtxContext nvtx;
  MemoryProfile profile;                // allocations carry their NVTX range and step
  std::vector<TimelinePoint> timeline;  // CUPTI/host series, one point per event

  bool has_torch = false;
  std::string torch_path;
  TorchMemoryFile torch;
  std::vector<TorchDeviceProfile> torch_devices;
  bool torch_clock_aligned = true;  // false: PyTorch times do not fall in the trace's time range

  std::vector<std::string> notes;  // things the reader should know (shown by the CLI)

  // NVTX context of a moment: the innermost range on `tid` (or, with tid 0,
  // on the thread that ran the step) and the step.
  NvtxAt At(uint32_t tid, int64_t ts_ns) const;
  // Seconds from the trace start (the time axis of every table).
  double Seconds(int64_t ts_ns) const;
};

// Where the PyTorch memory file of a trace may be, in the order looked for:
// TRACE.torch-memory.json, then DIR/torch-memory-PID.json (docs/memory.md).
std::vector<std::string> TorchMemoryCandidates(const std::string& trace_path, uint32_t pid);

StatusOr<MemoryAnalysis> AnalyzeMemory(const TraceReader& reader, const MemoryOptions& options);

// Bytes in use over time for every series (CUPTI/host and PyTorch), in time
// order. max_points_per_series > 0 downsamples (DownsampleTimeline): what the
// HTML report charts.
std::vector<TimelinePoint> MemoryTimeline(const MemoryAnalysis& analysis,
                                          size_t max_points_per_series = 0);

}  // namespace stepscope::memory
