#include "cli/traced_run.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "capture/contract.h"
#include "cli/launcher.h"
#ifdef STEPSCOPE_HAVE_COLLECTOR
#include "collector/collector_server.h"
#endif
#include "common/file_util.h"

namespace stepscope {

std::string TracerLibraryPath() {
  if (const char* env = std::getenv("STEPSCOPE_INJECT_LIB"); env && *env) return env;
  return FindLibraryBesideExecutable("libstepscope_inject.so");
}

#ifdef STEPSCOPE_HAVE_COLLECTOR
StatusOr<std::unique_ptr<CollectorServer>> ListenForRun(const std::string& lib,
                                                        const std::string& pattern, int file_mode,
                                                        std::string* token) {
  ASSIGN_OR_RETURN(*token, NewSessionToken());
  CollectorPolicy policy;
  policy.token = *token;
  policy.inject_lib = lib;
  policy.pattern = pattern;
  policy.file_mode = file_mode;
  return CollectorServer::Listen(std::move(policy));
}
#endif

StatusOr<TracedRunResult> RunTraced(const std::vector<std::string>& command,
                                    const TracedRunOptions& options) {
#ifdef STEPSCOPE_HAVE_COLLECTOR
  const std::string lib = TracerLibraryPath();
  if (lib.empty()) {
    return Unavailable(
        "libstepscope_inject.so (the tracer) not found beside the stepscope binary; install "
        "it there or set STEPSCOPE_INJECT_LIB");
  }
  // Only a load check (missing CUPTI shows up here); nothing is initialized.
  if (void* h = ::dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(h);
  } else {
    const char* why = ::dlerror();
    return Unavailable("cannot load the tracer " + lib + " (" + (why ? why : "unknown error") +
                       ")");
  }
  std::string token;
  ASSIGN_OR_RETURN(std::unique_ptr<CollectorServer> collector,
                   ListenForRun(lib, options.output_pattern, 0, &token));
  collector->StartThread();
  const std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_INJECTION64_PATH", lib},
      {"NVTX_INJECTION64_PATH", lib},
      {kEnvOutput, options.output_pattern},
      {kEnvTrace, options.categories},
      {kEnvCollector, collector->name()},
      {kEnvCollectorToken, token},
      {kEnvDelayNs, ""},
      {kEnvDurationNs, ""},
      {kEnvCaptureRange, ""},
      {kEnvOverwriteBeforeNs, ""}};
  auto run = RunProgram(command, env);
  // As `profile`: traced processes that outlive the command get 3 s.
  std::vector<CollectedTrace> collected = collector->Finish(3000);
  if (!run.ok()) return run.status();
  TracedRunResult result;
  result.exit_code = run->ExitCode();
  for (const CollectedTrace& t : collected) {
    if (t.kept) result.traces.push_back(t.path);
  }
  return result;
#else
  (void)command;
  (void)options;
  return Unavailable("this stepscope was built without CUPTI: it cannot trace a program");
#endif
}

}  // namespace stepscope
