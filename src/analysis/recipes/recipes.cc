#include "analysis/recipes/recipes.h"

#include <algorithm>

namespace stepscope {

const std::vector<RecipeInfo>& Recipes() {
  static const std::vector<RecipeInfo> kRecipes = {
      {"cuda_gpu_kern_sum", "GPU kernels: time share and duration statistics per kernel name", true,
       CudaGpuKernSum},
      {"cuda_api_sum", "CUDA runtime/driver API calls: duration statistics per function", true,
       CudaApiSum},
      {"cuda_gpu_mem_time_sum", "GPU memcpy/memset: duration statistics per operation", true,
       CudaGpuMemTimeSum},
      {"cuda_gpu_mem_size_sum", "GPU memcpy/memset: size statistics per operation (MB)", true,
       CudaGpuMemSizeSum},
      {"nvtx_sum", "NVTX ranges: duration statistics per range name", true, NvtxSum},
      {"nvtx_gpu_proj_sum",
       "NVTX ranges projected onto the GPU through the work launched inside them", true,
       NvtxGpuProjSum},
      {"gpu_time_util", "GPU utilization per time bucket, per device and stream", true,
       GpuTimeUtil},
      {"cuda_gpu_kern_pace", "one kernel's instances over time: duration, gap, period (--name)",
       false, CudaGpuKernPace},
      {"nvtx_pace", "one NVTX range's instances over time (--name; default: the steps)", false,
       NvtxPace},
      {"um_sum", "unified memory per managed allocation: migrations each way, faults", false,
       UmSum},
      {"um_total_sum", "unified memory totals per event kind: count, bytes/faults, throughput",
       false, UmTotalSum},
      {"um_cpu_page_faults_sum", "unified-memory CPU page faults per faulting instruction", false,
       UmCpuPageFaultsSum},
      {"um_step_share", "per step: UM migrations vs explicit copies, share of ops and bytes", false,
       UmStepShare},
      {"gpu_metrics_sum",
       "GPU metrics (profile --gpu-metrics): per device and metric, time-weighted mean, min, max",
       false, GpuMetricsSum},
      {"osrt_sum", "OS-runtime waits (futex, poll, read, ...) per function: duration statistics",
       false, OsrtSum},
      {"python_hotspots",
       "Python lines by self time (from host samples, else python_function spans)", false,
       PythonHotspotsRecipe},
      {"thread_states", "per host thread: time and share in each state (running, blocked_...)",
       false, ThreadStates},
  };
  return kRecipes;
}

const RecipeInfo* FindRecipe(const std::string& name) {
  for (const RecipeInfo& r : Recipes()) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

std::vector<Column> StatColumns(const char* count_title) {
  return {{"time_pct", "Time (%)", true},   {"total_ns", "Total Time (ns)", true},
          {"instances", count_title, true}, {"avg_ns", "Avg (ns)", true},
          {"med_ns", "Med (ns)", true},     {"min_ns", "Min (ns)", true},
          {"max_ns", "Max (ns)", true},     {"stddev_ns", "StdDev (ns)", true}};
}

std::vector<Cell> StatCells(const DurationStats& s, int64_t grand_total) {
  const double pct = grand_total > 0 ? 100.0 * static_cast<double>(s.total) / grand_total : 0.0;
  return {Cell(pct, 1),      Cell(s.total), Cell(s.count), Cell(s.mean, 1),
          Cell(s.median, 1), Cell(s.min),   Cell(s.max),   Cell(s.stddev, 1)};
}

namespace {

// Groups durations by a small integer key and emits one stats row per key,
// sorted by total time (descending), then by label.
struct Grouper {
  std::vector<std::vector<int64_t>> durations;
  void Add(size_t key, int64_t d) {
    if (key >= durations.size()) durations.resize(key + 1);
    durations[key].push_back(d);
  }
  template <typename LabelFn>
  Table Emit(const std::string& label_name, const std::string& label_title, LabelFn label,
             const char* count_title = "Instances") {
    struct Row {
      DurationStats s;
      std::string label;
    };
    std::vector<Row> rows;
    int64_t grand = 0;
    for (size_t k = 0; k < durations.size(); ++k) {
      if (durations[k].empty()) continue;
      rows.push_back({Summarize(&durations[k]), label(k)});
      grand += rows.back().s.total;
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return a.s.total != b.s.total ? a.s.total > b.s.total : a.label < b.label;
    });
    std::vector<Column> cols = StatColumns(count_title);
    cols.push_back({label_name, label_title, false});
    Table t(cols);
    for (const Row& r : rows) {
      std::vector<Cell> cells = StatCells(r.s, grand);
      cells.push_back(r.label);
      t.AddRow(std::move(cells));
    }
    return t;
  }
};

}  // namespace

StatusOr<Table> CudaGpuKernSum(const TraceModel& m, const RecipeOptions& o) {
  Grouper g;
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.kind != GpuOpKind::kKernel || !o.scope.IncludesOp(m, op)) continue;
    g.Add(m.kernels()[op.index].name, op.end_ns - op.start_ns);
  }
  return g.Emit("name", "Name", [&](size_t k) { return m.String(static_cast<StringId>(k)); });
}

StatusOr<Table> CudaApiSum(const TraceModel& m, const RecipeOptions& o) {
  Grouper g;
  for (const ApiRecord& a : m.apis()) {
    if (!o.scope.InTime(a.start_ns)) continue;
    g.Add(a.name, std::max<int64_t>(0, a.end_ns - a.start_ns));
  }
  return g.Emit(
      "name", "Name", [&](size_t k) { return m.String(static_cast<StringId>(k)); }, "Num Calls");
}

namespace {
// Memory operations are keyed by copy kind (0..10) and memset (11).
constexpr size_t kMemsetKey = 11;
std::string MemOpLabel(size_t k) {
  if (k == kMemsetKey) return "[CUDA memset]";
  MemcpyRecord r{};
  r.copy_kind = static_cast<CopyKind>(k);
  return MemcpyOpName(r);
}
}  // namespace

StatusOr<Table> CudaGpuMemTimeSum(const TraceModel& m, const RecipeOptions& o) {
  Grouper g;
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.kind == GpuOpKind::kKernel || !o.scope.IncludesOp(m, op)) continue;
    const size_t key = op.kind == GpuOpKind::kMemset
                           ? kMemsetKey
                           : static_cast<size_t>(m.memcpys()[op.index].copy_kind) % kMemsetKey;
    g.Add(key, op.end_ns - op.start_ns);
  }
  return g.Emit("operation", "Operation", MemOpLabel, "Count");
}

StatusOr<Table> CudaGpuMemSizeSum(const TraceModel& m, const RecipeOptions& o) {
  std::vector<std::vector<int64_t>> bytes(kMemsetKey + 1);
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.kind == GpuOpKind::kKernel || !o.scope.IncludesOp(m, op)) continue;
    if (op.kind == GpuOpKind::kMemset) {
      bytes[kMemsetKey].push_back(static_cast<int64_t>(m.memsets()[op.index].bytes));
    } else {
      const MemcpyRecord& c = m.memcpys()[op.index];
      bytes[static_cast<size_t>(c.copy_kind) % kMemsetKey].push_back(static_cast<int64_t>(c.bytes));
    }
  }
  struct Row {
    DurationStats s;
    std::string label;
  };
  std::vector<Row> rows;
  for (size_t k = 0; k < bytes.size(); ++k) {
    if (!bytes[k].empty()) rows.push_back({Summarize(&bytes[k]), MemOpLabel(k)});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : a.label < b.label;
  });
  Table t({{"total_mb", "Total (MB)", true},
           {"count", "Count", true},
           {"avg_mb", "Avg (MB)", true},
           {"med_mb", "Med (MB)", true},
           {"min_mb", "Min (MB)", true},
           {"max_mb", "Max (MB)", true},
           {"stddev_mb", "StdDev (MB)", true},
           {"operation", "Operation", false}});
  const double mb = 1e6;
  for (const Row& r : rows) {
    t.AddRow({Cell(r.s.total / mb, 3), Cell(r.s.count), Cell(r.s.mean / mb, 3),
              Cell(r.s.median / mb, 3), Cell(r.s.min / mb, 3), Cell(r.s.max / mb, 3),
              Cell(r.s.stddev / mb, 3), r.label});
  }
  return t;
}

}  // namespace stepscope
