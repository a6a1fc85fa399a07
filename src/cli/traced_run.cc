#include "cli/traced_run.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "cli/launcher.h"
#ifdef STEPSCOPE_HAVE_COLLECTOR
#include "collector/collector_server.h"
#endif
#include "common/env_contract.h"
#include "common/file_util.h"

namespace stepscope {

std::string TracerLibraryPath() {
  if (const char* env = std::getenv(kEnvInjectLib); env && *env) return env;
  return FindLibraryBesideExecutable("libstepscope_inject.so");
}

#ifdef STEPSCOPE_HAVE_COLLECTOR
StatusOr<std::unique_ptr<TracedRun>> TracedRun::Prepare(CaptureConfig config, int file_mode) {
  std::unique_ptr<TracedRun> run(new TracedRun());
  run->lib_ = TracerLibraryPath();
  if (run->lib_.empty()) {
    return Unavailable(
        "libstepscope_inject.so (the tracer) not found beside the stepscope binary; install "
        "it there or set " +
        std::string(kEnvInjectLib));
  }
  // Only a load check (missing CUPTI shows up here); nothing is initialized.
  if (void* h = ::dlopen(run->lib_.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(h);
  } else {
    const char* why = ::dlerror();
    return Unavailable("cannot load the tracer " + run->lib_ + " (" +
                       (why ? why : "unknown error") + ")");
  }
  ASSIGN_OR_RETURN(config.collector_token, NewSessionToken());
  CollectorPolicy policy;
  policy.token = config.collector_token;
  policy.inject_lib = run->lib_;
  policy.pattern = config.output_pattern;
  policy.file_mode = file_mode;
  ASSIGN_OR_RETURN(run->collector_, CollectorServer::Listen(std::move(policy)));
  config.collector = run->collector_->name();
  run->config_ = std::move(config);
  return run;
}

TracedRun::~TracedRun() = default;

std::vector<std::pair<std::string, std::string>> TracedRun::Environment() const {
  std::vector<std::pair<std::string, std::string>> env = {{"CUDA_INJECTION64_PATH", lib_},
                                                          {"NVTX_INJECTION64_PATH", lib_}};
  for (auto& kv : config_.ToEnv()) env.push_back(std::move(kv));
  return env;
}

std::vector<CollectedTrace> TracedRun::Finish(int grace_ms) { return collector_->Finish(grace_ms); }
#endif

StatusOr<TracedRunResult> RunTraced(const std::vector<std::string>& command,
                                    const TracedRunOptions& options) {
#ifdef STEPSCOPE_HAVE_COLLECTOR
  CaptureConfig config;
  config.output_pattern = options.output_pattern;
  config.SetTraceCategories(options.categories, nullptr);
  ASSIGN_OR_RETURN(std::unique_ptr<TracedRun> traced, TracedRun::Prepare(std::move(config), 0));
  traced->collector().StartThread();
  auto run = RunProgram(command, traced->Environment());
  // As `profile`: traced processes that outlive the command get 3 s.
  std::vector<CollectedTrace> collected = traced->Finish(3000);
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
