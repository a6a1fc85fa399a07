#include "report/report_sources.h"

#include <algorithm>
#include <map>
#include <unordered_set>
#include <variant>

#include "analysis/memory/memory_analysis.h"
#include "analysis/memory/memory_report.h"
#include "analysis/model/gaps.h"
#include "analysis/model/scope.h"
#include "analysis/model/steps.h"
#include "analysis/model/timeline.h"
#include "analysis/recipes/recipes.h"
#include "analysis/rules/rules.h"
#include "common/strings.h"
#include "report/report_roofline.h"
#include "store/summary_rows.h"

namespace stepscope {
namespace {

// Reads a recipe's or memory report's Table by column name, so the report
// shows exactly the numbers the CLI prints from the same Table.
class TableView {
 public:
  explicit TableView(const Table& t) : t_(t) {}
  int Col(const std::string& name) const {
    for (size_t i = 0; i < t_.columns().size(); ++i)
      if (t_.columns()[i].name == name) return static_cast<int>(i);
    return -1;
  }
  size_t size() const { return t_.size(); }
  int64_t Int(size_t row, const std::string& col) const {
    const Cell* c = At(row, col);
    if (!c) return 0;
    if (auto* v = std::get_if<int64_t>(&c->value)) return *v;
    if (auto* v = std::get_if<double>(&c->value)) return static_cast<int64_t>(*v);
    return 0;
  }
  double Num(size_t row, const std::string& col) const {
    const Cell* c = At(row, col);
    if (!c) return 0;
    if (auto* v = std::get_if<double>(&c->value)) return *v;
    if (auto* v = std::get_if<int64_t>(&c->value)) return static_cast<double>(*v);
    return 0;
  }
  std::string Str(size_t row, const std::string& col) const {
    const Cell* c = At(row, col);
    return c ? c->Text() : "";
  }

 private:
  const Cell* At(size_t row, const std::string& col) const {
    int i = Col(col);
    if (i < 0 || row >= t_.size() || static_cast<size_t>(i) >= t_.rows()[row].size())
      return nullptr;
    return &t_.rows()[row][i];
  }
  const Table& t_;
};

Status Summary(const TraceReader& reader, const TraceModel& m, ReportSummary* s) {
  s->trace_path = reader.path();
  s->source = reader.Meta("source", "unknown");
  s->host = reader.Meta("host");
  s->command_line = reader.Meta("command_line");
  s->rank = reader.Meta("rank");
  s->world_size = reader.Meta("world_size");
  s->finalized = m.finalized();
  for (const DeviceRecord& d : m.devices()) {
    std::string name = std::to_string(d.id) + ": " + m.String(d.name);
    if (d.global_memory_bytes) name += " (" + FormatBytes(d.global_memory_bytes) + ")";
    s->devices.push_back(name);
  }
  s->origin_ns = m.origin_ns();
  s->duration_ns = m.end_ns() - m.origin_ns();
  s->kernels = static_cast<int64_t>(m.kernels().size());
  s->memcpys = static_cast<int64_t>(m.memcpys().size());
  s->memsets = static_cast<int64_t>(m.memsets().size());
  s->api_calls = static_cast<int64_t>(m.apis().size());
  s->nvtx_ranges = static_cast<int64_t>(m.nvtx().size());
  return OkStatus();
}

// `stepscope steps`: the steps, their breakdowns, and the breakdown of the
// steady steps together (or of the GPU span when there are none).
Status Steps(const TraceModel& m, const ReportOptions& o, ReportData* d) {
  StepOptions so;
  so.range_regex = o.step_regex;
  ASSIGN_OR_RETURN(StepSet set, DetectSteps(m, so));
  const int64_t origin = m.origin_ns();
  ReportStepSummary& ss = d->step_summary;
  ss.method = set.method;
  ss.pattern = set.pattern;
  ss.steady = set.stats.count;
  ss.median_ns = set.stats.median;
  ss.mean_ns = set.stats.mean;
  ss.stddev_ns = set.stats.stddev;
  ss.min_ns = set.stats.min;
  ss.max_ns = set.stats.max;
  std::vector<int64_t> steady;
  for (const Step& s : set.steps) {
    StepRow r;
    r.number = s.number;
    r.name = s.name;
    r.start_ns = s.start_ns - origin;
    r.end_ns = s.end_ns - origin;
    r.status = s.status();
    r.gpu_ops = s.gpu_ops;
    r.breakdown = s.breakdown;
    for (const StepKernel& k : s.top_kernels)
      r.top_kernels.push_back({m.String(k.name), k.total_ns, k.count});
    d->steps.push_back(std::move(r));
    if (s.steady()) {
      steady.push_back(s.number);
      Breakdown& b = d->breakdown;
      b.span += s.breakdown.span;
      b.busy += s.breakdown.busy;
      b.compute += s.breakdown.compute;
      b.communication += s.breakdown.communication;
      b.memory += s.breakdown.memory;
      b.idle += s.breakdown.idle;
    }
  }
  int64_t host_lo = INT64_MAX, host_hi = INT64_MIN;
  d->focus_start_ns = 0;
  d->focus_end_ns = m.end_ns() - origin;
  bool first = true;
  for (const Step& s : set.steps) {
    if (!s.steady()) continue;
    if (first) d->focus_start_ns = s.start_ns - origin;
    d->focus_end_ns = first ? s.end_ns - origin : std::max(d->focus_end_ns, s.end_ns - origin);
    first = false;
    host_lo = std::min(host_lo, s.range_start_ns);
    host_hi = std::max(host_hi, s.range_end_ns);
  }
  // The GPU work launched in the steady steps' host ranges: what `stats
  // --time-range` selects (scope.h: ops by the start of their launching call).
  if (!first && host_hi > host_lo) {
    d->utilization_range =
        std::to_string(host_lo - origin) + "ns:" + std::to_string(host_hi - origin + 1) + "ns";
  }
  if (!steady.empty()) {
    d->breakdown_window = "the " + std::to_string(steady.size()) + " steady step" +
                          (steady.size() > 1 ? "s" : "") + " (complete, not warm-up)";
  } else {
    const FlatTimeline& t = m.Timeline(-1);
    d->breakdown = t.Window(t.first_ns(), t.last_ns());
    d->breakdown_window = "the GPU span of the trace (no steady steps)";
  }
  return OkStatus();
}

constexpr size_t kMaxKernelRows = 2000;

// The cuda_gpu_kern_sum recipe (`stepscope stats`).
Status TopKernels(const TraceModel& m, const ReportOptions& o, ReportData* d) {
  ASSIGN_OR_RETURN(Table t, CudaGpuKernSum(m, RecipeOptions{}));
  TableView v(t);
  for (size_t i = 0; i < v.size(); ++i) {
    d->summary.kernel_time_ns += v.Int(i, "total_ns");
    if (i >= kMaxKernelRows) continue;
    KernelRow k;
    k.name = v.Str(i, "name");
    k.total_ns = v.Int(i, "total_ns");
    k.count = v.Int(i, "instances");
    k.min_ns = v.Int(i, "min_ns");
    k.max_ns = v.Int(i, "max_ns");
    k.avg_ns = v.Num(i, "avg_ns");
    k.median_ns = v.Num(i, "med_ns");
    k.percent = v.Num(i, "time_pct");
    if (static_cast<int>(i) < o.top_kernels) d->top_kernels.push_back(k);
    d->kernels.push_back(std::move(k));
  }
  return OkStatus();
}

// The gpu_time_util recipe's per-device rows (stream "all").
Status Utilization(const TraceModel& m, const ReportOptions& o, ReportData* d) {
  RecipeOptions ro;
  ro.buckets = o.utilization_buckets;
  if (!d->utilization_range.empty()) {
    ScopeSpec spec;
    spec.time_range = d->utilization_range;
    ASSIGN_OR_RETURN(ro.scope, Scope::Resolve(m, spec));
  }
  ASSIGN_OR_RETURN(Table t, GpuTimeUtil(m, ro));
  TableView v(t);
  std::map<int64_t, SeriesData> by_device;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.Str(i, "stream") != "all") continue;
    const int64_t dev = v.Int(i, "device");
    SeriesData& s = by_device[dev];
    s.device = static_cast<uint32_t>(dev);
    s.name = "GPU " + std::to_string(dev);
    const double pct = v.Num(i, "util_pct");
    if (s.values.empty() || pct > s.peak) {
      s.peak = pct;
      s.peak_t_ns = v.Int(i, "start_ns");
    }
    s.t_ns.push_back(v.Int(i, "start_ns"));
    s.values.push_back(pct);
    if (!d->utilization_bucket_ns)
      d->utilization_bucket_ns = v.Int(i, "end_ns") - v.Int(i, "start_ns");
  }
  for (auto& [dev, s] : by_device) d->utilization.push_back(std::move(s));
  return OkStatus();
}

// The gpu_metrics_sum recipe over the steady steps' GPU windows, first start
// to last end (the samples starting there: `stats -r gpu_metrics_sum
// --time-range R`); the whole trace without steady steps.
Status GpuMetrics(const TraceModel& m, ReportData* d) {
  if (m.gpu_metrics().empty()) return OkStatus();
  RecipeOptions ro;
  if (d->step_summary.steady > 0) {
    d->gpu_metrics_range =
        std::to_string(d->focus_start_ns) + "ns:" + std::to_string(d->focus_end_ns) + "ns";
    ScopeSpec spec;
    spec.time_range = d->gpu_metrics_range;
    ASSIGN_OR_RETURN(ro.scope, Scope::Resolve(m, spec));
  }
  ASSIGN_OR_RETURN(Table t, GpuMetricsSum(m, ro));
  TableView v(t);
  for (size_t i = 0; i < v.size(); ++i) {
    d->gpu_metrics.push_back({v.Int(i, "device"), v.Str(i, "metric"), v.Str(i, "unit"),
                              v.Str(i, "name"), v.Int(i, "samples"), v.Int(i, "covered_ns"),
                              v.Num(i, "mean"), v.Num(i, "min"), v.Num(i, "max")});
  }
  return OkStatus();
}

// `stepscope memory`: the GPUs' total series over time, their peaks, and
// what was live at each peak (the live_at_peak section).
Status Memory(const TraceReader& reader, const TraceModel& m, const ReportOptions& o,
              ReportData* d) {
  using namespace memory;  // NOLINT: the memory library's vocabulary
  ASSIGN_OR_RETURN(MemoryAnalysis a, AnalyzeMemory(reader, MemoryOptions{}));
  const int64_t origin = m.origin_ns();
  d->memory_unknown_frees = static_cast<int64_t>(a.profile.quality.unknown_frees);
  d->memory_notes = a.notes;
  auto charted = [](const TimelinePoint& p) {
    return p.place >= 0 && (p.kind == SeriesKind::kTotal || p.kind == SeriesKind::kTorchAllocated ||
                            p.kind == SeriesKind::kTorchReserved);
  };
  std::map<std::pair<int32_t, SeriesKind>, SeriesData> series;
  for (const TimelinePoint& p : MemoryTimeline(a, o.max_series_points)) {
    if (!charted(p)) continue;
    SeriesData& s = series[{p.place, p.kind}];
    if (s.t_ns.empty()) {
      s.device = static_cast<uint32_t>(p.place);
      s.name = PlaceName(p.place) + " " + SeriesKindName(p.kind);
    }
    s.t_ns.push_back(p.ts_ns - origin);
    s.values.push_back(static_cast<double>(p.bytes));
  }
  for (auto& [key, s] : series) {
    auto cap = a.trace.device_memory_bytes.find(s.device);
    s.capacity = cap == a.trace.device_memory_bytes.end() ? 0 : static_cast<int64_t>(cap->second);
    auto st = a.profile.series.find({key.first, key.second});
    if (st != a.profile.series.end() && st->second.peak_ns >= 0) {
      s.peak = static_cast<double>(st->second.peak_bytes);
      s.peak_t_ns = st->second.peak_ns - origin;
    } else {  // PyTorch series: their peak is the largest point
      for (size_t i = 0; i < s.values.size(); ++i) {
        if (s.values[i] > s.peak) {
          s.peak = s.values[i];
          s.peak_t_ns = s.t_ns[i];
        }
      }
    }
    d->memory.push_back(std::move(s));
  }

  memory::ReportOptions ro;
  ro.top = static_cast<size_t>(o.live_at_peak_rows);
  MemoryReport rep = BuildMemoryReport(a, reader, ro);
  const std::string total = SeriesKindName(SeriesKind::kTotal);
  for (const auto& [key, st] : a.profile.series) {
    if (key.place < 0 || key.kind != SeriesKind::kTotal || st.peak_event == kNever) continue;
    MemoryPeak p;
    p.place = PlaceName(key.place);
    p.peak_bytes = static_cast<int64_t>(st.peak_bytes);
    p.peak_t_ns = st.peak_ns - origin;
    auto cap = a.trace.device_memory_bytes.find(static_cast<uint32_t>(key.place));
    if (cap != a.trace.device_memory_bytes.end()) p.capacity = static_cast<int64_t>(cap->second);
    for (const MemorySection& sec : rep.sections) {
      TableView v(sec.table);
      for (size_t i = 0; i < v.size(); ++i) {
        if (v.Str(i, "place") != p.place || v.Str(i, "series") != total) continue;
        if (sec.name == "peaks") {
          p.step = v.Str(i, "step").empty() ? -1 : v.Int(i, "step");
          p.range = v.Str(i, "range");
        } else if (sec.name == "live_at_peak") {
          p.live.push_back({v.Str(i, "range"), v.Str(i, "api"), v.Int(i, "count"),
                            v.Int(i, "bytes"), v.Num(i, "share_pct")});
        }
      }
    }
    d->memory_peaks.push_back(std::move(p));
  }
  return OkStatus();
}

// Each step's idle time on the analyzed device by cause: the gaps `analyze`
// found in its windows (every cause kept), split among the steady steps they
// overlap, so the steady steps' sums are analyze's idle-by-cause totals; the
// warm-up and open steps get the gaps of their own windows, found the same way.
// The rest of a window's idle time on that device is "other", as in analyze.
void StepIdleCauses(const TraceModel& m, const Analysis& a, GapOptions gaps, ReportData* d) {
  gaps.keep_kernel_wait = true;
  const uint32_t dev = static_cast<uint32_t>(a.device);
  const FlatTimeline& tl = m.Timeline(a.device);
  const int64_t origin = m.origin_ns();
  std::unordered_set<int64_t> steady_numbers;
  for (const Step& s : a.steps.steps)
    if (s.steady()) steady_numbers.insert(s.number);
  auto steady = [&](const StepRow& r) { return steady_numbers.count(r.number) > 0; };
  std::vector<Interval> others;  // the other steps' windows: in time order, disjoint
  for (const StepRow& r : d->steps) {
    if (!steady(r) && r.end_ns > r.start_ns)
      others.push_back({r.start_ns + origin, r.end_ns + origin});
  }
  const std::vector<GpuGap> in_steady = FindGpuGaps(m, tl, dev, gaps, &a.windows, nullptr);
  const std::vector<GpuGap> in_others =
      others.empty() ? std::vector<GpuGap>{} : FindGpuGaps(m, tl, dev, gaps, &others, nullptr);
  for (StepRow& r : d->steps) {
    const int64_t lo = r.start_ns + origin, hi = r.end_ns + origin;
    for (int64_t& c : r.idle_by_cause_ns) c = 0;
    // Gaps are in time order and disjoint: start at the first ending after lo.
    const std::vector<GpuGap>& gs = steady(r) ? in_steady : in_others;
    auto it = std::partition_point(gs.begin(), gs.end(),
                                   [lo](const GpuGap& g) { return g.end_ns <= lo; });
    for (; it != gs.end() && it->start_ns < hi; ++it) {
      const int64_t ov = std::min(it->end_ns, hi) - std::max(it->start_ns, lo);
      if (ov > 0) r.idle_by_cause_ns[static_cast<int>(it->cause)] += ov;
    }
    // Idle with no GPU op after it in the window is "other", as in analyze's
    // header (analysis/rules/analyze.cc): the four causes add up to the idle.
    int64_t classified = 0;
    for (int64_t c : r.idle_by_cause_ns) classified += c;
    const int64_t idle = std::max<int64_t>(0, hi - lo) - tl.Busy(lo, hi);
    if (idle > classified)
      r.idle_by_cause_ns[static_cast<int>(GapCause::kOther)] += idle - classified;
  }
}

// `stepscope analyze` with its default options.
Status Findings(const TraceModel& m, const ReportOptions& o, ReportData* d) {
  AnalyzeOptions ao;
  if (o.analysis_options) o.analysis_options(m, &ao);
  ao.steps.range_regex = o.step_regex;
  ASSIGN_OR_RETURN(Analysis a, Analyze(m, ao));
  const int64_t origin = m.origin_ns();
  AnalyzedSummary& s = d->analyzed;
  s.device = a.device;
  s.analyzed_ns = a.analyzed_ns;
  s.steps = a.complete_steps;
  s.busy_ns = a.idle.busy_ns;
  s.idle_ns = a.idle.idle_ns;
  s.host_wait_ns = a.idle.by_cause[static_cast<int>(GapCause::kHostWait)];
  s.sync_wait_ns = a.idle.by_cause[static_cast<int>(GapCause::kSyncWait)];
  s.kernel_wait_ns = a.idle.by_cause[static_cast<int>(GapCause::kKernelWait)];
  s.other_idle_ns = a.idle.by_cause[static_cast<int>(GapCause::kOther)];
  for (const Finding& f : a.findings) {
    FindingRow r{f.rule,  f.title,    f.where, f.detail, f.fix, f.cost_ns, f.cost_per_step_ns,
                 f.count, f.cost_pct, {}};
    for (const FindingExample& e : f.examples)
      r.examples.push_back({e.step, e.start_ns - origin, e.end_ns - origin, e.nvtx});
    // The what-if replay's step time with this finding's fix applied.
    r.predicted_step_ns = f.step_after_ns > 0 ? f.step_after_ns : -1;
    r.evidence_only = f.evidence_only;
    d->findings.push_back(std::move(r));
  }
  if (o.mfu_line && a.device >= 0) d->mfu_line = o.mfu_line(m, a.steps, a.device, &d->mfu_pct);
  if (a.device >= 0) StepIdleCauses(m, a, ao.gaps, d);
  AddFindingMarks(m, a.findings, &d->timeline);
  if (d->findings.empty()) {
    d->findings_note = a.device < 0
                           ? "No GPU activity in this trace: the rules have nothing to look at."
                           : "No finding whose fix saves 1% of the step or more "
                             "(stepscope analyze --all lists those below their threshold).";
  }
  return OkStatus();
}

Status Stats(const TraceReader& reader, ReportData* d) {
  ASSIGN_OR_RETURN(std::vector<StatsTableRow> stats, LoadStats(reader.db()));
  for (StatsTableRow& s : stats) d->stats.push_back({std::move(s.name), std::move(s.doc), s.value});
  return OkStatus();
}

}  // namespace

StatusOr<ReportData> CollectReportData(const TraceReader& reader, const TraceModel& model,
                                       const ReportOptions& options) {
  ReportData d;
  RETURN_IF_ERROR(Summary(reader, model, &d.summary));
  RETURN_IF_ERROR(Steps(model, options, &d));
  RETURN_IF_ERROR(TopKernels(model, options, &d));
  RETURN_IF_ERROR(Utilization(model, options, &d));
  RETURN_IF_ERROR(Memory(reader, model, options, &d));
  RETURN_IF_ERROR(CollectStepTimeline(model, options, &d));  // before Findings: it marks them
  RETURN_IF_ERROR(Findings(model, options, &d));
  RETURN_IF_ERROR(GpuMetrics(model, &d));
  AddGpuMetricLanes(model, options, &d.timeline);  // after the findings lane
  RETURN_IF_ERROR(Stats(reader, &d));
  RETURN_IF_ERROR(CollectHost(model, &d));
  Status roofline = CollectRoofline(reader, &d);
  if (!roofline.ok()) return roofline.WithContext("the roofline table");
  return d;
}

}  // namespace stepscope
