// stepscope roofline: counters of a step's top kernels against this GPU's
// measured ceilings. The flow is in roofline/run_flow.h (survey -> select ->
// profile -> evaluate); this file parses the flags, runs the stages with the
// launcher and prints.
#include <sys/stat.h>

#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/launcher.h"
#include "cli/traced_run.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "roofline/ceilings.h"
#include "roofline/run_flow.h"

namespace stepscope {

namespace {

constexpr const char* kCmd = "roofline";

void PrintReport(const RooflineReport& r, OutputFormat fmt, const std::string& ceilings_how) {
  if (fmt == OutputFormat::kText) {
    std::printf("\nroofline: %s%s, %zu kernel(s); ceilings: %s\n\n", r.gpu_name.c_str(),
                r.step >= 0 ? (", step " + std::to_string(r.step)).c_str() : "", r.entries.size(),
                ceilings_how.c_str());
  }
  const bool text = fmt == OutputFormat::kText;
  std::fputs(
      text ? RooflineTable(r, true).RenderText().c_str()
           : RenderTables({{"roofline", "Roofline", RooflineTable(r, false), ""}}, fmt).c_str(),
      stdout);
  for (const RooflineEntry& e : r.entries) {
    for (const std::string& n : e.result.notes) {
      std::fprintf(stderr, "stepscope roofline: note: #%d: %s\n", e.target.rank, n.c_str());
    }
  }
}

Status WriteSvg(const ArgParser& p, const RooflineReport& r, const std::string& trace, bool text) {
  if (p.Has("--no-svg")) return OkStatus();
  std::string path = p.Has("--svg") ? p.Get("--svg") : DefaultSvgPath(trace);
  RETURN_IF_ERROR(WriteFileAtomic(path, ReportSvg(r)));
  if (text) std::printf("\nchart: %s\n", path.c_str());
  return OkStatus();
}

std::string CeilingsPath(const ArgParser& p) {
  return p.Has("--ceilings") ? p.Get("--ceilings") : DefaultCeilingsPath();
}

// `roofline --from TRACE` without a command: show the stored results again,
// evaluated with the current ceilings.
int ShowStored(const ArgParser& p, OutputFormat fmt) {
  const std::string trace_path = p.Get("--from");
  auto e = EvaluateStored(trace_path, CeilingsPath(p));
  if (!e.ok()) return ReportError(kCmd, e.status());
  PrintReport(e->report, fmt, e->ceilings_how);
  Status st = WriteSvg(p, e->report, trace_path, fmt == OutputFormat::kText);
  if (!st.ok()) return ReportError(kCmd, st);
  return 0;
}

void Warn(const std::string& what) {
  std::fprintf(stderr, "stepscope roofline: warning: %s\n", what.c_str());
}

}  // namespace

namespace {

void DeclareRooflineFlags(ArgParser* p) {
  p->AcceptCommand();
  p->Flag("--top", "N", "profile the N kernels with the most GPU time in the step (0: all)", "5");
  p->Flag("--kernel", "REGEX",
          "only kernels whose demangled name matches (ECMAScript regex; a name longer than "
          "1,024 characters never matches, and is counted); all matches unless --top is given");
  p->Flag("--step", "N",
          "the step to rank kernels in (NVTX range 'step N'); default: the median step");
  p->Flag("--from", "TRACE",
          "pick kernels from this trace instead of a survey run; results are stored in it");
  p->Flag("--output", "TRACE", "trace the survey run writes", "roofline.sqlite", "-o");
  p->Switch("--force-overwrite", "replace an existing survey trace, --svg or --results file", "-f");
  p->Flag("--instances", "K", "profile at most K launches of each kernel", "3");
  p->Flag("--skip", "S", "let the first S matching launches of each kernel run unprofiled", "0");
  p->Flag("--ceilings", "FILE", "ceilings file (default ~/.cache/stepscope/ceilings.json)");
  p->Flag("--svg", "FILE", "where to write the chart (default: beside the trace, .roofline.svg)");
  p->Switch("--no-svg", "do not write the chart");
  p->Switch("--no-store", "do not store the results in the trace");
  p->Switch("--dry-run", "print the selected kernels and stop (no profiling run)");
  p->Flag("--cache-control", "MODE",
          "all: flush L2 before each launch of the time-and-bytes run, as ncu does by default; "
          "none: measure in the cache state the program left",
          "all");
  p->Switch("--one-run",
            "one profiling run: time and bytes from the replayed launches (faster; DRAM bytes "
            "of kernels whose inputs sit in L2 can read high)");
  p->Flag("--results", "FILE", "keep the profiler's raw result lines (JSON lines) in FILE");
  p->Flag("--format", "FMT", "table format: text, csv or json (one object of named tables)",
          "text");
  p->Epilog(
      "examples:\n"
      "  stepscope roofline -- python train.py --steps 10\n"
      "  stepscope roofline --top 10 --step 7 -o run.sqlite -- python train.py\n"
      "  stepscope roofline --from run.sqlite --kernel 'gemm|nvjet' --instances 1 -- python "
      "train.py\n"
      "  stepscope roofline --from run.sqlite --dry-run   # which kernels would be profiled\n"
      "  stepscope roofline --from run.sqlite             # show stored results again\n"
      "\nNeeds permission to read GPU counters (root, or the nvidia module option "
      "NVreg_RestrictProfilingToAdminUsers=0) and measured ceilings (run `stepscope bench` "
      "once). See docs/roofline.md.\n");
}

// The selection and profiling options, checked.
Status ReadRooflineOptions(const ArgParser& p, SelectionOptions* sopt, ProfileOptions* popt) {
  int64_t v = 0;
  if (p.Has("--kernel")) {
    sopt->kernel_regex = p.Get("--kernel");
    sopt->top = 0;
  }
  if (p.Has("--top") || !p.Has("--kernel")) {
    if (!ParseInt64(p.Get("--top"), &v) || v < 0 || v > 1000) {
      return (InvalidInput("--top '" + p.Get("--top") + "': want 0..1000"));
    }
    sopt->top = static_cast<int>(v);
  }
  if (p.Has("--step")) {
    if (!ParseInt64(p.Get("--step"), &v) || v < 0) {
      return (InvalidInput("--step '" + p.Get("--step") + "': want a step number >= 0"));
    }
    sopt->step = v;
  }
  if (p.Get("--cache-control") != "all" && p.Get("--cache-control") != "none") {
    return (InvalidInput("--cache-control '" + p.Get("--cache-control") + "': want all or none"));
  }
  if (!ParseInt64(p.Get("--instances"), &v) || v < 1 || v > 1000) {
    return (InvalidInput("--instances '" + p.Get("--instances") + "': want 1..1000"));
  }
  popt->instances = static_cast<int>(v);
  if (!ParseInt64(p.Get("--skip"), &v) || v < 0) {
    return (InvalidInput("--skip '" + p.Get("--skip") + "': want a count >= 0"));
  }
  popt->skip = static_cast<int>(v);
  popt->cache_control = p.Get("--cache-control");
  popt->one_run = p.Has("--one-run");
  if (p.Has("--results")) popt->results_path = p.Get("--results");

  return OkStatus();
}

Status CheckNamedOutputs(const ArgParser& p) {
  // Files named explicitly are not replaced without -f (the default chart beside the
  // trace is derived from it and rewritten with it). Checked before anything runs.
  for (const char* flag : {"--svg", "--results"}) {
    if (!p.Has(flag) || p.Has("--dry-run")) continue;
    const std::string path = p.Get(flag);
    struct stat st;
    if (!p.Has("--force-overwrite") && ::stat(path.c_str(), &st) == 0) {
      return InvalidInput((std::string(flag) + " " + path +
                           ": exists; pass -f (--force-overwrite) to replace "
                           "it, or name another file"));
    }
  }

  return OkStatus();
}

// 1. The trace to pick kernels from: --from, or a survey run of the command.
StatusOr<std::string> TraceToSelectFrom(const ArgParser& p, const std::vector<std::string>& command,
                                        bool text) {
  std::string trace_path;
  if (p.Has("--from")) {
    trace_path = p.Get("--from");
  } else {
    trace_path = p.Get("--output");
    RETURN_IF_ERROR(CheckOverwrite(trace_path, p.Has("--force-overwrite")));
    if (text)
      std::printf("roofline: survey run (kernels, launches, NVTX) -> %s\n", trace_path.c_str());
    std::fflush(stdout);
    auto traced = [&command](const std::string& pattern,
                             const std::string& categories) -> StatusOr<TracedExit> {
      ASSIGN_OR_RETURN(TracedRunResult r, RunTraced(command, {pattern, categories}));
      return TracedExit{r.exit_code, std::move(r.traces)};
    };
    std::string note;
    Status st = SurveyTrace(trace_path, traced, &note);
    RETURN_IF_ERROR(st);
    if (!note.empty()) std::fprintf(stderr, "stepscope roofline: note: %s\n", note.c_str());
  }

  return trace_path;
}

void PrintSelection(const Selection& sel, OutputFormat fmt, bool dry_run) {
  const bool text = fmt == OutputFormat::kText;
  if (text) {
    if (sel.has_step) {
      std::printf("\nstep %lld (%lld steps in the trace; kernels by %s), %s of kernel time:\n\n",
                  static_cast<long long>(sel.step.number),
                  static_cast<long long>(sel.steps_in_trace), sel.method.c_str(),
                  FormatDuration(sel.step_kernel_ns).c_str());
    } else {
      std::printf("\nno NVTX 'step N' ranges: kernels ranked over the whole trace (%s):\n\n",
                  FormatDuration(sel.step_kernel_ns).c_str());
    }
  }
  if (text) {
    std::fputs(SelectionTable(sel).RenderText().c_str(), stdout);
  } else if (dry_run) {
    std::fputs(
        RenderTables({{"selection", "Selected kernels", SelectionTable(sel), ""}}, fmt).c_str(),
        stdout);
  }
}

// 3-4. Profile the selected kernels, evaluate, print, chart, store.
int ProfileAndReport(const ArgParser& p, const std::vector<std::string>& command,
                     const Selection& sel, const std::string& trace_path,
                     const ProfileOptions& popt, OutputFormat fmt) {
  const bool text = fmt == OutputFormat::kText;
  // 3. Profile.
  auto run = [&command](const EnvVars& env) -> StatusOr<int> {
    ASSIGN_OR_RETURN(ProgramExit exit, RunProgram(command, env));
    return exit.ExitCode();
  };
  auto before_run = [&](const std::string& group) {
    if (text) {
      std::printf(group == "all"
                      ? "\nroofline: profiling run (%d instance(s) per kernel, counters by "
                        "kernel replay)\n"
                      : "roofline: memory run (%d instance(s) per kernel, time and bytes in one "
                        "pass)\n",
                  popt.instances);
    }
    std::fflush(stdout);
  };
  auto prof = ProfileKernels(sel, trace_path, popt, run, before_run);
  if (!prof.ok()) return ReportError(kCmd, prof.status());
  for (const std::string& n : prof->notes) {
    std::fprintf(stderr, "stepscope roofline: note: %s\n", n.c_str());
  }
  for (const std::string& w : prof->warnings) Warn(w);
  if (!prof->error.ok()) return ReportError(kCmd, prof->error);

  // 4. Evaluate, print, chart, store.
  const ProfileResults& results = prof->results;
  Evaluation e = Evaluate(sel, results, CeilingsPath(p));
  for (const std::string& w : e.warnings) Warn(w);
  if (text) {
    std::printf(
        "profiled on %s (%s), chip %s, %d counter pass(es) per instance%s\n",
        results.device.name.c_str(), results.device.uuid.c_str(), results.device.chip.c_str(),
        results.device.passes,
        results.device.run_passes.size() > 1
            ? (", time and bytes in " + std::to_string(results.device.run_passes[1])).c_str()
            : "");
  }
  PrintReport(e.report, fmt, e.ceilings_how);
  Status st = WriteSvg(p, e.report, trace_path, text);
  if (!st.ok()) return ReportError(kCmd, st);
  if (!p.Has("--no-store")) {
    st = StoreRoofline(trace_path, e.report);
    if (!st.ok()) return ReportError(kCmd, st);
    if (text) std::printf("stored in %s (table roofline)\n", trace_path.c_str());
  }
  return 0;
}

}  // namespace

int RunRoofline(int argc, char** argv) {
  ArgParser p(
      kCmd, "[--top N | --kernel REGEX] [--step N] [--from TRACE] [options] -- COMMAND...",
      "Roofline analysis of a training step's top kernels from hardware counters.\n\n"
      "1. Find the kernels: run COMMAND once under stepscope's tracer (as `stepscope profile "
      "--trace cuda,nvtx`: kernels, launches, NVTX ranges) into -o TRACE, or read an existing "
      "trace (--from). Rank the kernels of step "
      "N (the NVTX range 'step N'; default: the median step) by GPU time; a kernel is a "
      "function with one grid and block.\n"
      "2. Profile them: run COMMAND again with the CUPTI range profiler injected; only the "
      "first --instances launches of each selected kernel are replayed for counters "
      "(FLOPs by precision including tensor cores); the rest of the program runs at full "
      "speed and its results are unchanged. Then once more for duration and DRAM/L2/L1 "
      "bytes in a single pass, without replay, so that the replay's memory restores do not "
      "count as the kernel's traffic (--one-run: take them from the replayed launches).\n"
      "3. Place each kernel under this GPU's ceilings (`stepscope bench`): arithmetic "
      "intensity (FLOP per DRAM byte), achieved FLOP/s, the bounding ceiling and the "
      "percentage of it reached, memory- or compute-bound. Prints a table, writes an SVG "
      "roofline chart and stores the rows in the trace's `roofline` table.\n\n"
      "Without COMMAND, --from TRACE shows the results stored in TRACE again.");
  DeclareRooflineFlags(&p);
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputFormat fmt;
  if (!ParseOutputFormat(p.Get("--format"), &fmt)) {
    return ReportError(kCmd, InvalidInput("--format must be text, csv or json"));
  }
  const bool text = fmt == OutputFormat::kText;
  SelectionOptions sopt;
  ProfileOptions popt;
  if (Status st = ReadRooflineOptions(p, &sopt, &popt); !st.ok()) return ReportError(kCmd, st);
  const std::vector<std::string>& command = p.command();
  if (command.empty()) {
    if (!p.Has("--from")) {
      return ReportError(kCmd,
                         InvalidInput("no command: give the program after '--', or --from TRACE "
                                      "to show stored results; see 'stepscope roofline --help'"));
    }
    if (!p.Has("--dry-run")) return ShowStored(p, fmt);
  }
  // Files named explicitly are not replaced without -f; checked before anything runs.
  if (Status st = CheckNamedOutputs(p); !st.ok()) return ReportError(kCmd, st);
  auto trace_path = TraceToSelectFrom(p, command, text);
  if (!trace_path.ok()) return ReportError(kCmd, trace_path.status());
  // 2. Select.
  auto sel = SelectFromTrace(*trace_path, sopt);
  if (!sel.ok()) return ReportError(kCmd, sel.status());
  if (const std::string n = NamesNotSearchedNote(*sel); !n.empty()) {
    std::fprintf(stderr, "stepscope roofline: note: %s\n", n.c_str());
  }
  PrintSelection(*sel, fmt, p.Has("--dry-run"));
  if (p.Has("--dry-run")) return 0;
  return ProfileAndReport(p, command, *sel, *trace_path, popt, fmt);
}

}  // namespace stepscope
