#include "report/html_report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json_writer.h"
#include "common/strings.h"
#include "export/chrome_json_writer.h"
#include "export/output_file.h"
#include "report/embedded_assets.h"

namespace stepscope {
namespace {

// A minimal JSON writer whose strings are safe inside an HTML <script> block.
class Json {
 public:
  Json& Key(const char* k) {
    Sep();
    Append(k);
    out_.push_back(':');
    after_key_ = true;
    return *this;
  }
  Json& Str(std::string_view s) {
    Sep();
    Append(s);
    return *this;
  }
  Json& Int(int64_t v) {
    Sep();
    out_.append(std::to_string(v));
    return *this;
  }
  Json& Num(double v) {
    Sep();
    char b[32];
    std::snprintf(b, sizeof(b), "%.4f", std::isfinite(v) ? v : 0.0);
    out_.append(b);
    return *this;
  }
  // Rates and intensities span many decades (1e-3 FLOP/B to 1e15 FLOP/s):
  // significant digits, not fixed decimals.
  Json& Real(double v) {
    Sep();
    char b[32];
    std::snprintf(b, sizeof(b), "%.10g", std::isfinite(v) ? v : 0.0);
    out_.append(b);
    return *this;
  }
  // Chart values: 4 significant digits are more than a lane's pixels show.
  Json& Sig(double v) {
    Sep();
    char b[32];
    std::snprintf(b, sizeof(b), "%.4g", std::isfinite(v) ? v : 0.0);
    out_.append(b);
    return *this;
  }
  Json& Null() {
    Sep();
    out_.append("null");
    return *this;
  }
  Json& Bool(bool v) {
    Sep();
    out_.append(v ? "true" : "false");
    return *this;
  }
  Json& Begin(char c) {
    Sep();
    out_.push_back(c);
    first_ = true;
    return *this;
  }
  Json& End(char c) {
    out_.push_back(c);
    first_ = false;
    return *this;
  }
  std::string Take() { return std::move(out_); }

 private:
  // A JSON string literal that can never end the <script> block.
  void Append(std::string_view s) { AppendJsonString(&out_, JsonEscaping::kHtmlSafe, s); }
  void Sep() {
    if (after_key_) {
      after_key_ = false;
      first_ = false;
      return;
    }
    if (!first_) out_.push_back(',');
    first_ = false;
  }
  std::string out_;
  bool first_ = true;
  bool after_key_ = false;
};

void WriteBreakdown(Json& j, const Breakdown& b) {
  j.Begin('{');
  j.Key("span_ns").Int(b.span).Key("busy_ns").Int(b.busy).Key("compute_ns").Int(b.compute);
  j.Key("communication_ns").Int(b.communication).Key("memory_ns").Int(b.memory);
  j.Key("idle_ns").Int(b.idle);
  j.End('}');
}

void WriteSeries(Json& j, const std::vector<SeriesData>& series) {
  j.Begin('[');
  for (const SeriesData& s : series) {
    j.Begin('{').Key("name").Str(s.name).Key("device").Int(s.device);
    j.Key("peak").Num(s.peak).Key("peak_t_ns").Int(s.peak_t_ns);
    j.Key("capacity").Int(s.capacity);
    j.Key("t_ns").Begin('[');
    for (int64_t t : s.t_ns) j.Int(t);
    j.End(']').Key("values").Begin('[');
    for (double v : s.values) j.Num(v);
    j.End(']').End('}');
  }
  j.End(']');
}

void WriteSteps(Json& j, const ReportData& d) {
  const ReportStepSummary& s = d.step_summary;
  j.Key("step_summary").Begin('{');
  j.Key("method").Str(s.method).Key("pattern").Str(s.pattern).Key("steady").Int(s.steady);
  j.Key("median_ns").Num(s.median_ns).Key("mean_ns").Num(s.mean_ns);
  j.Key("stddev_ns").Num(s.stddev_ns).Key("min_ns").Int(s.min_ns).Key("max_ns").Int(s.max_ns);
  j.End('}');
  j.Key("steps").Begin('[');
  for (const StepRow& r : d.steps) {
    j.Begin('{').Key("number").Int(r.number).Key("name").Str(r.name);
    j.Key("start_ns").Int(r.start_ns).Key("end_ns").Int(r.end_ns).Key("status").Str(r.status);
    j.Key("gpu_ops").Int(r.gpu_ops).Key("breakdown");
    WriteBreakdown(j, r.breakdown);
    j.Key("idle_by_cause_ns").Begin('[');
    for (int64_t v : r.idle_by_cause_ns) j.Int(v);
    j.End(']');
    j.Key("top_kernels").Begin('[');
    for (const StepRow::Kernel& k : r.top_kernels) {
      j.Begin('{').Key("name").Str(k.name).Key("total_ns").Int(k.total_ns);
      j.Key("count").Int(k.count).End('}');
    }
    j.End(']').End('}');
  }
  j.End(']');
  j.Key("breakdown");
  WriteBreakdown(j, d.breakdown);
  j.Key("breakdown_window").Str(d.breakdown_window);
}

void WriteFinding(Json& j, const FindingRow& f) {
  j.Begin('{').Key("rule").Str(f.rule).Key("title").Str(f.title).Key("where").Str(f.where);
  j.Key("detail").Str(f.detail).Key("fix").Str(f.fix).Key("cost_ns").Int(f.cost_ns);
  j.Key("cost_per_step_ns").Int(f.cost_per_step_ns).Key("cost_pct").Num(f.cost_pct);
  j.Key("predicted_step_ns").Int(f.predicted_step_ns).Key("evidence_only").Bool(f.evidence_only);
  j.Key("count").Int(f.count).Key("examples").Begin('[');
  for (const FindingRow::Example& e : f.examples) {
    j.Begin('{').Key("step").Int(e.step).Key("start_ns").Int(e.start_ns);
    j.Key("end_ns").Int(e.end_ns).Key("nvtx").Str(e.nvtx).End('}');
  }
  j.End(']').End('}');
}

void WriteKernelRows(Json& j, const std::vector<KernelRow>& rows) {
  j.Begin('[');
  for (const KernelRow& k : rows) {
    j.Begin('{').Key("name").Str(k.name).Key("total_ns").Int(k.total_ns).Key("count").Int(k.count);
    j.Key("min_ns").Int(k.min_ns).Key("max_ns").Int(k.max_ns).Key("avg_ns").Num(k.avg_ns);
    j.Key("median_ns").Num(k.median_ns).Key("percent").Num(k.percent).End('}');
  }
  j.End(']');
}

void WriteTimeline(Json& j, const StepTimeline& t) {
  j.Key("timeline").Begin('{').Key("step").Int(t.step).Key("window").Str(t.window);
  j.Key("start_ns").Int(t.start_ns).Key("end_ns").Int(t.end_ns);
  j.Key("gpu_start_ns").Int(t.gpu_start_ns).Key("gpu_end_ns").Int(t.gpu_end_ns);
  j.Key("dropped").Int(t.dropped).Key("lanes").Begin('[');
  for (const StepTimeline::Lane& l : t.lanes)
    j.Begin('{').Key("name").Str(l.name).Key("kind").Str(l.kind).End('}');
  j.End(']').Key("names").Begin('[');
  for (const std::string& n : t.names) j.Str(n);
  // Events as flat arrays: [lane, start, end, name, depth, cat] (thousands of
  // them); a finding's also carries its rule.
  j.End(']').Key("events").Begin('[');
  for (const StepTimeline::Event& e : t.events) {
    j.Begin('[').Int(e.lane).Int(e.start_ns).Int(e.end_ns).Int(e.name).Int(e.depth).Str(e.cat);
    if (!e.rule.empty()) j.Str(e.rule);
    j.End(']');
  }
  j.End(']').Key("counters").Begin('[');
  for (const StepTimeline::Counter& c : t.counters) {
    j.Begin('{').Key("lane").Int(c.lane).Key("device").Int(c.device).Key("metric").Str(c.metric);
    j.Key("unit").Str(c.unit).Key("end_ns").Int(c.end_ns).Key("samples").Int(c.samples);
    j.Key("bucket_ns").Int(c.bucket_ns).Key("max").Sig(c.max).Key("t_ns").Begin('[');
    for (int64_t x : c.t_ns) j.Int(x);
    j.End(']').Key("values").Begin('[');
    for (double x : c.values) j.Sig(x);
    j.End(']').End('}');
  }
  j.End(']').End('}');
}

// The gpu_metrics_sum rows over the analyzed steps (empty: no GPU metrics).
void WriteGpuMetrics(Json& j, const ReportData& d) {
  j.Key("gpu_metrics_range").Str(d.gpu_metrics_range).Key("gpu_metrics").Begin('[');
  for (const GpuMetricRow& r : d.gpu_metrics) {
    j.Begin('{').Key("device").Int(r.device).Key("metric").Str(r.metric).Key("unit").Str(r.unit);
    j.Key("name").Str(r.name).Key("samples").Int(r.samples).Key("covered_ns").Int(r.covered_ns);
    j.Key("mean").Real(r.mean).Key("min").Real(r.min).Key("max").Real(r.max).End('}');
  }
  j.End(']');
}

// `null` unless the page compares two traces.
void WriteCompare(Json& j, const ReportData& d) {
  j.Key("compare");
  if (!d.has_compare) {
    j.Null();
    return;
  }
  const ReportCompare& c = d.compare;
  j.Begin('{').Key("before_path").Str(c.before_path).Key("basis").Str(c.basis);
  j.Key("before_ns").Num(c.before_ns).Key("after_ns").Num(c.after_ns);
  j.Key("speedup").Real(c.speedup).Key("tables").Begin('[');
  for (const ReportCompare::TextTable& t : c.tables) {
    j.Begin('{').Key("name").Str(t.name).Key("columns").Begin('[');
    for (const std::string& col : t.columns) j.Str(col);
    j.End(']').Key("titles").Begin('[');
    for (const std::string& col : t.titles) j.Str(col);
    j.End(']').Key("rows").Begin('[');
    for (const auto& row : t.rows) {
      j.Begin('[');
      for (const std::string& cell : row) j.Str(cell);
      j.End(']');
    }
    j.End(']').End('}');
  }
  const ReportStepSummary& s = c.before_steps;
  j.End(']').Key("before_steps").Begin('{').Key("steady").Int(s.steady);
  j.Key("median_ns").Num(s.median_ns).Key("mean_ns").Num(s.mean_ns).End('}');
  j.Key("before_breakdown");
  WriteBreakdown(j, c.before_breakdown);
  j.Key("before_findings").Begin('[');
  for (const FindingRow& f : c.before_findings) WriteFinding(j, f);
  j.End(']').End('}');
}

void WriteFindings(Json& j, const ReportData& d) {
  const AnalyzedSummary& a = d.analyzed;
  j.Key("analyzed").Begin('{');
  j.Key("device").Int(a.device).Key("analyzed_ns").Int(a.analyzed_ns).Key("steps").Int(a.steps);
  j.Key("busy_ns").Int(a.busy_ns).Key("idle_ns").Int(a.idle_ns);
  j.Key("host_wait_ns").Int(a.host_wait_ns).Key("sync_wait_ns").Int(a.sync_wait_ns);
  j.Key("kernel_wait_ns").Int(a.kernel_wait_ns).Key("other_idle_ns").Int(a.other_idle_ns);
  j.End('}');
  j.Key("findings").Begin('[');
  for (const FindingRow& f : d.findings) WriteFinding(j, f);
  j.End(']').Key("findings_note").Str(d.findings_note);
  j.Key("mfu").Str(d.mfu_line).Key("mfu_pct").Num(d.mfu_pct);
}

void WriteMemory(Json& j, const ReportData& d) {
  j.Key("memory");
  WriteSeries(j, d.memory);
  j.Key("memory_unknown_frees").Int(d.memory_unknown_frees);
  j.Key("memory_notes").Begin('[');
  for (const std::string& n : d.memory_notes) j.Str(n);
  j.End(']').Key("memory_peaks").Begin('[');
  for (const MemoryPeak& p : d.memory_peaks) {
    j.Begin('{').Key("place").Str(p.place).Key("peak_bytes").Int(p.peak_bytes);
    j.Key("peak_t_ns").Int(p.peak_t_ns).Key("capacity").Int(p.capacity).Key("step").Int(p.step);
    j.Key("range").Str(p.range).Key("live").Begin('[');
    for (const MemoryPeak::Group& g : p.live) {
      j.Begin('{').Key("range").Str(g.range).Key("api").Str(g.api).Key("count").Int(g.count);
      j.Key("bytes").Int(g.bytes).Key("share_pct").Num(g.share_pct).End('}');
    }
    j.End(']').End('}');
  }
  j.End(']');
}

// `null` when the trace has no roofline rows: the page then has no section.
void WriteRoofline(Json& j, const ReportData& d) {
  j.Key("roofline");
  if (!d.has_roofline) {
    j.Null();
    return;
  }
  const ReportRoofline& r = d.roofline;
  j.Begin('{').Key("device").Str(r.device).Key("measured_at").Str(r.measured_at);
  j.Key("step").Int(r.step);
  j.Key("x_min").Real(r.x_min).Key("x_max").Real(r.x_max);
  j.Key("y_min").Real(r.y_min).Key("y_max").Real(r.y_max);
  j.Key("roofs").Begin('[');
  for (const RooflineRoof& f : r.roofs) {
    j.Begin('{').Key("key").Str(f.key).Key("memory").Bool(f.memory).Key("value").Real(f.value);
    j.Key("x0").Real(f.x0).Key("y0").Real(f.y0).Key("x1").Real(f.x1).Key("y1").Real(f.y1);
    j.End('}');
  }
  j.End(']').Key("ridges").Begin('[');
  for (const RooflineRidge& x : r.ridges) {
    j.Begin('{').Key("key").Str(x.key).Key("intensity").Real(x.intensity);
    j.Key("flops_per_s").Real(x.flops_per_s).End('}');
  }
  j.End(']').Key("kernels").Begin('[');
  for (const RooflineKernel& k : r.kernels) {
    j.Begin('{').Key("rank").Int(k.rank).Key("name").Str(k.name).Key("launch").Str(k.launch);
    j.Key("instances").Int(k.instances).Key("duration_ns").Real(k.duration_ns);
    j.Key("flops").Real(k.flops).Key("dram_bytes").Real(k.dram_bytes);
    j.Key("intensity").Real(k.intensity).Key("flops_per_s").Real(k.flops_per_s);
    j.Key("dram_bytes_per_s").Real(k.dram_bytes_per_s).Key("precision").Str(k.precision);
    j.Key("bound").Str(k.bound).Key("bound_kind").Str(k.bound_kind);
    j.Key("pct_of_bound").Real(k.pct_of_bound).Key("on_chart").Bool(k.on_chart).End('}');
  }
  j.End(']').Key("notes").Begin('[');
  for (const std::string& n : r.notes) j.Str(n);
  j.End(']').End('}');
}

// 16 random bytes, hex: the CSP nonce of this report's scripts.
std::string Nonce() {
  unsigned char b[16] = {0};
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && ::read(fd, b, sizeof(b)) == static_cast<ssize_t>(sizeof(b));
  if (fd >= 0) ::close(fd);
  if (!ok) {  // no /dev/urandom: still unpredictable enough for a local file
    uint64_t x =
        static_cast<uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^ reinterpret_cast<uintptr_t>(&b);
    for (unsigned char& c : b) c = static_cast<unsigned char>(x >>= 3);
  }
  std::string hex;
  char h[3];
  for (unsigned char c : b) {
    std::snprintf(h, sizeof(h), "%02x", c);
    hex += h;
  }
  return hex;
}

// True when `text` holds "</script" in any case: it would end the block early.
bool ClosesScript(std::string_view text) {
  for (size_t p = text.find("</"); p != std::string_view::npos; p = text.find("</", p + 1)) {
    std::string tag(text.substr(p + 2, 6));
    std::transform(tag.begin(), tag.end(), tag.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (tag == "script") return true;
  }
  return false;
}

}  // namespace

bool ReportHasChartLibrary() { return !EmbeddedChartLibrary().empty(); }

std::string ReportDataJson(const ReportData& d) {
  Json j;
  j.Begin('{');
  const ReportSummary& s = d.summary;
  j.Key("summary").Begin('{');
  j.Key("trace_path").Str(s.trace_path).Key("source").Str(s.source).Key("host").Str(s.host);
  j.Key("command_line")
      .Str(s.command_line)
      .Key("rank")
      .Str(s.rank)
      .Key("world_size")
      .Str(s.world_size);
  j.Key("devices").Begin('[');
  for (const std::string& dev : s.devices) j.Str(dev);
  j.End(']');
  j.Key("origin_ns").Str(std::to_string(s.origin_ns)).Key("duration_ns").Int(s.duration_ns);
  j.Key("kernels")
      .Int(s.kernels)
      .Key("kernel_time_ns")
      .Int(s.kernel_time_ns)
      .Key("memcpys")
      .Int(s.memcpys);
  j.Key("memsets")
      .Int(s.memsets)
      .Key("api_calls")
      .Int(s.api_calls)
      .Key("nvtx_ranges")
      .Int(s.nvtx_ranges);
  j.Key("finalized").Bool(s.finalized);
  j.End('}');

  WriteSteps(j, d);
  j.Key("focus_start_ns").Int(d.focus_start_ns).Key("focus_end_ns").Int(d.focus_end_ns);
  j.Key("utilization_range").Str(d.utilization_range);
  j.Key("utilization_bucket_ns").Int(d.utilization_bucket_ns).Key("utilization");
  WriteSeries(j, d.utilization);
  WriteMemory(j, d);

  j.Key("top_kernels");
  WriteKernelRows(j, d.top_kernels);
  j.Key("kernels");
  WriteKernelRows(j, d.kernels);
  WriteTimeline(j, d.timeline);
  WriteFindings(j, d);
  WriteCompare(j, d);
  WriteRoofline(j, d);
  WriteGpuMetrics(j, d);

  j.Key("stats").Begin('[');
  for (const StatRow& r : d.stats) {
    j.Begin('{').Key("name").Str(r.name).Key("value").Int(r.value).Key("doc").Str(r.doc).End('}');
  }
  j.End(']');
  j.End('}');
  return j.Take();
}

// Text as HTML element content / attribute value.
static std::string HtmlText(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// 1234567 -> "1.23 ms": the page's time format (report.js fmtNs), common/strings.h's.
static std::string FmtNs(double ns) { return FormatDuration(std::llround(ns)); }

// A cell as the page shows it: times (columns named *_ns) with their unit.
static std::string CellText(const Column& c, const Cell& v) {
  if (EndsWith(c.name, "_ns")) {
    if (const auto* i = std::get_if<int64_t>(&v.value)) return FmtNs(static_cast<double>(*i));
    if (const auto* d = std::get_if<double>(&v.value)) return FmtNs(*d);
  }
  return v.Text();
}

// A column title without its "(ns)": the cells carry their unit.
static std::string ColumnTitle(const Column& c) {
  std::string t = c.title.empty() ? c.name : c.title;
  if (size_t p = t.find(" (ns)"); p != std::string::npos) t.erase(p, 5);
  return t;
}

static std::string HtmlRows(const Table& t, size_t from, size_t to) {
  std::string h;
  for (size_t r = from; r < to && r < t.rows().size(); ++r) {
    const auto& row = t.rows()[r];
    h += "<tr>";
    for (size_t i = 0; i < row.size() && i < t.columns().size(); ++i) {
      h += std::string(t.columns()[i].right_align ? "<td class=\"num\">" : "<td>") +
           HtmlText(CellText(t.columns()[i], row[i])) + "</td>";
    }
    h += "</tr>\n";
  }
  return h;
}

static std::string HtmlHead(const Table& t, const char* cls) {
  std::string h = std::string("<table class=\"static ") + cls + "\"><thead><tr>";
  for (const Column& c : t.columns()) h += "<th>" + HtmlText(ColumnTitle(c)) + "</th>";
  return h + "</tr></thead><tbody>\n";
}

// Rows past the first `shown` of a static table, behind a summary line: the
// page stays short, print and screenshots open them (report.js).
static std::string Collapsed(const std::string& summary, const std::string& table) {
  return "<details class=\"more\"><summary>" + HtmlText(summary) + "</summary>" + table +
         "</details>";
}

// A recipe's table as static HTML (the host section needs no script): times
// with their unit, the rows past `shown` collapsed.
static std::string HtmlTable(const Table& t, size_t shown = 15) {
  std::string h = HtmlHead(t, "") + HtmlRows(t, 0, shown) + "</tbody></table>";
  if (t.rows().size() > shown) {
    h += Collapsed(std::to_string(t.rows().size() - shown) + " more rows",
                   HtmlHead(t, "") + HtmlRows(t, shown, t.rows().size()) + "</tbody></table>");
  }
  return h;
}

// The profiler's own threads, hidden from the host table: stepscope's
// tracer ("stepscope-*"), CUPTI's workers, Nsight Systems' ("[NSys]",
// "[NSys Comms]", its "#1TaskRunner" / "*2CommsProcesso" helpers) and
// Kineto's ("kineto*", torch.profiler's "pt_profiler*").
bool IsProfilerThreadName(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("stepscope-") || starts("CUPTI") || starts("[NSys") || starts("kineto") ||
      starts("pt_profiler") || starts("libkineto"))
    return true;
  // Nsight Systems' helper threads: '#' or '*', a digit, a name.
  return name.size() > 2 && (name[0] == '#' || name[0] == '*') &&
         std::isdigit(static_cast<unsigned char>(name[1])) != 0;
}

namespace {

// One host thread of `stats -r thread_states` (one row per state there).
struct HostThread {
  int64_t tid = 0;
  std::string name, source, top_wait;
  int64_t total_ns = 0, running_ns = 0, top_wait_ns = 0;
  std::vector<std::pair<std::string, double>> states;  // state, share %, largest first
};

std::string ThreadRows(const std::vector<HostThread>& threads, size_t from, size_t to) {
  std::string h;
  for (size_t i = from; i < to && i < threads.size(); ++i) {
    const HostThread& t = threads[i];
    std::string states;
    for (const auto& [state, share] : t.states) {
      char b[64];
      std::snprintf(b, sizeof(b), "%s%s %.1f%%", states.empty() ? "" : " \xc2\xb7 ", state.c_str(),
                    share);
      states += b;
    }
    h += "<tr><td class=\"num\">" + std::to_string(t.tid) + "</td><td>" + HtmlText(t.name) +
         "</td><td>" + HtmlText(t.source) + "</td><td class=\"num\">" +
         HtmlText(FmtNs(static_cast<double>(t.total_ns))) + "</td><td class=\"num\">" +
         HtmlText(FmtNs(static_cast<double>(t.running_ns))) + "</td><td class=\"states\">" +
         HtmlText(states) + "</td><td>" + HtmlText(t.top_wait) + "</td></tr>\n";
  }
  return h;
}

std::string ThreadTable(const std::vector<HostThread>& threads, size_t from, size_t to) {
  return "<table class=\"static threads\"><thead><tr><th>TID</th><th>thread</th><th>source</th>"
         "<th>time</th><th>running</th><th>states (share of its time)</th><th>top wait</th>"
         "</tr></thead><tbody>\n" +
         ThreadRows(threads, from, to) + "</tbody></table>";
}

}  // namespace

// `stats -r thread_states` as one row per thread (its states in one cell),
// busiest first (running time), times with their unit; the first
// kHostThreadsShown threads shown, the rest and the profiler's own threads
// behind a count. A table without the recipe's columns: as it is.
std::string HostThreadsHtml(const Table& t) {
  constexpr size_t kHostThreadsShown = 12;
  int col[7];
  const char* names[7] = {"tid", "thread", "source", "state", "time_ns", "share_pct", "top_wait"};
  for (int k = 0; k < 7; ++k) {
    col[k] = -1;
    for (size_t i = 0; i < t.columns().size(); ++i)
      if (t.columns()[i].name == names[k]) col[k] = static_cast<int>(i);
    if (col[k] < 0) return HtmlTable(t);
  }
  auto num = [](const Cell& c) -> double {
    if (const auto* i = std::get_if<int64_t>(&c.value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&c.value)) return *d;
    return 0;
  };
  std::vector<HostThread> threads;
  std::map<int64_t, size_t> at;
  for (const auto& row : t.rows()) {
    if (row.size() < t.columns().size()) continue;
    const int64_t tid = static_cast<int64_t>(num(row[col[0]]));
    auto [it, added] = at.emplace(tid, threads.size());
    if (added) {
      threads.push_back({});
      threads.back().tid = tid;
      threads.back().name = row[col[1]].Text();
      threads.back().source = row[col[2]].Text();
    }
    HostThread& h = threads[it->second];
    const std::string state = row[col[3]].Text();
    const int64_t ns = static_cast<int64_t>(num(row[col[4]]));
    h.total_ns += ns;
    if (state == "running") h.running_ns += ns;
    h.states.push_back({state, num(row[col[5]])});
    const std::string wait = row[col[6]].Text();
    if (state != "running" && !wait.empty() && ns > h.top_wait_ns) {
      h.top_wait_ns = ns;
      h.top_wait = wait;
    }
  }
  std::vector<HostThread> shown, profiler;
  for (HostThread& h : threads) (IsProfilerThreadName(h.name) ? profiler : shown).push_back(h);
  std::stable_sort(shown.begin(), shown.end(), [](const HostThread& a, const HostThread& b) {
    return a.running_ns > b.running_ns;
  });
  std::string html = ThreadTable(shown, 0, kHostThreadsShown);
  if (shown.size() > kHostThreadsShown) {
    const size_t rest = shown.size() - kHostThreadsShown;
    html += Collapsed(
        std::to_string(rest) + " more thread" + (rest == 1 ? "" : "s") + " (less time running)",
        ThreadTable(shown, kHostThreadsShown, shown.size()));
  }
  if (!profiler.empty()) {
    std::map<std::string, int> kinds;
    for (const HostThread& h : profiler) ++kinds[h.name];
    std::string which;
    for (const auto& [name, n] : kinds)
      which += (which.empty() ? "" : ", ") + name + (n > 1 ? " \xc3\x97" + std::to_string(n) : "");
    html += Collapsed(std::to_string(profiler.size()) + " profiler thread" +
                          (profiler.size() == 1 ? "" : "s") + " hidden: " + which,
                      ThreadTable(profiler, 0, profiler.size()));
  }
  return html;
}

// A metric value with its unit: "81.8%", "1.23 TB/s", "1.98 GHz".
static std::string MetricText(double v, const std::string& unit) {
  char b[48];
  if (unit == "%") {
    std::snprintf(b, sizeof(b), "%.1f%%", v);
    return b;
  }
  static const char* kPrefix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  std::snprintf(b, sizeof(b), "%.*f %s%s", i ? 2 : 0, v, kPrefix[i], unit.c_str());
  return b;
}

// The GPU metrics section: the gpu_metrics_sum rows over the analyzed steps
// as a static table (docs/report.md); "" without GPU metrics.
static std::string GpuMetricsHtml(const ReportData& d) {
  if (d.gpu_metrics.empty()) return "";
  std::string h =
      "<section id=\"gpu-metrics-section\"><h2>GPU metrics</h2><p class=\"note\">Sampled on "
      "the GPU by CUPTI PM sampling (<code>profile --gpu-metrics</code>) over " +
      HtmlText(d.gpu_metrics_range.empty() ? std::string("the whole trace (no steady steps)")
                                           : "the " + std::to_string(d.step_summary.steady) +
                                                 " steady steps' GPU windows") +
      ": the mean weighted by each sample's length, the least and the largest sample "
      "(<code>stepscope stats -r gpu_metrics_sum" +
      HtmlText(d.gpu_metrics_range.empty() ? "" : " --time-range " + d.gpu_metrics_range) +
      "</code>). The timeline shows tensor_active, sm_active and DRAM read+write of each GPU "
      "as lanes under its streams.</p>\n<table class=\"static gpu-metrics\"><thead><tr>"
      "<th>GPU</th><th>metric</th><th>mean</th><th>min</th><th>max</th><th>samples</th>"
      "<th>covered</th><th>CUPTI metric</th></tr></thead><tbody>\n";
  for (const GpuMetricRow& r : d.gpu_metrics) {
    h += "<tr><td class=\"num\">" + std::to_string(r.device) + "</td><td>" + HtmlText(r.metric) +
         "</td><td class=\"num\">" + HtmlText(MetricText(r.mean, r.unit)) +
         "</td><td class=\"num\">" + HtmlText(MetricText(r.min, r.unit)) +
         "</td><td class=\"num\">" + HtmlText(MetricText(r.max, r.unit)) +
         "</td><td class=\"num\">" + std::to_string(r.samples) + "</td><td class=\"num\">" +
         HtmlText(FmtNs(static_cast<double>(r.covered_ns))) + "</td><td>" + HtmlText(r.name) +
         "</td></tr>\n";
  }
  return h + "</tbody></table></section>\n";
}

StatusOr<std::string> RenderHtmlReport(const ReportData& data) {
  std::string_view charts = EmbeddedChartLibrary();
  if (charts.empty()) {
    return Unavailable(
        "this stepscope was built without the charting library (node_modules/echarts was missing "
        "at "
        "configure time): run scripts/bootstrap.sh, then reconfigure and rebuild");
  }
  std::string_view script = EmbeddedReportScript(), style = EmbeddedReportStyle();
  std::string_view views = EmbeddedReportViews();
  if (ClosesScript(charts) || ClosesScript(script) || ClosesScript(views))
    return Internal("an embedded script contains </script");
  std::string json = ReportDataJson(data);
  // By construction the JSON holds no '<': a string cannot close the block.
  if (json.find('<') != std::string::npos) return Internal("report data JSON is not HTML-safe");
  std::string nonce = Nonce();

  std::string html;
  html.reserve(charts.size() + json.size() + 16384);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'nonce-" +
      nonce +
      "'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"stepscope report\">\n"
      "<title>stepscope report</title>\n<style>\n";
  html += style;
  html +=
      "</style>\n</head>\n<body>\n"
      "<header><h1>stepscope report</h1><div id=\"summary\" class=\"summary\"></div></header>\n"
      "<main>\n";
  // Only `report BEFORE AFTER` gets the comparison (docs/report.md).
  if (data.has_compare) {
    html +=
        "<section id=\"compare-section\"><h2>Before / after</h2><p class=\"note\" "
        "id=\"compare-note\"></p><div id=\"compare\"></div></section>\n";
  }
  html +=
      "<section id=\"findings-section\"><h2>Findings</h2><p class=\"note\" "
      "id=\"findings-note\"></p>"
      "<div id=\"findings\"></div></section>\n"
      "<section><h2>Step time</h2><p class=\"note\" id=\"steps-note\"></p>"
      "<div class=\"chart\" id=\"chart-steps\"></div>"
      "<div id=\"step-detail\" class=\"step-detail\"></div></section>\n"
      "<div class=\"row\">\n"
      "<section><h2>Where GPU time goes</h2><p class=\"note\" id=\"breakdown-note\"></p>"
      "<div class=\"chart\" id=\"chart-breakdown\"></div></section>\n"
      "<section><h2>Top kernels</h2><p class=\"note\">by total GPU time</p>"
      "<div class=\"chart tall\" id=\"chart-kernels\"></div></section>\n"
      "</div>\n"
      "<section id=\"kernel-table-section\"><h2>Kernels</h2><p class=\"note\" "
      "id=\"kernel-table-note\"></p><div id=\"kernel-table\"></div></section>\n"
      "<section id=\"timeline-section\"><h2>Timeline of the median step</h2><p class=\"note\" "
      "id=\"timeline-note\"></p><div class=\"chart timeline\" id=\"chart-timeline\"></div>"
      "</section>\n";
  // Only a trace with roofline rows gets the section (docs/report.md).
  if (data.has_roofline) {
    html +=
        "<section id=\"roofline-section\"><h2>Roofline</h2><p class=\"note\" "
        "id=\"roofline-note\"></p><div class=\"chart tall\" id=\"chart-roofline\"></div>"
        "<div id=\"roofline-table\"></div></section>\n";
  }
  // Only a trace with a host model gets the section (docs/report.md, docs/host.md).
  if (data.has_host) {
    html +=
        "<section id=\"host-section\"><h2>Host threads</h2><p class=\"note\">time of each thread "
        "in each state (<code>stepscope stats -r thread_states</code>, one row per thread, the "
        "most running first)</p>" +
        HostThreadsHtml(data.thread_states) +
        "<p class=\"note\">Python lines by self time (<code>stats -r python_hotspots</code>, "
        "first 10)</p>" +
        HtmlTable(data.python_hotspots) + "</section>\n";
  }
  html +=
      "<section><h2>GPU utilization</h2><p class=\"note\" id=\"util-note\"></p>"
      "<div class=\"chart\" id=\"chart-utilization\"></div></section>\n" +
      GpuMetricsHtml(data) +
      "<section><h2>Device memory in use</h2><p class=\"note\" id=\"memory-note\"></p>"
      "<div class=\"chart\" id=\"chart-memory\"></div><div id=\"memory-peaks\"></div></section>\n"
      "<section id=\"stats-section\"><h2>Capture and import counters</h2><div "
      "id=\"stats\"></div></section>\n"
      "</main>\n"
      "<footer>Made by <code>stepscope report</code>. Charts: Apache ECharts (Apache License 2.0), "
      "embedded.</footer>\n"
      "<script type=\"application/json\" id=\"stepscope-data\">";
  html += json;
  html += "</script>\n<script nonce=\"" + nonce + "\">\n";
  html += charts;
  html += "\n</script>\n<script nonce=\"" + nonce + "\">\n";
  html += views;  // defines stepscopeViews, used by the page script below
  html += "\n";
  html += script;
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

Status WriteHtmlReport(const ReportData& data, const std::string& path) {
  ASSIGN_OR_RETURN(std::string html, RenderHtmlReport(data));
  OutputFile out(path);
  RETURN_IF_ERROR(out.Open());
  out.Write(html);
  return out.Close();
}

}  // namespace stepscope
