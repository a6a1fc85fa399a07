// `report BEFORE AFTER`: the before/after section. The comparison itself is
// analysis/diff.h's (`stepscope diff BEFORE AFTER` prints the same tables);
// the before trace's step statistics, breakdown and findings come from the
// same collection as the after trace's own sections.
#include "analysis/diff.h"
#include "report/report_sources.h"

namespace stepscope {
namespace {

ReportCompare::TextTable Text(const std::string& name, const Table& t) {
  ReportCompare::TextTable out;
  out.name = name;
  for (const auto& c : t.columns()) {
    out.columns.push_back(c.name);
    out.titles.push_back(c.title.empty() ? c.name : c.title);
  }
  for (const auto& row : t.rows()) {
    std::vector<std::string> cells;
    for (const Cell& c : row) cells.push_back(c.Text());
    out.rows.push_back(std::move(cells));
  }
  return out;
}

}  // namespace

Status CollectReportCompare(const TraceReader& before_reader, const TraceModel& before,
                            const TraceModel& after, const ReportOptions& options, ReportData* d) {
  DiffOptions o;
  o.steps.range_regex = options.step_regex;
  ASSIGN_OR_RETURN(TraceDiff diff, DiffTraces(before, after, o));
  ReportCompare& c = d->compare;
  c.before_path = before_reader.path();
  c.basis = diff.basis;
  c.before_ns = diff.before_ns;
  c.after_ns = diff.after_ns;
  c.speedup = diff.speedup;
  c.tables = {Text("summary", diff.summary), Text("kernels", diff.kernels), Text("nvtx", diff.nvtx),
              Text("top5", diff.top5)};
  ASSIGN_OR_RETURN(ReportData b, CollectReportData(before_reader, before, options));
  c.before_steps = b.step_summary;
  c.before_breakdown = b.breakdown;
  c.before_findings = std::move(b.findings);
  d->has_compare = true;
  return OkStatus();
}

}  // namespace stepscope
