// The report's host section: the host recipes' tables, as `stats` prints them
// (docs/host.md, docs/report.md).
#include "analysis/model/host.h"
#include "analysis/recipes/recipes.h"
#include "report/report_sources.h"

namespace stepscope {

Status CollectHost(const TraceModel& m, ReportData* d) {
  if (!HasHostModel(m)) return OkStatus();
  RecipeOptions o;
  ASSIGN_OR_RETURN(d->thread_states, ThreadStates(m, o));
  ASSIGN_OR_RETURN(Table lines, PythonHotspotsRecipe(m, o));
  // The first 10 lines with self time (the recipe also lists callers' lines).
  Table top(lines.columns());
  for (const auto& row : lines.rows()) {
    if (top.size() >= 10) break;
    const auto* self = std::get_if<int64_t>(&row[1].value);
    if (self == nullptr || *self > 0) top.AddRow(row);
  }
  d->python_hotspots = std::move(top);
  d->has_host = true;
  return OkStatus();
}

}  // namespace stepscope
