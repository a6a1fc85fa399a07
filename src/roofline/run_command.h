// The environment that loads the roofline profiler into the program; the
// program itself is run by the CLI's launcher (cli/launcher.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace stepscope {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// $STEPSCOPE_ROOFLINE_INJECT, else libstepscope_roofline_inject.so beside stepscope
// (FindLibraryBesideExecutable), else the ../lib path it would have.
std::string InjectLibraryPath();

// The environment that loads the injected profiler in `mode` ("survey" or
// "profile"): CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH (survey, so NVTX
// ranges reach it) and STEPSCOPE_ROOFLINE_MODE, plus `extra`.
EnvVars InjectEnv(const std::string& mode, const EnvVars& extra);

}  // namespace stepscope
