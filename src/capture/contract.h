// The launch contract: what `stepscope profile` (the launcher, cli/cmd_profile.cc)
// tells the traced program and the collector, named once. Every STEPSCOPE_*
// variable of that contract is one line of STEPSCOPE_CONTRACT_VARS, with who
// reads it; the trace categories of --trace are kTraceCategories. The writer
// (cmd_profile.cc) and the C++ readers (capture/config.cc, the collector's host
// sampler) use these constants; the Python readers (python/stepscope/_*.py)
// spell the names themselves, and tests/capture/contract_test.py checks that
// every STEPSCOPE_ name they and the docs use is one of these.
#pragma once

#include <string_view>

namespace stepscope {

// X(constant, name, reader, meaning)
#define STEPSCOPE_CONTRACT_VARS(X)                                                             \
  X(kEnvOutput, "STEPSCOPE_OUTPUT", "tracer", "the output file pattern (-o)")                  \
  X(kEnvTrace, "STEPSCOPE_TRACE", "tracer", "the categories (--trace, kTraceCategories)")      \
  X(kEnvSampleHz, "STEPSCOPE_SAMPLE_HZ", "tracer, collector", "host samples per second")       \
  X(kEnvNativeHz, "STEPSCOPE_NATIVE_HZ", "collector", "native stack samples per CPU second")   \
  X(kEnvPythonStacks, "STEPSCOPE_PYTHON_STACKS", "tracer", "on | off | launches=N")            \
  X(kEnvDelayNs, "STEPSCOPE_DELAY_NS", "tracer", "start recording this late")                  \
  X(kEnvDurationNs, "STEPSCOPE_DURATION_NS", "tracer", "stop recording this much later")       \
  X(kEnvCaptureRange, "STEPSCOPE_CAPTURE_RANGE", "tracer", "cudaProfilerApi | nvtx:NAME")      \
  X(kEnvOverwriteBeforeNs, "STEPSCOPE_OVERWRITE_BEFORE_NS", "tracer",                          \
    "replace files older than this (-f)")                                                      \
  X(kEnvCollector, "STEPSCOPE_COLLECTOR", "tracer", "the collector's socket")                  \
  X(kEnvCollectorToken, "STEPSCOPE_COLLECTOR_TOKEN", "tracer", "the run's session token")      \
  X(kEnvLoaderRanges, "STEPSCOPE_LOADER_RANGES", "hook", "1: DataLoader.__next__ ranges")      \
  X(kEnvIterationRanges, "STEPSCOPE_ITERATION_RANGES", "hook", "1: iteration N ranges")        \
  X(kEnvWindowSteps, "STEPSCOPE_WINDOW_STEPS", "hook", "W:N, the --steps window")              \
  X(kEnvPytorchMemory, "STEPSCOPE_PYTORCH_MEMORY", "hook", "1: the caching-allocator history") \
  X(kEnvOutputDir, "STEPSCOPE_OUTPUT_DIR", "hook", "where the allocator history is written")

#define STEPSCOPE_CONTRACT_CONSTANT(constant, name, reader, meaning) \
  inline constexpr const char* constant = name;
STEPSCOPE_CONTRACT_VARS(STEPSCOPE_CONTRACT_CONSTANT)
#undef STEPSCOPE_CONTRACT_CONSTANT

// The categories of --trace / STEPSCOPE_TRACE, in the order --help lists them.
inline constexpr std::string_view kTraceCategories[] = {
    "cuda", "nvtx",          "memory",        "host",         "host-mem",
    "um",   "um-migrations", "um-gpu-faults", "um-cpu-faults"};

inline bool IsTraceCategory(std::string_view c) {
  for (std::string_view k : kTraceCategories) {
    if (k == c) return true;
  }
  return false;
}

}  // namespace stepscope
