// A run of the program under stepscope's tracer, set up in one place for
// `profile` and for roofline's survey pass (RunTraced): the tracer
// (libstepscope_inject.so) found and test-loaded, this run's collector
// listening in this process, and the environment that hands the tracer its
// CaptureConfig and the collector. The same launcher runs the program
// (launcher.h: signals as if stepscope were not there).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capture/config.h"
#include "common/status.h"

namespace stepscope {

// libstepscope_inject.so: $STEPSCOPE_INJECT_LIB, else installed beside the
// executable (FindLibraryBesideExecutable); "" when not found.
std::string TracerLibraryPath();

#ifdef STEPSCOPE_HAVE_COLLECTOR
class CollectorServer;
struct CollectedTrace;

class TracedRun {
 public:
  // The tracer library found and loadable (only a load check: nothing is
  // initialized), and this run's collector listening: it takes only tracers
  // that run as this user and send the run's fresh token, loads CUPTI only
  // through that library and names traces by config.output_pattern (created
  // with `file_mode`, 0: 0600), whatever a tracer asks. kUnavailable when the
  // tracer is missing or does not load, else the collector's error.
  static StatusOr<std::unique_ptr<TracedRun>> Prepare(CaptureConfig config, int file_mode);
  ~TracedRun();

  const std::string& library() const { return lib_; }
  CollectorServer& collector() { return *collector_; }
  // What the traced program is told: CUDA_INJECTION64_PATH and
  // NVTX_INJECTION64_PATH (the library), then CaptureConfig::ToEnv() of the
  // config with this run's collector socket and token.
  std::vector<std::pair<std::string, std::string>> Environment() const;
  // Every trace finalized once its process is gone; traced processes that
  // outlive the command get `grace_ms`, then are finalized as they are.
  std::vector<CollectedTrace> Finish(int grace_ms);

 private:
  TracedRun() = default;
  std::string lib_;
  CaptureConfig config_;
  std::unique_ptr<CollectorServer> collector_;
};
#endif

struct TracedRunOptions {
  // Trace names (capture/output_path.h), absolute: the program may chdir.
  std::string output_pattern;
  std::string categories = "cuda,nvtx";  // as `profile --trace`
};

struct TracedRunResult {
  int exit_code = 0;                // as a shell reports it (128 + signal when killed)
  std::vector<std::string> traces;  // finalized traces that recorded something, in start order
};

// Runs `command` under the tracer (a TracedRun), the whole run recorded (the
// tracer's defaults otherwise: a --delay, --duration or --capture-range
// setting inherited from the environment is cleared), and returns once the
// program has ended and the collector has finalized every trace. kUnavailable
// before the program starts when the tracer is missing or cannot load, or
// the collector cannot start; kInvalidInput when the command cannot be
// started.
StatusOr<TracedRunResult> RunTraced(const std::vector<std::string>& command,
                                    const TracedRunOptions& options);

}  // namespace stepscope
