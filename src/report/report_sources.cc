#include "report/report_sources.h"

#include <algorithm>
#include <limits>
#include <map>

#include "common/strings.h"
#include "export/counters.h"
#include "report/interim_analysis.h"

namespace stepscope {
namespace {

int64_t ScalarInt(const TraceReader& reader, const std::string& sql) {
  auto st = reader.Query(sql);
  if (!st.ok() || !st->Step() || st->IsNull(0)) return 0;
  return st->Int(0);
}

Status Summary(const TraceReader& reader, ReportSummary* s) {
  s->trace_path = reader.path();
  s->source = reader.Meta("source", "unknown");
  s->host = reader.Meta("host");
  s->command_line = reader.Meta("command_line");
  s->rank = reader.Meta("rank");
  s->world_size = reader.Meta("world_size");
  s->finalized = reader.finalized();
  ASSIGN_OR_RETURN(auto devices, reader.Devices());
  for (const DeviceRecord& d : devices) {
    std::string name = std::to_string(d.id) + ": " + reader.String(d.name);
    if (d.global_memory_bytes) name += " (" + FormatBytes(d.global_memory_bytes) + ")";
    s->devices.push_back(name);
  }
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const char* table : {"kernels", "memcpy", "memset", "api", "nvtx"}) {
    ASSIGN_OR_RETURN(
        Statement st,
        reader.Query(std::string("SELECT MIN(start_ns), MAX(end_ns), MAX(start_ns) FROM ") +
                     table));
    if (st.Step() && !st.IsNull(0)) {
      lo = std::min(lo, st.Int(0));
      hi = std::max({hi, st.Int(1), st.Int(2)});
    }
  }
  {
    ASSIGN_OR_RETURN(Statement st, reader.Query("SELECT MIN(ts_ns), MAX(ts_ns) FROM memory"));
    if (st.Step() && !st.IsNull(0)) {
      lo = std::min(lo, st.Int(0));
      hi = std::max(hi, st.Int(1));
    }
  }
  if (lo > hi) lo = hi = 0;
  s->origin_ns = lo;
  s->duration_ns = hi - lo;
  s->kernels = ScalarInt(reader, "SELECT COUNT(*) FROM kernels");
  s->kernel_time_ns = ScalarInt(reader, "SELECT SUM(end_ns - start_ns) FROM kernels");
  s->memcpys = ScalarInt(reader, "SELECT COUNT(*) FROM memcpy");
  s->memsets = ScalarInt(reader, "SELECT COUNT(*) FROM memset");
  s->api_calls = ScalarInt(reader, "SELECT COUNT(*) FROM api");
  s->nvtx_ranges = ScalarInt(reader, "SELECT COUNT(*) FROM nvtx");
  return OkStatus();
}

// Keeps at most `max_points` points: one per time bucket, the bucket's
// largest value (so a peak is never averaged away).
SeriesData Downsample(const DeviceSeries& in, int64_t origin, int max_points) {
  SeriesData out;
  out.device = in.device;
  bool first_point = true;
  for (const CounterPoint& p : in.points) {
    if (first_point || p.value > out.peak) {
      first_point = false;
      out.peak = p.value;
      out.peak_t_ns = p.ts_ns - origin;
    }
  }
  size_t n = in.points.size();
  if (n <= static_cast<size_t>(max_points)) {
    for (const CounterPoint& p : in.points) {
      out.t_ns.push_back(p.ts_ns - origin);
      out.values.push_back(p.value);
    }
    return out;
  }
  int64_t first = in.points.front().ts_ns, last = in.points.back().ts_ns;
  int64_t width = std::max<int64_t>(1, (last - first) / max_points + 1);
  int64_t bucket = -1;
  for (const CounterPoint& p : in.points) {
    int64_t b = (p.ts_ns - first) / width;
    if (b != bucket) {
      out.t_ns.push_back(p.ts_ns - origin);
      out.values.push_back(p.value);
      bucket = b;
    } else if (p.value > out.values.back()) {
      out.t_ns.back() = p.ts_ns - origin;
      out.values.back() = p.value;
    }
  }
  return out;
}

// Interim: the export library's series (see export/counters.h).
Status Utilization(const TraceReader& reader, const ReportOptions& o, ReportData* d) {
  // The report's chart needs fewer buckets than a timeline: about 500.
  int64_t first = ScalarInt(reader, "SELECT MIN(start_ns) FROM kernels");
  int64_t last = ScalarInt(reader, "SELECT MAX(end_ns) FROM kernels");
  ASSIGN_OR_RETURN(auto series, GpuUtilizationSeries(reader, AutoBucketNs(first, last, 500),
                                                     &d->utilization_bucket_ns));
  for (const DeviceSeries& s : series)
    d->utilization.push_back(Downsample(s, d->summary.origin_ns, o.max_series_points));
  return OkStatus();
}

// Interim: the export library's series until the memory timeline lands.
Status Memory(const TraceReader& reader, const ReportOptions& o, ReportData* d) {
  ASSIGN_OR_RETURN(auto series, DeviceMemorySeries(reader, &d->memory_unknown_frees));
  ASSIGN_OR_RETURN(auto devices, reader.Devices());
  std::map<uint32_t, int64_t> capacity;
  for (const DeviceRecord& dev : devices)
    capacity[dev.id] = static_cast<int64_t>(dev.global_memory_bytes);
  for (const DeviceSeries& s : series) {
    SeriesData sd = Downsample(s, d->summary.origin_ns, o.max_series_points);
    sd.capacity = capacity.count(s.device) ? capacity[s.device] : 0;
    d->memory.push_back(std::move(sd));
  }
  return OkStatus();
}

// Findings come from the analysis library's expert rules once it is linked.
Status Findings(const TraceReader& reader, ReportData* d) {
  d->findings_note =
      "The expert rules (stepscope analyze) are not part of this build yet: this section lists "
      "their "
      "findings once the analysis library lands.";
  return OkStatus();
}

Status Stats(const TraceReader& reader, ReportData* d) {
  ASSIGN_OR_RETURN(Statement st, reader.Query("SELECT name, value, doc FROM stats ORDER BY name"));
  while (st.Step())
    d->stats.push_back({std::string(st.Text(0)), std::string(st.Text(2)), st.Int(1)});
  return st.status();
}

}  // namespace

StatusOr<ReportData> CollectReportData(const TraceReader& reader, const ReportOptions& options) {
  ReportData d;
  RETURN_IF_ERROR(Summary(reader, &d.summary));
  ASSIGN_OR_RETURN(d.steps, interim::DetectSteps(reader, &d.steps_source));
  int64_t origin = d.summary.origin_ns;
  ASSIGN_OR_RETURN(d.breakdown, interim::FillBreakdowns(reader, &d.steps, origin,
                                                        origin + d.summary.duration_ns));
  d.breakdown_window = d.steps.empty() ? "whole trace"
                                       : "steps " + std::to_string(d.steps.front().number) + "-" +
                                             std::to_string(d.steps.back().number);
  for (StepRow& s : d.steps) {
    s.start_ns -= origin;
    s.end_ns -= origin;
  }
  ASSIGN_OR_RETURN(d.top_kernels, interim::TopKernels(reader, options.top_kernels));
  RETURN_IF_ERROR(Utilization(reader, options, &d));
  RETURN_IF_ERROR(Memory(reader, options, &d));
  RETURN_IF_ERROR(Findings(reader, &d));
  RETURN_IF_ERROR(Stats(reader, &d));
  return d;
}

}  // namespace stepscope
