// Runs the profiled program with the injected profiler: fork + exec with
// extra environment variables, stdin/stdout/stderr inherited.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stepscope {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// The program's exit code (128 + signal number when killed by a signal).
// kInvalidInput when the command cannot be started (not found, not executable).
StatusOr<int> RunWithEnv(const std::vector<std::string>& command, const EnvVars& env);

// $STEPSCOPE_ROOFLINE_INJECT, else <dir of stepscope>/../lib/libstepscope_roofline_inject.so.
std::string InjectLibraryPath();

// The environment that loads the injected profiler in `mode` ("survey" or
// "profile"): CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH (survey, so NVTX
// ranges reach it) and STEPSCOPE_ROOFLINE_MODE, plus `extra`.
EnvVars InjectEnv(const std::string& mode, const EnvVars& extra);

}  // namespace stepscope
