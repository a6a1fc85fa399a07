// A run of the program under stepscope's tracer for a command other than
// `profile`: roofline's survey pass. The same tracer (libstepscope_inject.so,
// found as `profile` finds it), the same collector in this process, the same
// launcher (launcher.h: signals as if stepscope were not there); no summary
// is printed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope {

#ifdef STEPSCOPE_HAVE_COLLECTOR
class CollectorServer;
// This run's collector (collector/collector_server.h), listening: it takes
// only tracers that send *token (a fresh one, for STEPSCOPE_COLLECTOR_TOKEN)
// and run as this user, loads CUPTI only through `lib` and names traces by
// `pattern` (created with `file_mode`, 0: 0600), whatever a tracer asks.
StatusOr<std::unique_ptr<CollectorServer>> ListenForRun(const std::string& lib,
                                                        const std::string& pattern, int file_mode,
                                                        std::string* token);
#endif

// libstepscope_inject.so: $STEPSCOPE_INJECT_LIB, else installed beside the
// executable (FindLibraryBesideExecutable); "" when not found.
std::string TracerLibraryPath();

struct TracedRunOptions {
  // Trace names (capture/output_path.h), absolute: the program may chdir.
  std::string output_pattern;
  std::string categories = "cuda,nvtx";  // as `profile --trace`
};

struct TracedRunResult {
  int exit_code = 0;                // as a shell reports it (128 + signal when killed)
  std::vector<std::string> traces;  // finalized traces that recorded something, in start order
};

// Runs `command` under the tracer, the whole run recorded (a --delay,
// --duration or --capture-range setting inherited from the environment is
// cleared), and returns once the program has ended and the collector has
// finalized every trace. kUnavailable before the program starts when the
// tracer is missing or cannot load, or the collector cannot start;
// kInvalidInput when the command cannot be started.
StatusOr<TracedRunResult> RunTraced(const std::vector<std::string>& command,
                                    const TracedRunOptions& options);

}  // namespace stepscope
