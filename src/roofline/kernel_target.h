// One kernel to profile: a kernel function at one launch configuration, as
// `stepscope roofline` selects it from a trace (selection.h) and hands it to
// the injected profiler (profile_io.h). Needs nothing but the standard
// library: the injected profiler (roofline/inject/) includes it, and may not
// reach store/ or analysis/ (tools/check_includes.py).
#pragma once

#include <cstdint>
#include <string>

namespace stepscope {

struct KernelTarget {
  int rank = 0;         // 1 = most GPU time in the step
  std::string name;     // demangled
  std::string mangled;  // "" when the trace has none
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int64_t step_gpu_ns = 0;  // summed GPU time of its launches in the step
  int64_t step_launches = 0;
};

// "(x,y,z)" of a grid or block.
inline std::string Dim3Text(const int32_t d[3]) {
  return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
}

}  // namespace stepscope
