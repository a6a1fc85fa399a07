// stepscope roofline: counters of a step's top kernels against this GPU's
// measured ceilings. The work is in src/roofline/; this file runs the steps:
// survey (or --from) -> select -> profile -> evaluate -> print, chart, store.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/launcher.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "roofline/ceilings.h"
#include "roofline/profile_io.h"
#include "roofline/roofline_report.h"
#include "roofline/run_command.h"
#include "roofline/selection.h"
#include "store/trace_reader.h"

namespace stepscope {

namespace {

constexpr const char* kCmd = "roofline";

// The program may change directory: hand it absolute paths.
std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[4096];
  if (!::getcwd(buf, sizeof(buf))) return path;
  return std::string(buf) + "/" + path;
}

std::string DefaultSvgPath(const std::string& trace) {
  std::string base = EndsWith(trace, ".sqlite") ? trace.substr(0, trace.size() - 7) : trace;
  return base + ".roofline.svg";
}

// Ceilings for the GPU: from --ceilings FILE or the default store; `fallback`
// (the ones stored in the trace) when neither has this GPU.
StatusOr<Ceilings> ResolveCeilings(const ArgParser& p, const std::string& gpu,
                                   const std::string& uuid, const Ceilings* fallback,
                                   std::string* how) {
  std::string path = p.Has("--ceilings") ? p.Get("--ceilings") : DefaultCeilingsPath();
  auto store = LoadCeilingsStore(path);
  if (!store.ok()) return store.status();
  std::string by;
  auto c = FindCeilings(*store, gpu, uuid, &by);
  if (c.ok()) {
    *how = "the ceilings file, matched by " + by + ", measured " + c->measured_at;
    return c;
  }
  if (fallback && !fallback->values.empty()) {
    *how = "the ceilings stored in the trace";
    return *fallback;
  }
  return c.status();
}

void PrintReport(const RooflineReport& r, OutputFormat fmt, const std::string& ceilings_how) {
  if (fmt == OutputFormat::kText) {
    std::printf("\nroofline: %s%s, %zu kernel(s); ceilings: %s\n\n", r.gpu_name.c_str(),
                r.step >= 0 ? (", step " + std::to_string(r.step)).c_str() : "", r.entries.size(),
                ceilings_how.c_str());
  }
  std::fputs(RooflineTable(r, fmt == OutputFormat::kText).Render(fmt).c_str(), stdout);
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

// `roofline --from TRACE` without a command: show the stored results again,
// evaluated with the current ceilings.
int ShowStored(const ArgParser& p, OutputFormat fmt) {
  std::string trace_path = p.Get("--from");
  auto trace = TraceReader::Open(trace_path);
  if (!trace.ok()) return ReportError(kCmd, trace.status());
  auto report = LoadStoredRoofline(**trace);
  if (!report.ok()) return ReportError(kCmd, report.status());
  Ceilings stored = report->ceilings;
  std::string how;
  auto c = ResolveCeilings(p, report->gpu_name, report->uuid, &stored, &how);
  if (!c.ok()) return ReportError(kCmd, c.status());
  report->ceilings = *c;
  EvaluateReport(&*report);
  PrintReport(*report, fmt, how);
  Status st = WriteSvg(p, *report, trace_path, fmt == OutputFormat::kText);
  if (!st.ok()) return ReportError(kCmd, st);
  return 0;
}

}  // namespace

int RunRoofline(int argc, char** argv) {
  ArgParser p(
      kCmd, "[--top N | --kernel REGEX] [--step N] [--from TRACE] [options] -- COMMAND...",
      "Roofline analysis of a training step's top kernels from hardware counters.\n\n"
      "1. Find the kernels: run COMMAND once with a light recorder (kernels, launches, NVTX "
      "ranges) into -o TRACE, or read an existing trace (--from). Rank the kernels of step "
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
  p.AcceptCommand();
  p.Flag("--top", "N", "profile the N kernels with the most GPU time in the step (0: all)", "5");
  p.Flag("--kernel", "REGEX",
         "only kernels whose demangled name matches (ECMAScript regex); "
         "all matches unless --top is given");
  p.Flag("--step", "N",
         "the step to rank kernels in (NVTX range 'step N'); default: the median step");
  p.Flag("--from", "TRACE",
         "pick kernels from this trace instead of a survey run; results are stored in it");
  p.Flag("--output", "TRACE", "trace the survey run writes", "roofline.sqlite", "-o");
  p.Flag("--instances", "K", "profile at most K launches of each kernel", "3");
  p.Flag("--skip", "S", "let the first S matching launches of each kernel run unprofiled", "0");
  p.Flag("--ceilings", "FILE", "ceilings file (default ~/.cache/stepscope/ceilings.json)");
  p.Flag("--svg", "FILE", "where to write the chart (default: beside the trace, .roofline.svg)");
  p.Switch("--no-svg", "do not write the chart");
  p.Switch("--no-store", "do not store the results in the trace");
  p.Switch("--dry-run", "print the selected kernels and stop (no profiling run)");
  p.Flag("--cache-control", "MODE",
         "all: flush L2 before each launch of the time-and-bytes run, as ncu does by default; "
         "none: measure in the cache state the program left",
         "all");
  p.Switch("--one-run",
           "one profiling run: time and bytes from the replayed launches (faster; DRAM bytes "
           "of kernels whose inputs sit in L2 can read high)");
  p.Flag("--results", "FILE", "keep the profiler's raw result lines (JSON lines) in FILE");
  p.Flag("--format", "FMT", "text (default), csv or json", "text");
  p.Epilog(
      "examples:\n"
      "  stepscope roofline -- python train.py --steps 10\n"
      "  stepscope roofline --top 10 --step 7 -o run.sqlite -- python train.py\n"
      "  stepscope roofline --from run.sqlite --kernel 'gemm|nvjet' --instances 1 -- python "
      "train.py\n"
      "  stepscope roofline --from run.sqlite --dry-run         which kernels would be profiled\n"
      "  stepscope roofline --from run.sqlite                   show stored results again\n"
      "\nNeeds permission to read GPU counters (root, or the nvidia module option "
      "NVreg_RestrictProfilingToAdminUsers=0) and measured ceilings (run `stepscope bench` "
      "once). See docs/roofline.md.\n");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputFormat fmt;
  if (!ParseOutputFormat(p.Get("--format"), &fmt)) {
    return ReportError(kCmd, InvalidInput("--format must be text, csv or json"));
  }
  const bool text = fmt == OutputFormat::kText;
  SelectionOptions sopt;
  int64_t v = 0;
  if (p.Has("--kernel")) {
    sopt.kernel_regex = p.Get("--kernel");
    sopt.top = 0;
  }
  if (p.Has("--top") || !p.Has("--kernel")) {
    if (!ParseInt64(p.Get("--top"), &v) || v < 0 || v > 1000) {
      return ReportError(kCmd, InvalidInput("--top '" + p.Get("--top") + "': want 0..1000"));
    }
    sopt.top = static_cast<int>(v);
  }
  if (p.Has("--step")) {
    if (!ParseInt64(p.Get("--step"), &v) || v < 0) {
      return ReportError(kCmd,
                         InvalidInput("--step '" + p.Get("--step") + "': want a step number >= 0"));
    }
    sopt.step = v;
  }
  if (p.Get("--cache-control") != "all" && p.Get("--cache-control") != "none") {
    return ReportError(
        kCmd, InvalidInput("--cache-control '" + p.Get("--cache-control") + "': want all or none"));
  }
  ProfileTargets targets;
  if (!ParseInt64(p.Get("--instances"), &v) || v < 1 || v > 1000) {
    return ReportError(kCmd,
                       InvalidInput("--instances '" + p.Get("--instances") + "': want 1..1000"));
  }
  targets.instances = static_cast<int>(v);
  if (!ParseInt64(p.Get("--skip"), &v) || v < 0) {
    return ReportError(kCmd, InvalidInput("--skip '" + p.Get("--skip") + "': want a count >= 0"));
  }
  targets.skip = static_cast<int>(v);

  const std::vector<std::string>& command = p.command();
  if (command.empty()) {
    if (!p.Has("--from")) {
      return ReportError(kCmd,
                         InvalidInput("no command: give the program after '--', or --from TRACE "
                                      "to show stored results; see 'stepscope roofline --help'"));
    }
    if (!p.Has("--dry-run")) return ShowStored(p, fmt);
  }

  // 1. The trace to pick kernels from.
  std::string trace_path;
  if (p.Has("--from")) {
    trace_path = p.Get("--from");
  } else {
    trace_path = p.Get("--output");
    AtomicOutput out(trace_path);
    if (text)
      std::printf("roofline: survey run (kernels, launches, NVTX) -> %s\n", trace_path.c_str());
    std::fflush(stdout);
    auto run = RunProgram(
        command, InjectEnv("survey", {{"STEPSCOPE_ROOFLINE_TRACE", Absolute(out.temp_path())}}));
    if (!run.ok()) return ReportError(kCmd, run.status());
    if (run->ExitCode() != 0) {
      return ReportError(
          kCmd, Unavailable("the command exited with code " + std::to_string(run->ExitCode()) +
                            " during the survey run; fix it and retry"));
    }
    struct stat written;  // the temporary file exists from the start, empty
    if (::stat(out.temp_path().c_str(), &written) != 0 || written.st_size == 0) {
      return ReportError(kCmd, Unavailable("the survey run wrote no trace: the program never "
                                           "initialized CUDA, or the injected library " +
                                           InjectLibraryPath() + " could not load"));
    }
    Status st = out.Commit();
    if (!st.ok()) return ReportError(kCmd, st);
  }

  // 2. Select.
  Selection sel;
  {
    auto trace = TraceReader::Open(trace_path);
    if (!trace.ok()) return ReportError(kCmd, trace.status());
    auto s = SelectKernels(**trace, sopt);
    if (!s.ok()) return ReportError(kCmd, s.status());
    sel = std::move(*s);
  }
  if (sel.targets.empty()) {
    return ReportError(
        kCmd,
        NotFound(trace_path + ": no kernels " +
                 (sel.has_step ? "in step " + std::to_string(sel.step.number) : "") +
                 (sopt.kernel_regex.empty() ? "" : " match --kernel '" + sopt.kernel_regex + "'")));
  }
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
  if (p.Has("--dry-run") || text) std::fputs(SelectionTable(sel).Render(fmt).c_str(), stdout);
  if (p.Has("--dry-run")) return 0;

  // 3. Profile.
  targets.kernels = sel.targets;
  std::string tmp = trace_path + ".roofline-" + std::to_string(::getpid());
  AtomicOutput targets_file(tmp + ".targets.json");
  Status st = WriteFileAtomic(targets_file.temp_path(), TargetsJson(targets));
  if (!st.ok()) return ReportError(kCmd, st);
  std::string results_path = p.Has("--results") ? p.Get("--results") : tmp + ".results.jsonl";
  // The profiled program appends to it: created here, exclusively (a name
  // planted by someone else, or a symlink, is an error, not followed).
  std::remove(results_path.c_str());
  if (int fd =
          ::open(results_path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      fd >= 0) {
    ::close(fd);
  } else {
    return ReportError(kCmd, IoError(results_path + ": cannot create: " + std::strerror(errno)));
  }
  // Run 1: every metric, by kernel replay; run 2: time and memory traffic in
  // one pass (range_profiler.cc says why). Both append to the results file.
  const std::vector<std::string> groups = p.Has("--one-run")
                                              ? std::vector<std::string>{"all"}
                                              : std::vector<std::string>{"all", "memory"};
  int rc = 0;
  std::string failed_run;  // the run after which the loop stopped on a nonzero exit
  for (const std::string& group : groups) {
    if (text) {
      std::printf(group == "all"
                      ? "\nroofline: profiling run (%d instance(s) per kernel, counters by "
                        "kernel replay)\n"
                      : "roofline: memory run (%d instance(s) per kernel, time and bytes in one "
                        "pass)\n",
                  targets.instances);
    }
    std::fflush(stdout);
    auto run = RunProgram(
        command,
        InjectEnv("profile", {{"STEPSCOPE_ROOFLINE_TARGETS", Absolute(targets_file.temp_path())},
                              {"STEPSCOPE_ROOFLINE_RESULTS", Absolute(results_path)},
                              {"STEPSCOPE_ROOFLINE_GROUP", group},
                              {"STEPSCOPE_ROOFLINE_CACHE", p.Get("--cache-control")}}));
    if (!run.ok()) return ReportError(kCmd, run.status());
    rc = run->ExitCode();
    if (rc != 0) {
      failed_run = group == "all" ? "counter run (the time-and-bytes run was skipped)"
                                  : "time-and-bytes run";
      break;
    }
  }
  auto text_results = ReadFile(results_path);
  if (!p.Has("--results")) std::remove(results_path.c_str());
  ProfileResults results = ParseResults(text_results.ok() ? *text_results : "");
  for (const ProfileMessage& m : results.messages) {
    if (!m.error) std::fprintf(stderr, "stepscope roofline: note: %s\n", m.message.c_str());
  }
  for (const ProfileMessage& m : results.messages) {
    if (m.error) return ReportError(kCmd, Unavailable(m.message));
  }
  if (rc != 0) {
    std::fprintf(stderr, "stepscope roofline: warning: the command exited with code %d in the %s\n",
                 rc, failed_run.c_str());
  }
  if (results.bad_lines > 0) {
    std::fprintf(stderr, "stepscope roofline: warning: %d unreadable result line(s) skipped\n",
                 results.bad_lines);
  }
  if (!results.has_device || results.instances.empty()) {
    return ReportError(kCmd,
                       Unavailable("the profiling run collected no counters: none of the selected "
                                   "launches happened (is the run the same as the survey?), or "
                                   "the profiler could not start; see the notes above"));
  }
  std::vector<std::string> warnings;
  RooflineReport report = BuildReport(sel, results, &warnings);
  for (const std::string& w : warnings)
    std::fprintf(stderr, "stepscope roofline: warning: %s\n", w.c_str());
  if (text) {
    std::printf(
        "profiled on %s (%s), chip %s, %d counter pass(es) per instance%s\n",
        results.device.name.c_str(), results.device.uuid.c_str(), results.device.chip.c_str(),
        results.device.passes,
        results.device.run_passes.size() > 1
            ? (", time and bytes in " + std::to_string(results.device.run_passes[1])).c_str()
            : "");
  }

  // 4. Evaluate, print, chart, store.
  std::string how;
  auto c = ResolveCeilings(p, results.device.name, results.device.uuid, nullptr, &how);
  if (!c.ok()) {
    std::fprintf(stderr, "stepscope roofline: warning: %s; showing counters without ceilings\n",
                 c.status().message().c_str());
    how = "nowhere (none measured)";
  } else {
    report.ceilings = *c;
  }
  EvaluateReport(&report);
  PrintReport(report, fmt, how);
  st = WriteSvg(p, report, trace_path, text);
  if (!st.ok()) return ReportError(kCmd, st);
  if (!p.Has("--no-store")) {
    st = StoreRoofline(trace_path, report);
    if (!st.ok()) return ReportError(kCmd, st);
    if (text) std::printf("stored in %s (table roofline)\n", trace_path.c_str());
  }
  return 0;
}

}  // namespace stepscope
