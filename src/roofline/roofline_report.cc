#include "roofline/roofline_report.h"

#include <algorithm>

#include "common/strings.h"
#include "store/roofline_rows.h"

namespace stepscope {

RooflineReport BuildReport(const Selection& sel, const ProfileResults& results,
                           std::vector<std::string>* warnings) {
  RooflineReport r;
  r.step = sel.has_step ? sel.step.number : -1;
  r.gpu_name = results.device.name;
  r.uuid = results.device.uuid;
  std::vector<RooflineEntry> entries(sel.targets.size());
  for (size_t i = 0; i < sel.targets.size(); ++i) entries[i].target = sel.targets[i];
  struct Sum {
    double all = 0, memory = 0;
    int n_all = 0, n_memory = 0;
  };
  std::vector<std::map<std::string, Sum>> sums(entries.size());
  for (const ProfileInstance& inst : results.instances) {
    if (inst.target < 0 || static_cast<size_t>(inst.target) >= entries.size()) {
      warnings->push_back("result line for unknown kernel #" + std::to_string(inst.target) +
                          " ignored");
      continue;
    }
    if (inst.ranges != 1) {
      warnings->push_back("launch " + std::to_string(inst.launch_index) + " of " +
                          ShortKernelName(entries[inst.target].target.name, 60) + ": " +
                          std::to_string(inst.ranges) +
                          " ranges in its profiling window (expected 1); left out");
      continue;
    }
    RooflineEntry& e = entries[static_cast<size_t>(inst.target)];
    const bool mem = inst.group == "memory";
    for (const auto& [k, v] : inst.counters) {
      Sum& s = sums[static_cast<size_t>(inst.target)][k];
      (mem ? s.memory : s.all) += v;
      (mem ? s.n_memory : s.n_all)++;
    }
    if (e.instances == 0 || inst.launch_index < e.first_launch_index) {
      e.first_launch_index = inst.launch_index;
    }
    e.instances++;
  }
  // Launches alternate metric groups (range_profiler.cc): "all" (FLOPs, and
  // time and bytes under kernel replay) and "memory" (time and bytes from
  // one unreplayed run). A counter the memory launches have comes from them
  // only; every counter is stored as its mean over the launches it came
  // from times the instance count, so that counters / instances is a mean.
  for (size_t i = 0; i < entries.size(); ++i) {
    for (const auto& [k, s] : sums[i]) {
      const double mean = s.n_memory > 0 ? s.memory / s.n_memory : s.all / std::max(1, s.n_all);
      entries[i].counters[k] = mean * entries[i].instances;
    }
  }
  for (RooflineEntry& e : entries) {
    if (e.instances > 0) {
      r.entries.push_back(std::move(e));
    } else {
      warnings->push_back("no launch of " + ShortKernelName(e.target.name, 60) + " grid " +
                          Dim3Text(e.target.grid) + " block " + Dim3Text(e.target.block) +
                          " was profiled");
    }
  }
  return r;
}

void EvaluateReport(RooflineReport* r) {
  for (RooflineEntry& e : r->entries) {
    e.work = WorkFromCounters(e.counters, e.instances);
    e.result = Evaluate(e.work, r->ceilings);
  }
}

std::string ShortKernelName(const std::string& name, size_t max) {
  std::string s = name;
  if (StartsWith(s, "void ")) s = s.substr(5);
  // Drop the parameter list: the ')' at the end and its matching '('.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        if (i > 0) s = s.substr(0, i);
        break;
      }
    }
  }
  if (s.size() > max && max > 3) s = s.substr(0, max - 3) + "...";
  return s;
}

Table RooflineTable(const RooflineReport& r, bool short_names) {
  Table t({{"rank", "#", true},
           {"instances", "n", true},
           {"avg_us", "avg us", true},
           {"gflop", "GFLOP", true},
           {"tflops", "TFLOP/s", true},
           {"intensity", "FLOP/B", true},
           {"dram_gbs", "DRAM GB/s", true},
           {"precision", "precision", false},
           {"bound", "bound by", false},
           {"pct_of_bound", "% of bound", true},
           {"kind", "kind", false},
           {"name", "kernel", false}});
  for (const RooflineEntry& e : r.entries) {
    const RooflineResult& x = e.result;
    double n = e.instances > 0 ? e.instances : 1;
    t.AddRow({e.target.rank, e.instances, Cell(e.work.duration_ns / n / 1e3, 1),
              Cell(x.flops / n / 1e9, 3), Cell(x.flops_per_s / 1e12, 1), Cell(x.intensity_dram, 2),
              Cell(x.dram_bytes_per_s / 1e9, 1), x.precision.empty() ? "-" : x.precision,
              x.bound.empty() ? "-" : x.bound, Cell(x.pct_of_bound, 1), x.bound_kind,
              short_names ? ShortKernelName(e.target.name, 70) : e.target.name});
  }
  return t;
}

std::vector<ChartRoof> RoofsFromCeilings(const Ceilings& c) {
  std::vector<ChartRoof> roofs;
  for (const CeilingKey& k : CeilingKeys()) {
    std::string key = k.key;
    double v = c.Get(key);
    if (v <= 0) continue;
    if (key == "dram_bw" || key == "l2_bw") {
      roofs.push_back({std::string(k.label) + " " + FormatFixed(v / 1e12, 2) + " TB/s", true, v});
    } else if (std::string(k.unit) == "FLOP/s") {
      roofs.push_back(
          {std::string(k.label) + " " + FormatFixed(v / 1e12, 1) + " TFLOP/s", false, v});
    }
  }
  return roofs;
}

std::string ReportSvg(const RooflineReport& r) {
  std::vector<ChartPoint> points;
  for (const RooflineEntry& e : r.entries) {
    std::string label = ShortKernelName(e.target.name, 40) + "  " +
                        FormatFixed(e.result.flops_per_s / 1e12, 1) + " TFLOP/s, " +
                        FormatFixed(e.result.pct_of_bound, 0) + "% of " +
                        (e.result.bound.empty() ? "?" : e.result.bound);
    points.push_back({label, e.result.intensity_dram, e.result.flops_per_s});
  }
  std::string title = "Roofline: " + r.gpu_name +
                      (r.step >= 0 ? ", step " + std::to_string(r.step) : std::string());
  return RooflineSvg(title, RoofsFromCeilings(r.ceilings), points);
}

Status StoreRoofline(const std::string& trace_path, const RooflineReport& r) {
  static_assert(kRooflinePrecisionColumns == kPrecisionCount, "one roofline column a precision");
  std::vector<RooflineRow> rows;
  for (const RooflineEntry& e : r.entries) {
    const KernelWork& w = e.work;
    const RooflineResult& x = e.result;
    RooflineRow row;
    row.rank = e.target.rank;
    row.name = e.target.name;
    row.mangled = e.target.mangled;
    for (int d = 0; d < 3; ++d) row.grid[d] = e.target.grid[d];
    for (int d = 0; d < 3; ++d) row.block[d] = e.target.block[d];
    row.step = r.step;
    row.step_gpu_ns = e.target.step_gpu_ns;
    row.step_launches = e.target.step_launches;
    row.instances = e.instances;
    row.first_launch_index = e.first_launch_index;
    row.duration_ns = w.duration_ns;
    row.flops = x.flops;
    for (int p = 0; p < kPrecisionCount; ++p) row.precision_flops[p] = w.flops[p];
    row.tensor_int_ops = w.tensor_int_ops;
    row.dram_read_bytes = w.dram_read_bytes;
    row.dram_write_bytes = w.dram_write_bytes;
    row.l2_bytes = w.l2_bytes;
    row.l1_bytes = w.l1_bytes;
    row.intensity_dram = x.intensity_dram;
    row.flops_per_s = x.flops_per_s;
    row.dram_bytes_per_s = x.dram_bytes_per_s;
    row.precision = x.precision;
    row.bound = x.bound;
    row.bound_kind = x.bound_kind;
    row.pct_of_bound = x.pct_of_bound;
    row.counters_json = CountersJson(e.counters);
    rows.push_back(std::move(row));
  }
  return StoreRooflineTable(trace_path, rows, r.gpu_name + (r.uuid.empty() ? "" : " " + r.uuid),
                            CeilingsJson(r.ceilings));
}

StatusOr<RooflineReport> LoadStoredRoofline(const TraceReader& trace) {
  if (!TableExists(trace.db(), "roofline")) {
    return InvalidInput(
        trace.path() +
        ": no roofline table; run 'stepscope roofline --from TRACE -- COMMAND' first");
  }
  RooflineReport r;
  std::string device = trace.Meta("roofline_device");
  size_t gpu = device.rfind(" GPU-");
  r.gpu_name = gpu == std::string::npos ? device : device.substr(0, gpu);
  r.uuid = gpu == std::string::npos ? "" : device.substr(gpu + 1);
  std::string cj = trace.Meta("roofline_ceilings");
  if (!cj.empty()) {
    auto c = CeilingsFromJson(cj);
    if (c.ok()) r.ceilings = *c;
  }
  ASSIGN_OR_RETURN(std::vector<RooflineRow> rows, LoadRooflineTable(trace));
  for (RooflineRow& row : rows) {
    RooflineEntry e;
    e.target.rank = static_cast<int>(row.rank);
    e.target.name = std::move(row.name);
    e.target.mangled = std::move(row.mangled);
    for (int d = 0; d < 3; ++d) e.target.grid[d] = static_cast<int32_t>(row.grid[d]);
    for (int d = 0; d < 3; ++d) e.target.block[d] = static_cast<int32_t>(row.block[d]);
    r.step = row.step;
    e.target.step_gpu_ns = row.step_gpu_ns;
    e.target.step_launches = row.step_launches;
    e.instances = static_cast<int>(row.instances);
    e.first_launch_index = row.first_launch_index;
    auto counters = CountersFromJson(row.counters_json);
    if (!counters.ok()) {
      return InvalidInput(trace.path() + ": roofline row rank " + std::to_string(e.target.rank) +
                          ": counters_json: " + counters.status().message());
    }
    e.counters = std::move(*counters);
    r.entries.push_back(std::move(e));
  }
  if (r.entries.empty()) {
    return InvalidInput(
        trace.path() +
        ": no roofline results stored; run 'stepscope roofline --from TRACE -- COMMAND' first");
  }
  return r;
}

}  // namespace stepscope
