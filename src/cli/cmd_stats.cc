// stepscope stats: the summary recipes over one or more traces.
#include <cstdio>

#include "analysis/model/multi_trace.h"
#include "analysis/recipes/recipes.h"
#include "cli/analysis_flags.h"
#include "cli/commands.h"

namespace stepscope {

int RunStats(int argc, char** argv) {
  ArgParser p("stats", "[options] TRACE...",
              "Summary tables (recipes) of one or more traces: where GPU and API time goes.\n"
              "Several traces (one per rank) are processed in parallel and every table gets\n"
              "rank and file columns. Definitions, columns and units: docs/recipes.md.");
  p.Flag("--report", "NAME", "recipe to run (default: every summary recipe; 'all': every recipe)",
         "", "-r", true);
  p.Switch("--list", "list the recipes and exit");
  p.Flag("--name", "NAME",
         "cuda_gpu_kern_pace: kernel name (default: the top kernel); nvtx_pace: "
         "range name (default: the steps)");
  p.Flag("--buckets", "N", "gpu_time_util: number of time buckets", "20");
  p.Switch("--nsys-names",
           "CSV headers / JSON keys as 'nsys stats' names them ('Total Time (ns)', not "
           "total_ns): scripts written for nsys's CSV read ours (docs/recipes.md)");
  AddScopeFlags(&p);
  AddStepFlags(&p);
  AddOutputFlags(&p);
  p.Epilog(
      "examples:\n"
      "  stepscope stats run.sqlite\n"
      "  stepscope stats -r cuda_gpu_kern_sum --step 12 run.sqlite\n"
      "  stepscope stats -r nvtx_gpu_proj_sum --nvtx forward --format csv run.sqlite\n"
      "  stepscope stats -r cuda_gpu_kern_pace --name nvjet run.sqlite\n"
      "  stepscope stats --format csv -o stats/ rank*.sqlite   # stats/<recipe>.csv\n"
      "  stepscope stats --format csv --nsys-names -r cuda_gpu_kern_sum run.sqlite\n"
      "  stepscope stats --format json -o stats.json rank*.sqlite");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.Has("--list")) {
    OutputSpec list_output;
    if (Status st = p.ParseTableOutput(&list_output); !st.ok()) return ReportError("stats", st);
    if (list_output.format != OutputFormat::kText || !list_output.path.empty()) {
      Table t(
          {{"name", "Name", false}, {"summary", "Summary", false}, {"default", "Default", false}});
      for (const RecipeInfo& r : Recipes())
        t.AddRow({r.name, r.summary, r.in_default_set ? "yes" : "no"});
      return EmitTables("stats", p, {{"recipes", "Recipes", t, ""}}, list_output);
    }
    for (const RecipeInfo& r : Recipes()) {
      std::printf("%-22s %s%s\n", r.name, r.summary,
                  r.in_default_set ? "" : " [not in the default set]");
    }
    return 0;
  }
  OutputSpec output;
  int jobs = 0;
  ScopeSpec spec;
  RecipeOptions base;
  Status st = ParseOutputFlags(p, &output, &jobs);
  if (st.ok()) st = ParseScopeSpec(p, &spec);
  int64_t buckets = 0;
  if (st.ok() && (!ParseInt64(p.Get("--buckets"), &buckets) || buckets < 1 || buckets > 100000)) {
    st = InvalidInput("--buckets '" + p.Get("--buckets") +
                      "': expected a number between 1 and 100000");
  }
  std::vector<const RecipeInfo*> recipes;
  for (const std::string& name : p.GetAll("--report")) {
    if (name == "all") {
      for (const RecipeInfo& r : Recipes()) recipes.push_back(&r);
      continue;
    }
    const RecipeInfo* r = FindRecipe(name);
    if (!r && st.ok())
      st = InvalidInput("--report '" + name +
                        "': unknown recipe; 'stepscope stats --list' lists them");
    if (r) recipes.push_back(r);
  }
  if (p.GetAll("--report").empty()) {
    for (const RecipeInfo& r : Recipes()) {
      if (r.in_default_set) recipes.push_back(&r);
    }
  }
  const bool nsys_names = p.Has("--nsys-names");
  if (st.ok() && nsys_names && output.format == OutputFormat::kText)
    st = InvalidInput("--nsys-names names CSV/JSON columns; add --format csv or --format json");
  if (st.ok() && p.positionals().empty())
    st = InvalidInput("no trace given; usage: stepscope stats [options] TRACE...");
  if (!st.ok()) return ReportError("stats", st);
  base.buckets = static_cast<int>(buckets);
  base.name = p.Get("--name");
  base.steps.range_regex = spec.step_regex;
  base.steps.device = spec.device;

  const std::vector<std::string>& paths = p.positionals();
  const bool many = paths.size() > 1;
  auto per_trace = ForEachTrace<std::vector<Table>>(
      paths, jobs, [&](const TraceModel& m, size_t index) -> StatusOr<std::vector<Table>> {
        RecipeOptions o = base;
        ASSIGN_OR_RETURN(o.scope, Scope::Resolve(m, spec));
        std::vector<Table> tables;
        for (const RecipeInfo* r : recipes) {
          auto t = r->run(m, o);
          if (!t.ok()) return t.status().WithContext(m.path() + ": " + r->name);
          if (many) AddTraceColumns(&*t, m, index);
          tables.push_back(std::move(*t));
        }
        return tables;
      });
  if (!per_trace.ok()) return ReportError("stats", per_trace.status());
  std::vector<NamedTable> out;
  for (size_t k = 0; k < recipes.size(); ++k) {
    NamedTable nt{recipes[k]->name, recipes[k]->summary, Table(), ""};
    for (const std::vector<Table>& tables : *per_trace) AppendRows(&nt.table, tables[k]);
    if (nt.table.columns().empty() && !per_trace->empty()) nt.table = (*per_trace)[0][k];
    if (nsys_names) nt.table.UseTitlesAsNames();
    out.push_back(std::move(nt));
  }
  return EmitTables("stats", p, out, output);
}

}  // namespace stepscope
