// The GPU metrics as the rules read them (gpu_metric_samples.h).
#include "analysis/rules/gpu_metric_samples.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "analysis/rules/rule.h"
#include "common/kernel_names.h"
#include "format/gpu_metric_names.h"

namespace stepscope {
namespace {

// Overlap of [s, e) with sorted, disjoint windows.
int64_t OverlapWith(const std::vector<Interval>& windows, int64_t s, int64_t e) {
  int64_t ns = 0;
  auto it = std::partition_point(windows.begin(), windows.end(),
                                 [&](const Interval& w) { return w.end <= s; });
  for (; it != windows.end() && it->start < e; ++it) {
    ns += std::max<int64_t>(0, std::min(e, it->end) - std::max(s, it->start));
  }
  return ns;
}

// Where a metric's value goes in a sample, by its label; nullptr: a metric
// the rules do not read.
double* Slot(MetricSample* s, std::string_view label) {
  if (label == "gr_active") return &s->gr_active;
  if (label == "sm_active") return &s->sm_active;
  if (label == "tensor_active") return &s->tensor_active;
  if (label == "dram_read_bw") return &s->dram_read_bps;
  if (label == "dram_write_bw") return &s->dram_write_bps;
  return nullptr;
}

}  // namespace

std::vector<MetricSample> MetricSamples(const TraceModel& m, uint32_t device,
                                        const std::vector<Interval>& windows) {
  std::map<std::pair<int64_t, int64_t>, MetricSample> by_interval;
  std::unordered_map<StringId, std::string_view> labels;
  for (const GpuMetricRecord& g : m.gpu_metrics()) {
    if (g.device != device || g.end_ns < g.start_ns) continue;
    const int64_t w = OverlapWith(windows, g.start_ns, g.end_ns);
    if (w <= 0) continue;
    auto l = labels.find(g.metric);
    if (l == labels.end()) l = labels.emplace(g.metric, GpuMetricLabel(m.String(g.metric))).first;
    MetricSample& s = by_interval[{g.start_ns, g.end_ns}];
    s.start_ns = g.start_ns;
    s.end_ns = g.end_ns;
    s.weight_ns = w;
    if (double* v = Slot(&s, l->second)) *v = g.value;
  }
  std::vector<MetricSample> v;
  v.reserve(by_interval.size());
  for (auto& [k, s] : by_interval) v.push_back(s);
  return v;
}

int SampleStep(const RuleContext& c, const MetricSample& s) {
  for (int64_t t : {s.start_ns + (s.end_ns - s.start_ns) / 2, s.start_ns, s.end_ns}) {
    const int st = c.StepAtWindow(t);
    if (st >= 0) return st;
  }
  return -1;
}

double WeightedMean(const std::vector<MetricSample>& samples,
                    double (*value)(const MetricSample&)) {
  double sum = 0;
  int64_t ns = 0;
  for (const MetricSample& s : samples) {
    const double x = value(s);
    if (x < 0 || s.weight_ns <= 0) continue;
    sum += x * static_cast<double>(s.weight_ns);
    ns += s.weight_ns;
  }
  return ns > 0 ? sum / static_cast<double>(ns) : -1;
}

std::vector<Interval> FlaggedStretches(const std::vector<MetricSample>& samples,
                                       const std::vector<char>& flagged,
                                       const std::vector<Interval>& windows, int64_t join_ns) {
  std::vector<Interval> joined;
  for (size_t i = 0; i < samples.size() && i < flagged.size(); ++i) {
    if (!flagged[i]) continue;
    const MetricSample& s = samples[i];
    if (!joined.empty() && s.start_ns - joined.back().end <= join_ns) {
      joined.back().end = std::max(joined.back().end, s.end_ns);
    } else {
      joined.push_back({s.start_ns, s.end_ns});
    }
  }
  // Clipped to the windows: a stretch across two steps is two there.
  std::vector<Interval> v;
  for (const Interval& j : joined) {
    auto it = std::partition_point(windows.begin(), windows.end(),
                                   [&](const Interval& w) { return w.end <= j.start; });
    for (; it != windows.end() && it->start < j.end; ++it) {
      const Interval x{std::max(j.start, it->start), std::min(j.end, it->end)};
      if (x.end > x.start) v.push_back(x);
    }
  }
  MergeIntervals(&v);
  return v;
}

std::vector<KernelShare> KernelsIn(const TraceModel& m, uint32_t device,
                                   const std::vector<Interval>& intervals) {
  std::unordered_map<StringId, KernelShare> by_name;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kKernel || o.device != device) continue;
    const int64_t ns = OverlapWith(intervals, o.start_ns, o.end_ns);
    if (ns <= 0) continue;
    KernelShare& k = by_name[m.kernels()[o.index].name];
    k.name = m.kernels()[o.index].name;
    k.ns += ns;
    ++k.count;
  }
  std::vector<KernelShare> v;
  for (const auto& [n, k] : by_name) v.push_back(k);
  std::sort(v.begin(), v.end(), [](const KernelShare& a, const KernelShare& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.name < b.name;
  });
  return v;
}

std::string TopKernelsText(const TraceModel& m, const std::vector<KernelShare>& kernels, size_t n) {
  int64_t total = 0;
  for (const KernelShare& k : kernels) total += k.ns;
  std::string s;
  for (size_t i = 0; i < kernels.size() && i < n; ++i) {
    const KernelShare& k = kernels[i];
    s += (i ? ", " : "") + std::string(KernelBaseName(m.String(k.name)).substr(0, 60)) + " " +
         FormatDuration(k.ns) + " (" +
         FormatFixed(total > 0 ? 100.0 * static_cast<double>(k.ns) / total : 0.0, 0) + "%)";
  }
  return s.empty() ? "no kernel" : s;
}

DramPeak DramPeakOf(const RuleContext& c) {
  DramPeak p;
  const MachineValue bench = c.machine.Get("dram_bw");
  if (bench.known() && bench.bench) {
    p.bps = bench.value;
    p.source = "measured: dram_bw of the " + bench.source;
    return p;
  }
  const DeviceRecord* d = c.device >= 0 ? c.m.Device(static_cast<uint32_t>(c.device)) : nullptr;
  if (d && d->memory_bandwidth_bytes_per_s > 0) {
    p.bps = static_cast<double>(d->memory_bandwidth_bytes_per_s);
    p.source =
        "the device's peak as CUDA reports it, devices.memory_bandwidth_bytes_per_s: the "
        "datasheet figure; no stepscope bench dram_bw for this GPU";
  }
  return p;
}

bool MemoryBoundSample(const MetricSample& s, const DramPeak& peak) {
  const double bw = s.dram_bps();
  return peak.bps > 0 && bw >= 0 && 100.0 * bw / peak.bps >= kMemoryBoundPctOfPeak;
}

std::vector<FindingExample> LongestStretchExamples(const RuleContext& c,
                                                   const std::vector<Interval>& stretches,
                                                   size_t n) {
  std::vector<Interval> longest = stretches;
  std::stable_sort(longest.begin(), longest.end(), [](const Interval& a, const Interval& b) {
    return a.end - a.start > b.end - b.start;
  });
  if (longest.size() > n) longest.resize(n);
  std::vector<FindingExample> out;
  for (const Interval& iv : longest) {
    const int s = c.StepAtWindow((iv.start + iv.end) / 2);
    out.push_back({s >= 0 ? c.steps.steps[s].number : -1, iv.start, iv.end, "", 0});
  }
  return out;
}

}  // namespace stepscope
