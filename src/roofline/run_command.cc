#include "roofline/run_command.h"

#include <cstdlib>

#include "common/file_util.h"

namespace stepscope {

std::string InjectLibraryPath() {
  const char* env = std::getenv("STEPSCOPE_ROOFLINE_INJECT");
  if (env && *env) return env;
  std::string found = FindLibraryBesideExecutable("libstepscope_roofline_inject.so");
  return found.empty() ? ExecutableDir() + "/../lib/libstepscope_roofline_inject.so" : found;
}

EnvVars InjectEnv(const std::string& mode, const EnvVars& extra) {
  std::string lib = InjectLibraryPath();
  EnvVars env = {{"CUDA_INJECTION64_PATH", lib}, {"STEPSCOPE_ROOFLINE_MODE", mode}};
  if (mode == "survey") env.push_back({"NVTX_INJECTION64_PATH", lib});
  for (const auto& e : extra) env.push_back(e);
  return env;
}

}  // namespace stepscope
