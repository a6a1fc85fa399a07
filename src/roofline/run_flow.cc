#include "roofline/run_flow.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/bounded_regex.h"
#include "common/env_contract.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "roofline/ceilings.h"
#include "store/summary_rows.h"
#include "store/trace_reader.h"

namespace stepscope {

namespace {

// The program may change directory: hand it absolute paths.
std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[4096];
  if (!::getcwd(buf, sizeof(buf))) return path;
  return std::string(buf) + "/" + path;
}

// A literal file name as an output pattern: '%' starts a token there.
std::string EscapePattern(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

// Removes the files it holds when it goes out of scope.
struct RemoveOnExit {
  std::vector<std::string> paths;
  ~RemoveOnExit() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
};

int64_t KernelCount(const std::string& trace) {
  auto r = TraceReader::Open(trace);
  if (!r.ok()) return -1;
  auto totals = LoadKernelTotals((*r)->db());
  return totals.ok() ? totals->count : -1;
}

std::string TracePid(const std::string& trace) {
  auto r = TraceReader::Open(trace);
  return r.ok() ? (*r)->Meta("pid", "?") : "?";
}

// Ceilings for the GPU from `path`; `fallback` (the ones stored in the
// trace) when the file has none for it.
StatusOr<Ceilings> ResolveCeilings(const std::string& path, const std::string& gpu,
                                   const std::string& uuid, const Ceilings* fallback,
                                   std::string* how) {
  ASSIGN_OR_RETURN(CeilingsStore store, LoadCeilingsStore(path));
  std::string by;
  auto c = FindCeilings(store, gpu, uuid, &by);
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

}  // namespace

Status SurveyTrace(const std::string& trace_path, const TracedRunner& run, std::string* note) {
  const std::string final_path = Absolute(trace_path);
  const size_t slash = final_path.rfind('/');
  const std::string dir = slash == 0 ? "/" : final_path.substr(0, slash);
  if (::access(dir.c_str(), W_OK) != 0) {
    return InvalidInput(trace_path + ": cannot write in " + dir + " (" + std::strerror(errno) +
                        "); choose another -o");
  }
  // The collector claims this name (or name-2, -3, ... for more processes)
  // in the same directory, so that the final rename is atomic.
  const std::string temp = dir + (slash == 0 ? "" : "/") + "." + final_path.substr(slash + 1) +
                           ".survey-" + std::to_string(::getpid()) + ".sqlite";
  ASSIGN_OR_RETURN(TracedExit exit, run(EscapePattern(temp), kSurveyCategories));
  RemoveOnExit temporaries{exit.traces};
  if (exit.exit_code != 0) {
    return Unavailable("the command exited with code " + std::to_string(exit.exit_code) +
                       " during the survey run; fix it and retry");
  }
  if (exit.traces.empty()) {
    return Unavailable(
        "the survey run wrote no trace: the program used neither CUDA nor NVTX, or the tracer "
        "turned itself off (see its warning above)");
  }
  size_t best = 0;
  int64_t best_kernels = -1;
  for (size_t i = 0; i < exit.traces.size(); ++i) {
    int64_t n = KernelCount(exit.traces[i]);
    if (n > best_kernels) {
      best = i;
      best_kernels = n;
    }
  }
  const std::string chosen = exit.traces[best];
  if (exit.traces.size() > 1) {
    *note = std::to_string(exit.traces.size()) + " processes recorded; kernels are picked from " +
            "the one with the most (pid " + TracePid(chosen) + ", " + FormatCount(best_kernels) +
            " kernels), the other traces are removed";
  }
  if (::rename(chosen.c_str(), final_path.c_str()) != 0) {
    return IoError(trace_path + ": cannot write: " + std::strerror(errno));
  }
  temporaries.paths.erase(temporaries.paths.begin() + static_cast<std::ptrdiff_t>(best));
  return OkStatus();
}

std::string NamesNotSearchedNote(const Selection& sel) {
  if (sel.names_not_searched == 0) return "";
  return FormatCount(sel.names_not_searched) + " kernel name(s) longer than " +
         FormatCount(static_cast<int64_t>(kMaxRegexSubject)) +
         " characters are never searched by --kernel";
}

StatusOr<Selection> SelectFromTrace(const std::string& trace_path, const SelectionOptions& opt) {
  ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> trace, TraceReader::Open(trace_path));
  ASSIGN_OR_RETURN(Selection sel, SelectKernels(*trace, opt));
  if (sel.targets.empty()) {
    const std::string not_searched = NamesNotSearchedNote(sel);
    return InvalidInput(
        trace_path + ": no kernels " +
        (sel.has_step ? "in step " + std::to_string(sel.step.number) : "") +
        (opt.kernel_regex.empty() ? "" : " match --kernel '" + opt.kernel_regex + "'") +
        (not_searched.empty() ? "" : " (" + not_searched + ")"));
  }
  return sel;
}

std::string InjectLibraryPath() {
  const char* env = std::getenv(kEnvRooflineInject);
  if (env && *env) return env;
  std::string found = FindLibraryBesideExecutable("libstepscope_roofline_inject.so");
  return found.empty() ? ExecutableDir() + "/../lib/libstepscope_roofline_inject.so" : found;
}

StatusOr<ProfileOutcome> ProfileKernels(const Selection& sel, const std::string& trace_path,
                                        const ProfileOptions& opt, const ProgramRunner& run,
                                        const std::function<void(const std::string&)>& before_run) {
  ProfileTargets targets;
  targets.instances = opt.instances;
  targets.skip = opt.skip;
  targets.kernels = sel.targets;
  const std::string tmp = trace_path + ".roofline-" + std::to_string(::getpid());
  AtomicOutput targets_file(tmp + ".targets.json");  // never committed: removed at the end
  RETURN_IF_ERROR(WriteFileAtomic(targets_file.temp_path(), TargetsJson(targets)));
  const std::string results_path =
      opt.results_path.empty() ? tmp + ".results.jsonl" : opt.results_path;
  // The profiled program appends to it: created here, exclusively (a name
  // planted by someone else, or a symlink, is an error, not followed).
  std::remove(results_path.c_str());
  if (int fd =
          ::open(results_path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      fd >= 0) {
    ::close(fd);
  } else {
    return IoError(results_path + ": cannot create: " + std::strerror(errno));
  }
  RemoveOnExit temporary_results;
  if (opt.results_path.empty()) temporary_results.paths.push_back(results_path);

  // Run 1: every metric, by kernel replay; run 2: time and memory traffic in
  // one pass (range_profiler.cc says why). Both append to the results file.
  const std::vector<std::string> groups =
      opt.one_run ? std::vector<std::string>{"all"} : std::vector<std::string>{"all", "memory"};
  const std::string lib = InjectLibraryPath();
  int rc = 0;
  std::string failed_run;  // the run after which the loop stopped on a nonzero exit
  for (const std::string& group : groups) {
    if (before_run) before_run(group);
    const EnvVars env = {{"CUDA_INJECTION64_PATH", lib},
                         {kEnvRooflineTargets, Absolute(targets_file.temp_path())},
                         {kEnvRooflineResults, Absolute(results_path)},
                         {kEnvRooflineGroup, group},
                         {kEnvRooflineCache, opt.cache_control}};
    ASSIGN_OR_RETURN(rc, run(env));
    if (rc != 0) {
      failed_run = group == "all" ? "counter run (the time-and-bytes run was skipped)"
                                  : "time-and-bytes run";
      break;
    }
  }

  ProfileOutcome out;
  auto text = ReadFile(results_path);
  out.results = ParseResults(text.ok() ? *text : "");
  const ProfileResults& r = out.results;
  for (const ProfileMessage& m : r.messages) {
    if (!m.error) out.notes.push_back(m.message);
  }
  for (const ProfileMessage& m : r.messages) {
    if (m.error) {
      out.error = Unavailable(m.message);
      return out;
    }
  }
  if (rc != 0) {
    out.warnings.push_back("the command exited with code " + std::to_string(rc) + " in the " +
                           failed_run);
  }
  if (r.bad_lines > 0) {
    out.warnings.push_back(std::to_string(r.bad_lines) + " unreadable result line(s) skipped");
  }
  if (!r.has_device || r.instances.empty()) {
    out.error = Unavailable(
        "the profiling run collected no counters: none of the selected launches happened (is "
        "the run the same as the survey?), or the profiler could not start; see the notes above");
  }
  return out;
}

Evaluation Evaluate(const Selection& sel, const ProfileResults& results,
                    const std::string& ceilings_path) {
  Evaluation e;
  e.report = BuildReport(sel, results, &e.warnings);
  auto c = ResolveCeilings(ceilings_path, results.device.name, results.device.uuid, nullptr,
                           &e.ceilings_how);
  if (c.ok()) {
    e.report.ceilings = *c;
  } else {
    e.warnings.push_back(c.status().message() + "; showing counters without ceilings");
    e.ceilings_how = "nowhere (none measured)";
  }
  EvaluateReport(&e.report);
  return e;
}

StatusOr<Evaluation> EvaluateStored(const std::string& trace_path,
                                    const std::string& ceilings_path) {
  ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> trace, TraceReader::Open(trace_path));
  Evaluation e;
  ASSIGN_OR_RETURN(e.report, LoadStoredRoofline(*trace));
  const Ceilings stored = e.report.ceilings;
  ASSIGN_OR_RETURN(e.report.ceilings, ResolveCeilings(ceilings_path, e.report.gpu_name,
                                                      e.report.uuid, &stored, &e.ceilings_how));
  EvaluateReport(&e.report);
  return e;
}

std::string DefaultSvgPath(const std::string& trace_path) {
  std::string base =
      EndsWith(trace_path, ".sqlite") ? trace_path.substr(0, trace_path.size() - 7) : trace_path;
  return base + ".roofline.svg";
}

}  // namespace stepscope
