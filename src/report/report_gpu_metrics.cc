// The GPU metrics lanes of the report's timeline: the gpu_metrics samples
// (`profile --gpu-metrics`, CUPTI PM sampling) of the timeline's window as
// counter lanes, per device tensor_active and sm_active (%) and DRAM read +
// write (B/s: dram_read_bw + dram_write_bw of the same sample interval), each
// lane after its device's stream lanes so that it lines up with the kernels.
//
// Downsampling: a lane keeps every sample (its start and value, held to the
// next) while the window holds at most ReportOptions::max_counter_points of
// them. Past that, the window is cut into that many equal buckets (the last
// one shorter) and each bucket's point is the mean of the samples over it,
// weighted by how much of the bucket each covers; a bucket no sample covers
// gets no point. So a lane never has more points than the bound, whatever the
// trace's length or sampling interval, and the area under it is kept.
#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "format/gpu_metric_names.h"
#include "report/report_sources.h"

namespace stepscope {
namespace {

struct Sample {
  int64_t start_ns, end_ns;  // absolute, clipped to the window
  double value;
};

// What a lane draws: one metric, or the sum of two over the same intervals.
struct LaneDef {
  std::string_view metric;  // the lane's name and Counter::metric
  std::string_view first, second;
  std::string_view unit;
};

constexpr LaneDef kLaneDefs[] = {
    {"tensor_active", "tensor_active", "", "%"},
    {"sm_active", "sm_active", "", "%"},
    {"dram_read_bw+dram_write_bw", "dram_read_bw", "dram_write_bw", "B/s"},
};

// The lane's samples: the first metric's, or where both were sampled over
// the same interval, the sum of the two.
std::vector<Sample> LaneSamples(const LaneDef& def,
                                const std::map<std::string_view, std::vector<Sample>>& by_label) {
  auto a = by_label.find(def.first);
  if (a == by_label.end()) return {};
  if (def.second.empty()) return a->second;
  auto b = by_label.find(def.second);
  if (b == by_label.end()) return {};
  std::map<std::pair<int64_t, int64_t>, std::pair<double, int>> sum;
  for (const auto* list : {&a->second, &b->second}) {
    for (const Sample& s : *list) {
      auto& [v, n] = sum[{s.start_ns, s.end_ns}];
      v += s.value;
      ++n;
    }
  }
  std::vector<Sample> out;
  for (const auto& [key, vn] : sum) {
    if (vn.second == 2) out.push_back({key.first, key.second, vn.first});
  }
  return out;
}

// The samples (in start order) as at most max_points points (the rule above).
void Downsample(const std::vector<Sample>& s, int64_t lo, int64_t hi, int max_points,
                int64_t origin, StepTimeline::Counter* c) {
  c->samples = static_cast<int64_t>(s.size());
  c->end_ns = s.back().end_ns - origin;
  auto add = [&](int64_t t, double v) {
    c->t_ns.push_back(t - origin);
    c->values.push_back(v);
    c->max = std::max(c->max, v);
  };
  if (s.size() <= static_cast<size_t>(max_points)) {
    for (const Sample& x : s) add(x.start_ns, x.value);
    return;
  }
  const int64_t w = (hi - lo + max_points - 1) / max_points;
  c->bucket_ns = w;
  size_t j = 0;  // the first sample that ends after the bucket's start
  for (int64_t b = lo; b < hi; b += w) {
    const int64_t be = std::min(b + w, hi);
    while (j < s.size() && s[j].end_ns <= b) ++j;
    double sum = 0;
    int64_t covered = 0;
    for (size_t k = j; k < s.size() && s[k].start_ns < be; ++k) {
      const int64_t ov = std::min(s[k].end_ns, be) - std::max(s[k].start_ns, b);
      if (ov <= 0) continue;
      sum += s[k].value * static_cast<double>(ov);
      covered += ov;
    }
    if (covered > 0) add(b, sum / static_cast<double>(covered));
  }
}

// Where a device's lanes go: after its last stream (or stream annotation)
// lane; a device without one in the window, after the leading findings and
// GPU lanes.
size_t LanePosition(const StepTimeline& t, uint32_t device) {
  const std::string dev = "GPU " + std::to_string(device) + " ";
  auto starts = [](const std::string& s, const std::string& p) {
    return s.compare(0, p.size(), p) == 0;
  };
  size_t at = 0, lead = 0;
  bool found = false;
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const std::string& k = t.lanes[i].kind;
    const bool gpu = k == "gpu" || k == "gpu_annotation" || k == "gpu_metric";
    if (lead == i && (gpu || k == "finding")) lead = i + 1;
    const bool mine = k == "gpu_metric" ? starts(t.lanes[i].name, dev)
                                        : gpu && starts(t.lanes[i].name, dev + "stream ");
    if (mine) {
      at = i + 1;
      found = true;
    }
  }
  return found ? at : lead;
}

void InsertLane(StepTimeline* t, size_t at, StepTimeline::Lane lane) {
  const int32_t pos = static_cast<int32_t>(at);
  for (StepTimeline::Event& e : t->events)
    if (e.lane >= pos) ++e.lane;
  for (StepTimeline::Counter& c : t->counters)
    if (c.lane >= pos) ++c.lane;
  t->lanes.insert(t->lanes.begin() + pos, std::move(lane));
}

}  // namespace

void AddGpuMetricLanes(const TraceModel& m, const ReportOptions& o, StepTimeline* t) {
  if (t->window.empty() || m.gpu_metrics().empty()) return;
  const int64_t origin = m.origin_ns();
  const int64_t lo = t->start_ns + origin, hi = t->end_ns + origin;
  // Per device, the samples of each label in the window (the model keeps
  // them by device, metric and start).
  std::map<uint32_t, std::map<std::string_view, std::vector<Sample>>> by_device;
  std::map<StringId, std::string_view> labels;
  for (const GpuMetricRecord& g : m.gpu_metrics()) {
    if (g.end_ns <= lo || g.start_ns >= hi) continue;
    auto [it, added] = labels.emplace(g.metric, std::string_view{});
    if (added) it->second = GpuMetricLabel(m.String(g.metric));
    by_device[g.device][it->second].push_back(
        {std::max(g.start_ns, lo), std::min(g.end_ns, hi), g.value});
  }
  const int max_points = std::max(1, o.max_counter_points);
  for (auto& [device, by_label] : by_device) {
    for (auto& [label, samples] : by_label) {
      std::sort(samples.begin(), samples.end(),
                [](const Sample& a, const Sample& b) { return a.start_ns < b.start_ns; });
    }
    for (const LaneDef& def : kLaneDefs) {
      std::vector<Sample> s = LaneSamples(def, by_label);
      if (s.empty()) continue;
      StepTimeline::Counter c;
      c.device = device;
      c.metric = def.metric;
      c.unit = def.unit;
      Downsample(s, lo, hi, max_points, origin, &c);
      if (c.t_ns.empty()) continue;
      if (c.unit == "%") c.max = std::max(c.max, 100.0);
      const size_t at = LanePosition(*t, device);
      const std::string what = def.second.empty() ? std::string(def.metric) : "DRAM read+write";
      InsertLane(t, at,
                 {"GPU " + std::to_string(device) + " " + what + " " + std::string(def.unit),
                  "gpu_metric"});
      c.lane = static_cast<int32_t>(at);
      t->counters.push_back(std::move(c));
    }
  }
}

}  // namespace stepscope
