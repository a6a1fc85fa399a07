// stepscope diff: before vs after.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/diff.h"
#include "analysis/model/trace_model.h"
#include "analysis/rules/rules.h"
#include "cli/analysis_flags.h"
#include "cli/commands.h"

namespace stepscope {
namespace {

// True when `f` (a finding of BEFORE) is gone from AFTER's findings: none of
// the same rule and title, or one whose cost per step is below half of f's.
bool FixedIn(const Finding& f, const std::vector<Finding>& after) {
  for (const Finding& g : after) {
    if (g.rule == f.rule && g.title == f.title) return 2 * g.cost_per_step_ns < f.cost_per_step_ns;
  }
  return true;
}

}  // namespace

int RunDiff(int argc, char** argv) {
  ArgParser p("diff", "[options] BEFORE AFTER",
              "Compare two traces of the same training program, e.g. before and after an\n"
              "optimization: the step-time speedup (median step; BEFORE/AFTER > 1 means AFTER is\n"
              "faster), per-kernel GPU time per step and per-NVTX-range average duration with\n"
              "their change (added / removed / faster / slower / same), and AFTER's top-5 kernels\n"
              "with their rank in BEFORE. Details: docs/cli.md#diff.");
  p.Flag("--limit", "N", "rows per change table, largest change first (0: all)", "20");
  p.Flag("--same", "PCT", "changes smaller than PCT % count as 'same'", "5");
  p.Flag("--fail-if-slower", "PCT",
         "CI gate: exit 1 when AFTER's step is more than PCT % slower than BEFORE's");
  AddStepFlags(&p);
  p.Flag("--device", "D", "GPU activity of device D only");
  AddPricingFlags(&p);
  AddOutputFlags(&p, false);
  p.Epilog(
      "examples:\n"
      "  stepscope diff workers0.sqlite workers4.sqlite\n"
      "  stepscope diff --limit 0 --format csv -o diff/ before.sqlite after.sqlite\n"
      "  stepscope diff --fail-if-slower 3 main.sqlite branch.sqlite   # a CI gate");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputSpec output;
  ScopeSpec spec;
  DiffOptions opt;
  Status st = ParseOutputFlags(p, &output, nullptr);
  if (st.ok()) st = ParseScopeSpec(p, &spec);
  int64_t limit = 0;
  if (st.ok() && (!ParseInt64(p.Get("--limit"), &limit) || limit < 0)) {
    st = InvalidInput("--limit '" + p.Get("--limit") + "': expected a number >= 0");
  }
  if (st.ok() && (!ParseDouble(p.Get("--same"), &opt.same_pct) || opt.same_pct < 0)) {
    st = InvalidInput("--same '" + p.Get("--same") + "': expected a percentage, e.g. 5");
  }
  double slower_pct = -1;
  if (st.ok() && p.Has("--fail-if-slower") &&
      (!ParseDouble(p.Get("--fail-if-slower"), &slower_pct) || slower_pct < 0)) {
    st = InvalidInput("--fail-if-slower '" + p.Get("--fail-if-slower") +
                      "': expected a percentage, e.g. 3");
  }
  AnalyzeOptions aopt;  // BEFORE's findings, priced (the predicted table)
  if (st.ok()) st = ParsePricingFlags(p, &aopt);
  if (st.ok() && p.positionals().size() != 2) {
    st = InvalidInput(
        "expected two traces, BEFORE and AFTER; usage: stepscope diff [options] BEFORE AFTER");
  }
  if (!st.ok()) return ReportError("diff", st);
  opt.limit = static_cast<int>(limit);
  if (output.format == OutputFormat::kText) opt.unit = output.unit;  // CSV/JSON: ns
  opt.steps.range_regex = spec.step_regex;
  opt.steps.device = spec.device;
  auto before = LoadTrace(p.positionals()[0]);
  if (!before.ok()) return ReportError("diff", before.status());
  auto after = LoadTrace(p.positionals()[1]);
  if (!after.ok()) return ReportError("diff", after.status());
  auto d = DiffTraces(**before, **after, opt);
  if (!d.ok()) return ReportError("diff", d.status());
  // What BEFORE's analysis predicted (each finding's step if fixed, by
  // replay: docs/whatif.md) next to what AFTER measured. The two are the same
  // quantity only for a finding AFTER no longer has (fixed: gone, or its cost
  // per step below half of BEFORE's); the error is given for those only.
  Table predicted({{"rule", "Finding (before)", false},
                   {"before_ns", "Before, Measured (ns)", true},
                   {"predicted_ns", "Predicted If Fixed (ns)", true},
                   {"after_ns", "After, Measured (ns)", true},
                   {"error_pct", "Prediction Error (%)", true},
                   {"title", "What", false},
                   {"fixed", "Fixed In After", false}});  // added later: last
  aopt.steps = opt.steps;
  aopt.device = spec.device;
  AnalyzeOptions after_opt = aopt;
  after_opt.all = true;  // a finding below its threshold in AFTER is still there
  ApplyCeilings(p, **before, &aopt);
  ApplyCeilings(p, **after, &after_opt);
  auto analysis = Analyze(**before, aopt);
  auto after_analysis = Analyze(**after, after_opt);
  std::string predicted_note;
  if (analysis.ok() && d->basis == "median step") {
    std::vector<const Finding*> priced;
    std::vector<bool> fixed;
    for (const Finding& f : analysis->findings) {
      if (f.step_before_ns <= 0 || !f.reported) continue;
      priced.push_back(&f);
      fixed.push_back(after_analysis.ok() && FixedIn(f, after_analysis->findings));
    }
    // One fixed finding: AFTER measured its fix alone, the same quantity as
    // the prediction. Several: AFTER measured their fixes together; the error
    // is given for the largest predicted saving among them (the fix AFTER's
    // change must at least contain), the others are marked.
    const auto n_fixed = std::count(fixed.begin(), fixed.end(), true);
    const Finding* largest = nullptr;
    for (size_t i = 0; i < priced.size(); ++i) {
      if (fixed[i] && (!largest || priced[i]->step_after_ns < largest->step_after_ns))
        largest = priced[i];
    }
    for (size_t i = 0; i < priced.size(); ++i) {
      const Finding& f = *priced[i];
      const bool compared = &f == largest;
      const Cell err = compared && d->after_ns > 0
                           ? Cell(100.0 * (f.step_after_ns - d->after_ns) / d->after_ns, 1)
                           : Cell("");
      const std::string how = !fixed[i]      ? "no"
                              : n_fixed == 1 ? "yes"
                              : compared     ? "yes, largest of " + std::to_string(n_fixed)
                                             : "yes, with the largest";
      predicted.AddRow({f.rule, Cell(static_cast<int64_t>(std::llround(d->before_ns))),
                        Cell(f.step_after_ns),
                        Cell(static_cast<int64_t>(std::llround(d->after_ns))), err, f.title, how});
    }
    if (n_fixed > 1) {
      predicted_note = "AFTER fixed " + std::to_string(n_fixed) +
                       " findings at once; each prediction is for its fix alone: the error is "
                       "given for the largest predicted saving only";
    }
  }
  std::vector<NamedTable> out = {
      {"diff_summary", "Before vs after", d->summary, ""},
      {"diff_predicted", "Before's findings: predicted step if fixed vs after, measured", predicted,
       predicted_note},
      {"diff_kernels", "Kernels: GPU time per step, largest change first", d->kernels, ""},
      {"diff_nvtx", "NVTX ranges: average duration, largest change first", d->nvtx, ""},
      {"diff_top5", "Top-5 kernels after", d->top5, ""}};
  std::string head;
  if (output.format == OutputFormat::kText) {
    head = "step time (" + d->basis + "): " + FormatDuration(std::llround(d->before_ns)) + " -> " +
           FormatDuration(std::llround(d->after_ns));
    if (d->speedup > 0) {
      head += ": " + FormatFixed(d->speedup, 3) + "x " + (d->speedup >= 1 ? "faster" : "slower") +
              " (before/after)";
    }
    head += "\n\n";
  }
  const int rc = EmitTables("diff", p, out, output, head);
  if (rc != 0 || slower_pct < 0) return rc;
  // --fail-if-slower: after the output, one line and exit 1 when AFTER is slower.
  if (d->before_ns > 0 && d->after_ns > d->before_ns * (1.0 + slower_pct / 100.0)) {
    std::fprintf(stderr,
                 "stepscope diff: --fail-if-slower %s: the %s went from %s to %s (%.1f%% slower)\n",
                 p.Get("--fail-if-slower").c_str(), d->basis.c_str(),
                 FormatDuration(std::llround(d->before_ns)).c_str(),
                 FormatDuration(std::llround(d->after_ns)).c_str(),
                 100.0 * (d->after_ns / d->before_ns - 1.0));
    return 1;
  }
  return 0;
}

}  // namespace stepscope
