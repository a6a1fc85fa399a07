// The flow of `stepscope roofline`, one function per stage. The command
// (cli/cmd_roofline.cc) parses the flags, calls them in this order and prints
// between them:
//
//   1. SurveyTrace      run the program once under stepscope's tracer (the
//                       `profile` tracer, kernels + launch calls + NVTX) into
//                       the trace to pick kernels from; or --from TRACE
//   2. SelectFromTrace  the step's top kernels (selection.h)
//   3. ProfileKernels   run it again with libstepscope_roofline_inject.so:
//                       counters by kernel replay, then time and bytes in one
//                       pass (inject/range_profiler.cc says why two runs)
//   4. Evaluate         place the counters under this GPU's ceilings
//      (EvaluateStored for results already in a trace); then the CLI prints
//      the table, writes the chart and stores the rows (roofline_report.h)
//
// Running the program belongs to the CLI (its launcher, the collector): the
// stages get it as functions, so this folder depends on neither.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "roofline/profile_io.h"
#include "roofline/roofline_report.h"
#include "roofline/selection.h"

namespace stepscope {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct TracedExit {
  int exit_code = 0;                // as a shell reports it
  std::vector<std::string> traces;  // the traces written (finalized, not empty)
};
// Runs the program under stepscope's tracer recording `categories` (as
// `profile --trace`) into traces named by the absolute `pattern`
// (capture/output_path.h), and waits until every trace is finalized.
using TracedRunner =
    std::function<StatusOr<TracedExit>(const std::string& pattern, const std::string& categories)>;
// Runs the program with `env` set on top of the environment; its exit code.
using ProgramRunner = std::function<StatusOr<int>(const EnvVars& env)>;

// The trace categories the selection reads: kernels and the API calls that
// launched them (cuda), the "step N" ranges (nvtx).
inline constexpr const char* kSurveyCategories = "cuda,nvtx";

// 1. Runs the program once under the tracer and leaves its trace at
// `trace_path` (replacing a file there). Until the run has succeeded the
// tracer writes beside it under a temporary name, so a failed run leaves
// nothing: a nonzero exit or no trace written is kUnavailable. When several
// processes recorded (a launcher and its workers), the trace with the most
// kernels is kept, the others removed, and `*note` says so.
Status SurveyTrace(const std::string& trace_path, const TracedRunner& run, std::string* note);

// 2. The kernels to profile from the trace at `trace_path`; kInvalidInput
// (exit 2) when none is left (the step has no kernels, or none matches the regex).
StatusOr<Selection> SelectFromTrace(const std::string& trace_path, const SelectionOptions& opt);
// "" or "N kernel name(s) longer than 1,024 characters are never searched by
// --kernel": said with the selection, so the filter drops no kernel silently.
std::string NamesNotSearchedNote(const Selection& sel);

// 3.
struct ProfileOptions {
  int instances = 3;                  // profiled launches per kernel, at most
  int skip = 0;                       // matching launches left unprofiled first
  std::string cache_control = "all";  // all: flush L2 before each time-and-bytes launch; none
  bool one_run = false;               // time and bytes from the replayed launches
  std::string results_path;           // keep the profiler's raw lines here; "": a temporary file
};

struct ProfileOutcome {
  ProfileResults results;
  std::vector<std::string> notes;     // the profiler's notes
  std::vector<std::string> warnings;  // the program failed in a run; unreadable result lines
  // Not ok: nothing to report (the profiler failed, or no selected launch
  // was profiled). The CLI prints it after the notes and warnings.
  Status error;
};

// The library loaded for step 3: $STEPSCOPE_ROOFLINE_INJECT, else
// libstepscope_roofline_inject.so beside the executable
// (FindLibraryBesideExecutable), else the ../lib path it would have.
std::string InjectLibraryPath();

// Profiles the selected kernels: one run per counter group ("all", then
// "memory" unless one_run); `before_run(group)` is called before each. Its
// temporary files sit beside `trace_path`. Stops after a run the program
// failed (a warning). An error status only when a run cannot start or the
// files cannot be written.
StatusOr<ProfileOutcome> ProfileKernels(const Selection& sel, const std::string& trace_path,
                                        const ProfileOptions& opt, const ProgramRunner& run,
                                        const std::function<void(const std::string&)>& before_run);

// 4.
struct Evaluation {
  RooflineReport report;
  std::string ceilings_how;           // where the ceilings came from, for the heading
  std::vector<std::string> warnings;  // excluded instances; no ceilings for this GPU
};

// The report of the profiled kernels under the ceilings of the GPU they ran
// on, from `ceilings_path` (see ceilings.h); without ceilings for it, the
// counters alone and a warning.
Evaluation Evaluate(const Selection& sel, const ProfileResults& results,
                    const std::string& ceilings_path);
// The results stored in a trace (`roofline --from TRACE`), evaluated with the
// current ceilings; the ceilings stored with them when `ceilings_path` has
// none for that GPU.
StatusOr<Evaluation> EvaluateStored(const std::string& trace_path,
                                    const std::string& ceilings_path);

// The chart's default path: beside the trace, .roofline.svg.
std::string DefaultSvgPath(const std::string& trace_path);

}  // namespace stepscope
