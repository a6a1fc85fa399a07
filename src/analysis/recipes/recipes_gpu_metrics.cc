// gpu_metrics_sum (docs/recipes.md): the gpu_metrics table (`profile
// --gpu-metrics`, CUPTI PM sampling) per device and metric. A trace without
// GPU metrics gives an empty table.
#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "analysis/recipes/recipes.h"
#include "format/gpu_metric_names.h"

namespace stepscope {

// Per (device, metric): samples in scope (by their start), the time they
// cover, the mean weighted by each sample's length (a plain mean where every
// sample has length 0), min and max.
StatusOr<Table> GpuMetricsSum(const TraceModel& m, const RecipeOptions& o) {
  struct Row {
    int64_t samples = 0;
    int64_t covered_ns = 0;
    double weighted = 0, plain = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
  };
  std::map<std::pair<uint32_t, StringId>, Row> rows;
  for (const GpuMetricRecord& g : m.gpu_metrics()) {
    if (!o.scope.HasDevice(g.device) || !o.scope.InTime(g.start_ns)) continue;
    Row& r = rows[{g.device, g.metric}];
    const int64_t len = std::max<int64_t>(g.end_ns - g.start_ns, 0);
    ++r.samples;
    r.covered_ns += len;
    r.weighted += g.value * static_cast<double>(len);
    r.plain += g.value;
    r.min = std::min(r.min, g.value);
    r.max = std::max(r.max, g.value);
  }
  Table t({{"device", "Device", true},
           {"metric", "Metric", false},
           {"unit", "Unit", false},
           {"samples", "Samples", true},
           {"covered_ns", "Covered (ns)", true},
           {"mean", "Mean", true},
           {"min", "Min", true},
           {"max", "Max", true},
           {"name", "CUPTI Metric", false}});
  // The order of format/gpu_metric_names.h within a device; unknown names after, by name.
  std::vector<std::pair<std::pair<uint32_t, size_t>,
                        const std::pair<const std::pair<uint32_t, StringId>, Row>*>>
      order;
  const size_t known = std::size(kGpuMetricDefs);
  for (const auto& kv : rows) {
    const std::string& name = m.String(kv.first.second);
    size_t rank = known;
    for (size_t i = 0; i < known; ++i) {
      if (kGpuMetricDefs[i].name == name) rank = i;
    }
    order.push_back({{kv.first.first, rank}, &kv});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, kv] : order) {
    const std::string& name = m.String(kv->first.second);
    const GpuMetricDef* def = FindGpuMetric(name);
    const Row& r = kv->second;
    const double mean = r.covered_ns > 0 ? r.weighted / static_cast<double>(r.covered_ns)
                                         : r.plain / static_cast<double>(r.samples);
    const int decimals = def && def->unit != "%" ? 0 : 2;
    t.AddRow({Cell(kv->first.first), std::string(GpuMetricLabel(name)),
              def ? std::string(def->unit) : std::string(), Cell(r.samples), Cell(r.covered_ns),
              Cell(mean, decimals), Cell(r.min, decimals), Cell(r.max, decimals), name});
  }
  return t;
}

}  // namespace stepscope
