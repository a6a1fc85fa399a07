// stepscope analyze: the expert rules, ranked by cost.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/multi_trace.h"
#include "analysis/rules/oom.h"
#include "analysis/rules/rules.h"
#include "analysis/whatif/pricing.h"
#include "cli/analysis_flags.h"
#include "cli/commands.h"
#include "cli/mfu_flags.h"
#include "cli/plan_flags.h"
#include "common/progress.h"

namespace stepscope {
namespace {

double Pct(int64_t a, int64_t b) { return b > 0 ? 100.0 * a / b : 0.0; }

// Analysis::host_split as a table (empty without a host model).
Table HostSplitTable(const TraceModel& m, const Analysis& a) {
  Table t({{"step", "Step", true},
           {"tid", "TID", true},
           {"thread", "Thread", false},
           {"source", "Source", false},
           {"step_ns", "Step (ns)", true},
           {"python_ns", "Python (ns)", true},
           {"cuda_api_ns", "CUDA API (ns)", true},
           {"sync_ns", "Blocked: Sync (ns)", true},
           {"gil_ns", "Blocked: GIL (ns)", true},
           {"dataloader_ns", "Blocked: DataLoader (ns)", true},
           {"other_blocked_ns", "Blocked: Other (ns)", true},
           {"unknown_ns", "Not Observed (ns)", true},
           {"top_python", "Top Python Lines", false}});
  for (const HostStepSplit& h : a.host_split) {
    t.AddRow({Cell(h.step), Cell(static_cast<int64_t>(h.tid)), m.ThreadName(h.tid), h.source,
              Cell(h.step_ns), Cell(h.python_ns), Cell(h.cuda_api_ns), Cell(h.sync_ns),
              Cell(h.gil_ns), Cell(h.dataloader_ns), Cell(h.other_blocked_ns), Cell(h.unknown_ns),
              h.top_python});
  }
  return t;
}

// mfu: the MFU line (analysis/mfu.h), only when there is an MFU (a FLOP source, a steady step, a
// known peak).
std::string Text(const TraceModel& m, const Analysis& a, double min_pct, const std::string& mfu) {
  std::string s = "trace " + m.path() + (m.finalized() ? "" : " (cut off: not finalized)") + "\n";
  const StepSet& st = a.steps;
  if (st.steps.empty()) {
    s += "steps: none found (no 'step N'/'ProfilerStep#N' NVTX ranges, no repeating kernel "
         "sequence" +
         (st.note.empty() ? std::string() : "; " + st.note) + ")\n";
  } else {
    s += "steps: " + std::to_string(st.steps.size()) + " (" + std::to_string(a.complete_steps) +
         " steady) by " + st.method + " '" + std::string(KernelBaseName(st.pattern)).substr(0, 60) +
         "'; median " + FormatDuration(static_cast<int64_t>(st.stats.median)) + ", CV " +
         FormatFixed(st.stats.mean > 0 ? 100.0 * st.stats.stddev / st.stats.mean : 0.0, 1) + "%\n";
  }
  if (st.dropped.total() > 0) {
    const StepRangeDrops& d = st.dropped;
    std::string why;
    auto part = [&](int64_t n, const char* what) {
      if (n > 0) why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    part(d.gpu_side, "GPU-side (gpu_user_annotation)");
    part(d.zero_length, "zero-length");
    part(d.other_kind, "ProfilerStep#N beside 'step N'");
    part(d.other_thread, "on another thread");
    part(d.overlapping, "nested or overlapping");
    s += "step-named ranges that are not steps: " + why + "\n";
  }
  if (a.device < 0) {
    s += "GPU: no GPU activity in the trace\n";
  } else {
    const IdleSummary& i = a.idle;
    s += "analyzed: " + FormatDuration(a.analyzed_ns) + " on device " + std::to_string(a.device) +
         "; GPU busy " + FormatFixed(Pct(i.busy_ns, i.analyzed_ns), 1) + "%, idle " +
         FormatFixed(Pct(i.idle_ns, i.analyzed_ns), 1) + "%";
    if (i.idle_ns > 0) {
      s += " (";
      for (int c = 0; c < 4; ++c) {
        s += std::string(c ? ", " : "") + GapCauseName(static_cast<GapCause>(c)) + " " +
             FormatDuration(i.by_cause[c]);
      }
      s += ")";
    }
    s += "\n";
  }
  if (!mfu.empty()) s += mfu + "\n";
  for (const std::string& u : a.undecided) s += "undecided: " + u + "\n";
  if (a.simulated_step_ns > 0) {
    s += "replay: median step " + FormatDuration(a.measured_step_ns) + " measured, " +
         FormatDuration(a.simulated_step_ns) + " simulated\n";
    if (a.scaled_step_ns > 0) {
      s += "untraced: step " + FormatDuration(a.untraced_step_ns) +
           UntracedSource(a.untraced_measured_steps) + ", host time x" +
           FormatFixed(a.host_scale, 3) + ": replayed " + FormatDuration(a.scaled_step_ns) +
           "; savings below are priced at that host speed\n";
    }
    if (a.estimated_untraced_step_ns > 0) {
      s += "untraced (estimated): the tracer's own host time, " +
           FormatDuration(a.tracer_ns_per_step) + " per step, removed: replayed " +
           FormatDuration(a.estimated_untraced_step_ns) +
           "; savings below are priced at that host speed (--keep-tracer-time: as traced)\n";
    }
    s += UntracedWindowLine(m, a.untraced_measured_steps, a.simulated_step_ns);
  }
  if (!a.critical_path.empty()) s += "critical path: " + a.critical_path + "\n";
  if (const std::string note = HostBoundStepNote(a.host_bound, a.untraced_step_ns > 0);
      !note.empty()) {
    s += "host speed: " + note + "\n";
  }
  if (!a.whatif_error.empty()) s += "what-if: not priced (" + a.whatif_error + ")\n";
  if (a.findings.empty()) {
    s += "\nNo findings costing " + FormatFixed(min_pct, 1) + "% of the analyzed time or more.\n";
    return s;
  }
  int n = 0;
  for (const Finding& f : a.findings) {
    s += "\n" + std::to_string(++n) + ". [" + f.rule + "] " + f.title + "\n";
    s += "   cost:  ";
    if (f.evidence_only) {
      s += std::string("not priced (evidence only: no fix to replay)") +
           (f.reported ? "" : " [below threshold]") + "\n";
    } else {
      if (f.cost_per_step_ns > 0) s += FormatDuration(f.cost_per_step_ns) + " per step, ";
      s += FormatDuration(f.cost_ns) + " total (" + FormatFixed(f.cost_pct, 1) +
           (f.step_before_ns > 0 ? "% of the step, by replay)" : "% of the analyzed time)") +
           (f.reported ? "" : " [below threshold]") + "\n";
    }
    if (f.step_before_ns > 0) {
      s += "   if fixed: step " + FormatFixed(f.step_before_ns / 1e6, 1) + " -> " +
           FormatFixed(f.step_after_ns / 1e6, 1) + " ms (" +
           FormatFixed(f.step_after_ns > 0 ? 1.0 * f.step_before_ns / f.step_after_ns : 0, 2) +
           "x): " + f.whatif + "\n";
      if (!f.bound_after.empty()) s += "   then:  bound by " + f.bound_after + "\n";
      const std::string caveat =
          HostSpeedCaveat(a.host_bound, f.host_bound_after, a.untraced_step_ns > 0);
      if (!caveat.empty()) s += "   note:  " + caveat + "\n";
    }
    if (!f.where.empty()) s += "   where: " + f.where + "\n";
    s += "   what:  " + f.detail + "\n";
    s += "   fix:   " + f.fix + "\n";
    for (const FindingExample& e : f.examples) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "+%.6f s", (e.start_ns - m.origin_ns()) / 1e9);
      s += "   e.g.:  " + (e.step >= 0 ? "step " + std::to_string(e.step) + " " : std::string()) +
           buf;
      if (e.end_ns > e.start_ns) s += " (" + FormatDuration(e.end_ns - e.start_ns) + ")";
      if (!e.nvtx.empty()) s += " in `" + e.nvtx + "`";
      s += "\n";
    }
  }
  return s;
}

// --fail-on LIST: rule ids (checked against the rule list) and percentages.
Status ParseFailOn(const std::string& list, std::vector<std::string>* rules,
                   std::vector<double>* pcts) {
  for (const std::string& item : Split(list, ',')) {
    double pct = 0;
    if (ParseDouble(item, &pct)) {
      if (pct < 0) return InvalidInput("--fail-on '" + item + "': a percentage must be >= 0");
      pcts->push_back(pct);
      continue;
    }
    bool known = false;
    for (const RuleInfo& r : RuleList()) known |= item == r.id;
    if (!known) {
      return InvalidInput("--fail-on '" + item +
                          "': not a rule id or a percentage; see stepscope analyze --rules");
    }
    rules->push_back(item);
  }
  if (rules->empty() && pcts->empty()) return InvalidInput("--fail-on: empty list");
  return OkStatus();
}

// The first reported finding that --fail-on names, as one phrase; empty when none.
std::string FailOnMatch(const Analysis& a, const std::vector<std::string>& rules,
                        const std::vector<double>& pcts) {
  for (const Finding& f : a.findings) {
    if (!f.reported) continue;
    const bool by_rule = std::find(rules.begin(), rules.end(), f.rule) != rules.end();
    const bool by_cost =
        std::any_of(pcts.begin(), pcts.end(), [&](double pct) { return f.cost_pct >= pct; });
    if (by_rule || by_cost) {
      return "finding '" + f.rule + "' costs " + FormatFixed(f.cost_pct, 1) + "% (" + f.title + ")";
    }
  }
  return "";
}

// One trace's output.
struct AnalyzeOut {
  std::string text;
  Table summary, findings, undecided, host, mfu;
  std::string gate;  // why --fail-on matched, or empty
};

// The trace's output tables but the host split: the summary, the findings,
// the undecided rules.
void AnalysisTables(const Analysis& a, AnalyzeOut* o) {
  o->summary = Table({{"steps", "Steps", true},
                      {"median_step_ns", "Median Step (ns)", true},
                      {"device", "Device", true},
                      {"analyzed_ns", "Analyzed (ns)", true},
                      {"busy_ns", "Busy (ns)", true},
                      {"idle_ns", "Idle (ns)", true},
                      {"host_wait_ns", "Host-Wait (ns)", true},
                      {"sync_wait_ns", "Sync-Wait (ns)", true},
                      {"kernel_wait_ns", "Kernel-Wait (ns)", true},
                      {"other_idle_ns", "Other Idle (ns)", true},
                      {"replayed_measured_step_ns", "Replayed Steps, Measured (ns)", true},
                      {"simulated_step_ns", "Simulated Step (ns)", true},
                      {"untraced_step_ns", "Untraced Step (ns)", true},
                      {"host_scale", "Host Scale", true},
                      {"host_bound", "Host Bound", false},
                      {"critical_path", "Critical Path", false},
                      {"tracer_ns_per_step", "Tracer Time Per Step (ns)", true},
                      {"estimated_untraced_step_ns", "Estimated Untraced Step (ns)", true}});
  const IdleSummary& i = a.idle;
  o->summary.AddRow({Cell(a.complete_steps), Cell(a.steps.stats.median, 1),
                     Cell(static_cast<int64_t>(a.device)), Cell(a.analyzed_ns), Cell(i.busy_ns),
                     Cell(i.idle_ns), Cell(i.by_cause[0]), Cell(i.by_cause[1]), Cell(i.by_cause[2]),
                     Cell(i.by_cause[3]), Cell(a.measured_step_ns), Cell(a.simulated_step_ns),
                     Cell(a.untraced_step_ns), Cell(a.host_scale, 3), a.host_bound ? "yes" : "no",
                     a.critical_path, Cell(a.tracer_ns_per_step),
                     Cell(a.estimated_untraced_step_ns)});
  o->findings = Table({{"rule", "Rule", false},
                       {"cost_ns", "Cost (ns)", true},
                       {"cost_pct", "Cost (%)", true},
                       {"cost_per_step_ns", "Per Step (ns)", true},
                       {"count", "Count", true},
                       {"reported", "Reported", false},
                       {"step_before_ns", "Step Before (ns)", true},
                       {"step_after_ns", "Step If Fixed (ns)", true},
                       {"title", "What", false},
                       {"where", "Where", false},
                       {"detail", "Detail", false},
                       {"fix", "Fix", false},
                       // added later, last: the idle gaps the finding owns, by cause
                       {"gap_host_wait_ns", "Host-Wait Gaps (ns)", true},
                       {"gap_sync_wait_ns", "Sync-Wait Gaps (ns)", true},
                       {"bound_after", "Bound After Fix", false}});
  for (const Finding& f : a.findings) {
    o->findings.AddRow({f.rule, Cell(f.cost_ns), Cell(f.cost_pct, 2), Cell(f.cost_per_step_ns),
                        Cell(f.count), f.reported ? "yes" : "no", Cell(f.step_before_ns),
                        Cell(f.step_after_ns), f.title, f.where, f.detail, f.fix,
                        Cell(f.gap_ns[static_cast<int>(GapCause::kHostWait)]),
                        Cell(f.gap_ns[static_cast<int>(GapCause::kSyncWait)]), f.bound_after});
  }
  o->undecided = Table({{"rule", "Rule", false}, {"reason", "Why Undecided", false}});
  for (const std::string& u : a.undecided) {
    // The rules word each line "rule: reason".
    const size_t colon = u.find(": ");
    o->undecided.AddRow({colon == std::string::npos ? "" : u.substr(0, colon),
                         colon == std::string::npos ? u : u.substr(colon + 2)});
  }
}

// --rules: the rules, as text or a table.
int ListRules(const ArgParser& p) {
  OutputSpec list_output;
  if (Status st = p.ParseTableOutput(&list_output); !st.ok()) return ReportError("analyze", st);
  if (list_output.format != OutputFormat::kText || !list_output.path.empty()) {
    Table t({{"rule", "Rule", false}, {"summary", "Summary", false}});
    for (const RuleInfo& r : RuleList()) t.AddRow({r.id, r.summary});
    return EmitTables("analyze", p, {{"rules", "Rules", t, ""}}, list_output);
  }
  int width = 0;
  for (const RuleInfo& r : RuleList()) width = std::max(width, static_cast<int>(std::strlen(r.id)));
  for (const RuleInfo& r : RuleList()) std::printf("%-*s %s\n", width, r.id, r.summary);
  return 0;
}

}  // namespace

int RunAnalyze(int argc, char** argv) {
  ArgParser p("analyze", "[options] TRACE...",
              "Run the expert rules over a trace and list what slows the training steps down:\n"
              "what happened, where (steps, NVTX range, time), what it costs, and the fix, ranked\n"
              "by cost. GPU idle time is attributed to host-wait (the host issued work late: data\n"
              "loading, Python), sync-wait (the host was blocked in a synchronization) and\n"
              "kernel-wait (launch latency). Rules and thresholds: docs/rules.md.");
  p.Flag("--min-cost", "PCT", "report findings costing at least PCT % of the analyzed time", "1.0");
  p.Switch("--all", "also list findings below their threshold");
  p.Switch("--rules", "list the rules and exit");
  p.Flag("--fail-on", "LIST",
         "CI gate: exit 1 when a reported finding matches: a rule id (host_sync) or a cost "
         "percentage (5: any finding costing 5% or more); comma-separated");
  AddStepFlags(&p);
  AddPricingFlags(&p);
  AddUntracedFlag(&p);
  p.Flag("--device", "D", "time-based rules look at device D (default: the busiest device)");
  AddOutputFlags(&p);
  AddPlanFlags(&p, false);  // the run's model: the oom finding's fixes from the planner
  p.Epilog(
      "examples:\n"
      "  stepscope analyze run.sqlite\n"
      "  stepscope analyze --model config.json --micro-batch 8 --seq-len 2048 oom_run.sqlite\n"
      "  stepscope analyze --model config.json --micro-batch 8 --seq-len 2048 run.sqlite  # + MFU\n"
      "  stepscope analyze --all --format json run.sqlite\n"
      "  stepscope analyze rank*.sqlite\n"
      "  stepscope analyze --fail-on host_sync,data_loading,10 run.sqlite   # a CI gate");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.Has("--rules")) return ListRules(p);
  OutputSpec output;
  int jobs = 0;
  ScopeSpec spec;
  Status st = ParseOutputFlags(p, &output, &jobs);
  if (st.ok()) st = ParseScopeSpec(p, &spec);
  AnalyzeOptions opt;
  if (st.ok() && (!ParseDouble(p.Get("--min-cost"), &opt.min_cost_pct) || opt.min_cost_pct < 0)) {
    st = InvalidInput("--min-cost '" + p.Get("--min-cost") + "': expected a percentage, e.g. 2.5");
  }
  if (st.ok()) st = ParsePricingFlags(p, &opt);
  if (st.ok()) st = ParseUntracedFlag(p, &opt);
  if (st.ok() && p.positionals().empty())
    st = InvalidInput("no trace given; usage: stepscope analyze [options] TRACE...");
  if (st.ok() && p.Has("--model")) {
    auto om = std::make_shared<OomModel>();
    st = ParsePlanFlags(p, &om->model, &om->options);
    opt.oom_model = std::move(om);
  }
  MfuOptions mfu_opt;  // the MFU line: the model's FLOPs, else stored roofline counters
  if (st.ok() && p.Has("--model")) st = ParseMfuModel(p, &mfu_opt);
  std::vector<std::string> fail_rules;
  std::vector<double> fail_pcts;
  if (st.ok() && p.Has("--fail-on")) st = ParseFailOn(p.Get("--fail-on"), &fail_rules, &fail_pcts);
  if (!st.ok()) return ReportError("analyze", st);
  opt.all = p.Has("--all");
  opt.device = spec.device;
  opt.steps.range_regex = spec.step_regex;
  const bool many = p.positionals().size() > 1;
  std::atomic<size_t> done{0};
  // Cleared (reset) before anything is printed.
  std::optional<ProgressReporter> progress;
  progress.emplace("analyze", CountProgress(&done, p.positionals().size(), "traces"));
  auto res = ForEachTrace<AnalyzeOut>(
      p.positionals(), jobs, [&](const TraceModel& m, size_t index) -> StatusOr<AnalyzeOut> {
        struct Count {
          std::atomic<size_t>* n;
          ~Count() { ++*n; }
        } count{&done};
        AnalyzeOptions o_opt = opt;
        ApplyCeilings(p, m, &o_opt);
        ASSIGN_OR_RETURN(Analysis a, Analyze(m, o_opt));
        AnalyzeOut o;
        MfuOptions mo = mfu_opt;
        mo.device = a.device;
        mo.bench = o_opt.bench;
        mo.measured = MeasuredKernelsOf(
            m.path(), p.Has("--ceilings") ? p.Get("--ceilings") : DefaultCeilingsPath());
        std::string mfu;
        if (mo.has_model || !mo.measured.empty()) {
          // Only an MFU to show: `stepscope mfu` explains a missing peak or step.
          const MfuReport r = ComputeMfu(m, a.steps, mo);
          if (r.has_mfu()) mfu = MfuLine(r), o.mfu = MfuSummaryTable(r);
        }
        o.text = Text(m, a, opt.min_cost_pct, mfu);
        AnalysisTables(a, &o);
        o.host = HostSplitTable(m, a);
        if (o.host.size() > 0) {
          o.text += "\nhost: the launching thread per step (docs/host.md)\n" + o.host.RenderText();
        }
        o.gate = FailOnMatch(a, fail_rules, fail_pcts);
        if (!o.gate.empty()) o.gate = m.path() + ": " + o.gate;
        if (many) {
          AddTraceColumns(&o.summary, m, index);
          AddTraceColumns(&o.findings, m, index);
          AddTraceColumns(&o.undecided, m, index);
          if (o.host.size() > 0) AddTraceColumns(&o.host, m, index);
          if (o.mfu.size() > 0) AddTraceColumns(&o.mfu, m, index);
        }
        return o;
      });
  progress.reset();
  if (!res.ok()) return ReportError("analyze", res.status());
  // --fail-on: the output is written as usual, then exit 1 with one line per matching trace.
  auto gate = [&](int rc) {
    if (rc != 0) return rc;
    for (const AnalyzeOut& o : *res) {
      if (!o.gate.empty())
        std::fprintf(stderr, "stepscope analyze: --fail-on: %s\n", o.gate.c_str());
    }
    for (const AnalyzeOut& o : *res) {
      if (!o.gate.empty()) return 1;
    }
    return 0;
  };
  if (output.format == OutputFormat::kText) {
    std::string text;
    for (size_t k = 0; k < res->size(); ++k) text += (k ? "\n" : "") + (*res)[k].text;
    return gate(EmitText("analyze", p, text));
  }
  std::vector<NamedTable> out = {
      {"summary", "GPU time in the analyzed steps", Table(), ""},
      {"findings", "Findings, ranked by cost", Table(), ""},
      {"undecided", "Rules that lacked the evidence to decide", Table(), ""}};
  bool any_host = false;
  for (const AnalyzeOut& o : *res) any_host |= o.host.size() > 0;
  // Only traces with a host model add the table: older outputs stay as they were.
  if (any_host) out.push_back({"host", "The launching thread per step", Table(), ""});
  // Likewise the MFU table: only when a trace has a FLOP source (docs/flops.md).
  bool any_mfu = false;
  for (const AnalyzeOut& o : *res) any_mfu |= o.mfu.size() > 0;
  if (any_mfu) out.push_back({"mfu", "MFU of the median step", Table(), ""});
  for (const AnalyzeOut& o : *res) {
    AppendRows(&out[0].table, o.summary);
    AppendRows(&out[1].table, o.findings);
    AppendRows(&out[2].table, o.undecided);
    if (any_host) AppendRows(&out[3].table, o.host);
    if (any_mfu) AppendRows(&out.back().table, o.mfu);
  }
  return gate(EmitTables("analyze", p, out, output));
}

}  // namespace stepscope
