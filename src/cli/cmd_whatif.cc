// stepscope whatif: replay a trace's steps with a fix applied (docs/whatif.md).
#include <cstdio>

#include "analysis/rules/rules.h"
#include "analysis/whatif/questions.h"
#include "analysis/whatif/transforms.h"
#include "cli/analysis_flags.h"
#include "cli/commands.h"

namespace stepscope {
namespace {

std::string Ms(int64_t ns) { return FormatFixed(ns / 1e6, 2); }

void AddWhatifFlags(ArgParser* p) {
  p->Flag("--remove-sync", "NAME",
          "the host no longer waits in blocking calls named NAME (e.g. cudaStreamSynchronize; "
          "'all': every blocking call), in the steady steps");
  p->Flag("--in", "RANGE", "with --remove-sync: only calls inside NVTX ranges named RANGE");
  p->Switch("--prefetch", "data loading overlapped with the previous step");
  p->Switch("--pin", "pinned instead of pageable copies");
  p->Switch("--side-stream",
            "host<->device copies on a side stream (their data dependencies kept)");
  p->Switch("--no-copies", "without the host<->device copies of the steps (offload avoided)");
  p->Switch("--tensor-cores", "bf16 tensor-core GEMMs instead of fp32/TF32");
  p->Switch("--no-recompute",
            "activation checkpointing off: without the recomputed forward (the recompute finding)");
  p->Flag("--graph", "RANGE",
          "CUDA graphs over every instance of the NVTX range RANGE ('steps': the step ranges)");
  p->Flag("--batch", "N",
          "N times the batch: GPU time x N, host time unchanged (but the CPU's "
          "unified-memory fault bursts, x N)");
  p->Switch("--steps", "list every step: measured and simulated duration");
  AddStepFlags(p);
  p->Flag("--device", "D", "the device whose steps are timed (default: the busiest)");
  AddPricingFlags(p);
  AddUntracedFlag(p);
  p->TableOutput("write to FILE instead of stdout");
  p->Epilog(
      "examples:\n"
      "  stepscope whatif run.sqlite\n"
      "  stepscope whatif --remove-sync cudaStreamSynchronize --in loss.item run.sqlite\n"
      "  stepscope whatif --prefetch --batch 4 --format json run.sqlite");
}

// The questions the flags ask, in the order of the output.
std::vector<WhatifAnswer> Answers(const ArgParser& p, const WhatifQuestions& q, double batch) {
  std::vector<WhatifAnswer> v;
  if (p.Has("--remove-sync")) v.push_back(q.RemoveSync(p.Get("--remove-sync"), p.Get("--in")));
  if (p.Has("--prefetch")) v.push_back(q.RuleFix("data_loading", "prefetch data"));
  if (p.Has("--tensor-cores")) v.push_back(q.RuleFix("fp32_gemm", "tensor cores"));
  if (p.Has("--no-recompute")) v.push_back(q.RuleFix("recompute", "no recomputation"));
  if (p.Has("--pin")) v.push_back(q.PinCopies());
  if (p.Has("--side-stream")) v.push_back(q.SideStream());
  if (p.Has("--no-copies")) v.push_back(q.NoCopies());
  if (p.Has("--graph")) v.push_back(q.CudaGraphs(p.Get("--graph")));
  if (batch > 0) v.push_back(q.LargerBatch(batch));
  return v;
}

// The text output: the replay's fidelity, the critical path, the steps
// (--steps), the answers.
std::string Text(const ArgParser& p, const TraceModel& m, const Analysis& a,
                 const whatif::WhatIfEngine& e, const std::vector<WhatifAnswer>& answers) {
  const int64_t untraced_step_ns = e.untraced_step_ns();
  const bool scaled = untraced_step_ns > 0;
  std::string s = "trace " + m.path() + "\n";
  const int64_t me = e.measured().median, si = e.base().median;
  const int64_t tr = e.traced_base_median();
  s += "median step: " + Ms(me) + " ms measured, " + Ms(tr) + " ms replayed (" +
       FormatFixed(me > 0 ? 100.0 * (tr - me) / me : 0, 2) + "%)\n";
  if (scaled) {
    s += "untraced: step " + Ms(untraced_step_ns) + " ms" +
         UntracedSource(e.untraced_measured_steps()) + ", host time x" +
         FormatFixed(e.host_scale(), 3) + ": replayed " + Ms(si) +
         " ms; the answers below are priced at that host speed\n";
  } else if (e.tracer_ns_per_step() > 0) {
    s += "untraced (estimated): the tracer's own host time, " + Ms(e.tracer_ns_per_step()) +
         " ms per step, removed: replayed " + Ms(si) +
         " ms; the answers below are priced at that host speed (--keep-tracer-time: as traced)\n";
  }
  s += UntracedWindowLine(m, e.untraced_measured_steps(), tr);
  if (!a.critical_path.empty()) s += "critical path: " + a.critical_path + "\n";
  if (p.Has("--steps")) {
    s += std::string("steps (ms): number, measured, replayed") +
         (scaled ? " at the untraced host speed" : "") + "\n";
    for (size_t k = 0; k < a.steps.steps.size(); ++k) {
      if (e.base().duration[k] < 0) continue;
      s += "  " + std::to_string(a.steps.steps[k].number) + "  " + Ms(e.measured().duration[k]) +
           "  " + Ms(e.base().duration[k]) + (a.steps.steps[k].steady() ? "" : "  (not steady)") +
           "\n";
    }
  }
  for (const WhatifAnswer& x : answers) {
    s += x.question + ": step " + Ms(x.p.base_ns) + " -> " + Ms(x.p.fixed_ns) + " ms (" +
         FormatFixed(x.p.speedup(), 2) + "x)" + (x.note.empty() ? "" : "; " + x.note) + "\n";
    if (!x.p.bound_after.empty()) s += "  then bound by " + x.p.bound_after + "\n";
  }
  return s;
}

}  // namespace

int RunWhatif(int argc, char** argv) {
  ArgParser p("whatif", "[options] TRACE",
              "Replay the steady steps of a trace as a dependency graph (host threads, GPU\n"
              "streams, launches, synchronizations) and answer 'what if': the median step as\n"
              "measured, as replayed, and with each asked-for change applied. Without a\n"
              "question it prints the replay's fidelity and the critical path. docs/whatif.md.");
  AddWhatifFlags(&p);
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputSpec output;
  Status st = ParseOutputFlags(p, &output, nullptr);
  AnalyzeOptions opt;
  opt.all = true;
  int64_t v = 0;
  if (st.ok() && p.Has("--device")) {
    if (!ParseInt64(p.Get("--device"), &v) || v < 0) {
      st = InvalidInput("--device '" + p.Get("--device") + "': expected a device number");
    }
    opt.device = static_cast<int>(v);
  }
  double batch = 0;
  if (st.ok() && p.Has("--batch") && (!ParseDouble(p.Get("--batch"), &batch) || batch <= 0)) {
    st = InvalidInput("--batch '" + p.Get("--batch") + "': expected a factor > 0, e.g. 4");
  }
  if (st.ok()) st = ParsePricingFlags(p, &opt);
  if (st.ok()) st = ParseUntracedFlag(p, &opt);
  if (st.ok() && p.positionals().size() != 1)
    st = InvalidInput("expected one trace; usage: stepscope whatif [options] TRACE");
  if (!st.ok()) return ReportError("whatif", st);
  opt.steps.range_regex = p.Get("--step-range");
  auto model = LoadTrace(p.positionals()[0]);
  if (!model.ok()) return ReportError("whatif", model.status());
  const TraceModel& m = **model;
  ApplyCeilings(p, m, &opt);
  auto analysis = Analyze(m, opt);
  if (!analysis.ok()) return ReportError("whatif", analysis.status());
  const Analysis& a = *analysis;
  if (a.device < 0 || a.steps.steps.empty()) {
    return ReportError("whatif",
                       InvalidInput(m.path() + ": no steps with GPU work to replay; see 'stepscope "
                                               "steps' (--step-range REGEX names the steps)"));
  }
  auto engine =
      whatif::WhatIfEngine::Build(m, a.steps, a.device, opt.untraced_step_ns, opt.keep_tracer_time);
  if (!engine.ok()) return ReportError("whatif", engine.status());
  const whatif::WhatIfEngine& e = *engine;

  const std::vector<WhatifAnswer> answers = Answers(p, WhatifQuestions{m, a, e}, batch);
  Table t({{"question", "Question", false},
           {"measured_ns", "Measured Step (ns)", true},
           {"simulated_ns", "Simulated Step (ns)", true},
           {"if_fixed_ns", "If Fixed (ns)", true},
           {"saving_ns", "Saving (ns)", true},
           {"speedup", "Speedup", true},
           {"note", "Note", false}});
  const bool scaled = e.untraced_step_ns() > 0 || e.tracer_ns_per_step() > 0;
  t.AddRow({scaled ? "(at the untraced host speed)" : "(as traced)", Cell(e.measured().median),
            Cell(e.base().median), Cell(e.base().median), Cell(int64_t{0}), Cell(1.0, 3),
            a.critical_path});
  for (const WhatifAnswer& x : answers) {
    t.AddRow({x.question, Cell(x.p.measured_ns), Cell(x.p.base_ns), Cell(x.p.fixed_ns),
              Cell(x.p.saving_ns()), Cell(x.p.speedup(), 3), x.note});
  }
  if (output.format != OutputFormat::kText) {
    return EmitTables("whatif", p, {{"whatif", "What if", t, ""}}, output);
  }
  return EmitText("whatif", p, Text(p, m, a, e, answers));
}

}  // namespace stepscope
