// The GPU-timeline recipes: cuda_gpu_kern_pace and gpu_time_util.
#include <algorithm>
#include <map>

#include "analysis/recipes/recipes.h"

namespace stepscope {

StatusOr<Table> CudaGpuKernPace(const TraceModel& m, const RecipeOptions& o) {
  // The kernel: --name (exact, else the first name containing it), else the
  // kernel with the largest total time in scope.
  std::vector<int64_t> total(m.strings().size(), 0);
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.kind == GpuOpKind::kKernel && o.scope.IncludesOp(m, op)) {
      total[m.kernels()[op.index].name] += op.end_ns - op.start_ns;
    }
  }
  int64_t pick = -1;
  if (!o.name.empty()) {
    for (size_t k = 0; k < total.size() && pick < 0; ++k) {
      if (total[k] > 0 && m.String(static_cast<StringId>(k)) == o.name)
        pick = static_cast<int64_t>(k);
    }
    for (size_t k = 0; k < total.size() && pick < 0; ++k) {
      if (total[k] > 0 && m.String(static_cast<StringId>(k)).find(o.name) != std::string::npos) {
        pick = static_cast<int64_t>(k);
      }
    }
  } else {
    for (size_t k = 0; k < total.size(); ++k) {
      if (total[k] > 0 && (pick < 0 || total[k] > total[pick])) pick = static_cast<int64_t>(k);
    }
  }
  Table t({{"instance", "Instance", true},
           {"device", "Device", true},
           {"stream", "Stream", true},
           {"start_ns", "Start (ns)", true},
           {"duration_ns", "Duration (ns)", true},
           {"gap_ns", "Gap (ns)", true},
           {"period_ns", "Period (ns)", true},
           {"name", "Name", false}});
  if (pick < 0) return t;
  const std::string& name = m.String(static_cast<StringId>(pick));
  int64_t n = 0, prev_start = 0, prev_end = 0;
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.kind != GpuOpKind::kKernel || m.kernels()[op.index].name != pick ||
        !o.scope.IncludesOp(m, op)) {
      continue;
    }
    t.AddRow({Cell(n), Cell(static_cast<int64_t>(op.device)), Cell(op.stream),
              Cell(op.start_ns - m.origin_ns()), Cell(op.end_ns - op.start_ns),
              n ? Cell(op.start_ns - prev_end) : Cell(""),
              n ? Cell(op.start_ns - prev_start) : Cell(""), name});
    prev_start = op.start_ns;
    prev_end = op.end_ns;
    ++n;
  }
  return t;
}

// Utilization per bucket: the scope's GPU span (first op start to last op
// end) is cut into `buckets` equal buckets; for each device, and each stream
// of it, the busy time is the union of its ops clipped to the bucket.
StatusOr<Table> GpuTimeUtil(const TraceModel& m, const RecipeOptions& o) {
  Table t({{"device", "Device", true},
           {"stream", "Stream", false},
           {"bucket", "Bucket", true},
           {"start_ns", "Start (ns)", true},
           {"end_ns", "End (ns)", true},
           {"busy_ns", "Busy (ns)", true},
           {"util_pct", "Util (%)", true}});
  // (device, stream) -> merged busy intervals; stream -1 = the whole device.
  std::map<std::pair<int64_t, int64_t>, std::vector<Interval>> merged;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto add = [](std::vector<Interval>* v, int64_t s, int64_t e) {
    if (!v->empty() && s <= v->back().end) {
      v->back().end = std::max(v->back().end, e);
    } else {
      v->push_back({s, e});
    }
  };
  for (const GpuOp& op : m.gpu_ops()) {
    if (!o.scope.IncludesOp(m, op) || op.end_ns <= op.start_ns) continue;
    lo = std::min(lo, op.start_ns);
    hi = std::max(hi, op.end_ns);
    add(&merged[{op.device, -1}], op.start_ns, op.end_ns);
    add(&merged[{op.device, static_cast<int64_t>(op.stream)}], op.start_ns, op.end_ns);
  }
  if (merged.empty() || o.buckets <= 0) return t;
  const int64_t n = o.buckets;
  const int64_t span = hi - lo;
  for (const auto& [key, v] : merged) {
    size_t i = 0;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t b0 = lo + span * b / n, b1 = lo + span * (b + 1) / n;
      int64_t busy = 0;
      while (i < v.size() && v[i].end <= b0) ++i;
      for (size_t j = i; j < v.size() && v[j].start < b1; ++j) {
        busy += std::min(v[j].end, b1) - std::max(v[j].start, b0);
      }
      t.AddRow({Cell(key.first), key.second < 0 ? Cell("all") : Cell(std::to_string(key.second)),
                Cell(b), Cell(b0 - m.origin_ns()), Cell(b1 - m.origin_ns()), Cell(busy),
                Cell(b1 > b0 ? 100.0 * busy / (b1 - b0) : 0.0, 1)});
    }
  }
  return t;
}

}  // namespace stepscope
