// Every STEPSCOPE_* environment variable, named once (issue 35).
//
// STEPSCOPE_CONTRACT_VARS is the launch contract: what `stepscope profile` (the
// launcher, cli/cmd_profile.cc) and roofline's survey run (cli/traced_run.cc)
// tell the traced program and the collector, with who reads it. The tracer's
// side of it is typed: CaptureConfig::ToEnv() writes it and
// CaptureConfig::FromEnv() reads it (capture/config.h). The trace categories
// of --trace are STEPSCOPE_TRACE_CATEGORIES.
//
// STEPSCOPE_OTHER_VARS are the rest: the user's overrides and diagnostics the
// tracer reads, the tools' paths, and the roofline profiler's own handover
// (roofline/run_flow.cc -> roofline/inject/).
//
// The C++ sources use these constants and spell no STEPSCOPE_ name
// themselves; the Python readers (python/stepscope/_*.py) do, and
// tests/capture/contract_test.py checks both.
#pragma once

#include <string_view>

namespace stepscope {

// X(constant, name, reader, meaning)
#define STEPSCOPE_CONTRACT_VARS(X)                                                              \
  X(kEnvOutput, "STEPSCOPE_OUTPUT", "tracer", "the output file pattern (-o)")                   \
  X(kEnvTrace, "STEPSCOPE_TRACE", "tracer", "the categories (--trace, kTraceCategories)")       \
  X(kEnvSampleHz, "STEPSCOPE_SAMPLE_HZ", "tracer, collector", "host samples per second")        \
  X(kEnvNativeHz, "STEPSCOPE_NATIVE_HZ", "collector", "native stack samples per CPU second")    \
  X(kEnvPythonStacks, "STEPSCOPE_PYTHON_STACKS", "tracer", "on | off | launches=N")             \
  X(kEnvDelayNs, "STEPSCOPE_DELAY_NS", "tracer", "start recording this late")                   \
  X(kEnvDurationNs, "STEPSCOPE_DURATION_NS", "tracer", "stop recording this much later")        \
  X(kEnvCaptureRange, "STEPSCOPE_CAPTURE_RANGE", "tracer", "cudaProfilerApi | nvtx:NAME")       \
  X(kEnvDetach, "STEPSCOPE_DETACH", "tracer, hook", "off: CUPTI kept outside windows")          \
  X(kEnvGpuMetrics, "STEPSCOPE_GPU_METRICS", "tracer", "PM sampling interval (ns), unset: off") \
  X(kEnvOverwriteBeforeNs, "STEPSCOPE_OVERWRITE_BEFORE_NS", "tracer",                           \
    "replace files older than this (-f)")                                                       \
  X(kEnvCollector, "STEPSCOPE_COLLECTOR", "tracer", "the collector's socket")                   \
  X(kEnvCollectorToken, "STEPSCOPE_COLLECTOR_TOKEN", "tracer", "the run's session token")       \
  X(kEnvLoaderRanges, "STEPSCOPE_LOADER_RANGES", "hook", "1: DataLoader.__next__ ranges")       \
  X(kEnvIterationRanges, "STEPSCOPE_ITERATION_RANGES", "hook", "1: iteration N ranges")         \
  X(kEnvWindowSteps, "STEPSCOPE_WINDOW_STEPS", "hook, tracer", "W:N, the --steps window")       \
  X(kEnvPytorchMemory, "STEPSCOPE_PYTORCH_MEMORY", "hook", "1: the caching-allocator history")  \
  X(kEnvOutputDir, "STEPSCOPE_OUTPUT_DIR", "hook", "where the allocator history is written")

// V(constant, name, reader, meaning)
#define STEPSCOPE_OTHER_VARS(V)                                                                   \
  V(kEnvBin, "STEPSCOPE_BIN", "tracer", "the stepscope binary of a self-started collector")       \
  V(kEnvTraceFile, "STEPSCOPE_TRACE_FILE", "program", "set by the tracer: this process's trace")  \
  V(kEnvInjectLib, "STEPSCOPE_INJECT_LIB", "launcher", "the tracer library to inject")            \
  V(kEnvVerbose, "STEPSCOPE_VERBOSE", "all", "1: log what stepscope does")                        \
  V(kEnvBufferMb, "STEPSCOPE_BUFFER_MB", "tracer", "CUPTI buffer memory (MiB)")                   \
  V(kEnvRingMb, "STEPSCOPE_RING_MB", "tracer", "the shared record ring (MiB)")                    \
  V(kEnvCommitMs, "STEPSCOPE_COMMIT_MS", "tracer", "the commit and flush interval")               \
  V(kEnvUm, "STEPSCOPE_UM", "tracer", "off | driver: unified-memory sources")                     \
  V(kEnvUmDriver, "STEPSCOPE_UM_DRIVER", "tracer", "off: not the driver's totals")                \
  V(kEnvCuptiZeroed, "STEPSCOPE_CUPTI_ZEROED", "tracer", "0: CUPTI clears its buffers")           \
  V(kEnvDeviceBufferMb, "STEPSCOPE_DEVICE_BUFFER_MB", "tracer", "CUPTI's device buffer (MiB)")    \
  V(kEnvApiMode, "STEPSCOPE_API_MODE", "tracer", "callback | activity")                           \
  V(kEnvRuntimeLaunches, "STEPSCOPE_RUNTIME_LAUNCHES", "tracer", "1: runtime-domain launches")    \
  V(kEnvSyncMode, "STEPSCOPE_SYNC_MODE", "tracer", "api | cupti")                                 \
  V(kEnvDiagOff, "STEPSCOPE_DIAG_OFF", "tracer", "diagnostics: parts switched off")               \
  V(kEnvDiagCycle, "STEPSCOPE_DIAG_CYCLE", "tracer", "diagnostics: one DIAG_OFF set per window")  \
  V(kEnvHostMemThreshold, "STEPSCOPE_HOST_MEM_THRESHOLD", "host-mem interposer",                  \
    "smallest host allocation recorded (bytes)")                                                  \
  V(kEnvRooflineInject, "STEPSCOPE_ROOFLINE_INJECT", "roofline", "the roofline profiler library") \
  V(kEnvRooflineTargets, "STEPSCOPE_ROOFLINE_TARGETS", "roofline profiler", "kernels to profile") \
  V(kEnvRooflineResults, "STEPSCOPE_ROOFLINE_RESULTS", "roofline profiler", "where results go")   \
  V(kEnvRooflineGroup, "STEPSCOPE_ROOFLINE_GROUP", "roofline profiler", "all | memory")           \
  V(kEnvRooflineCache, "STEPSCOPE_ROOFLINE_CACHE", "roofline profiler", "none: no L2 flush")      \
  V(kEnvBenchLib, "STEPSCOPE_BENCH_LIB", "roofline", "the microbenchmark library")

#define STEPSCOPE_ENV_CONSTANT(constant, name, reader, meaning) \
  inline constexpr const char* constant = name;
STEPSCOPE_CONTRACT_VARS(STEPSCOPE_ENV_CONSTANT)
STEPSCOPE_OTHER_VARS(STEPSCOPE_ENV_CONSTANT)
#undef STEPSCOPE_ENV_CONSTANT

// The categories of --trace / STEPSCOPE_TRACE, in the order --help lists them
// and STEPSCOPE_TRACE is written: C(name, the CaptureConfig field it sets,
// whether the tracer records it itself; those are the trace's
// meta.trace_categories). `host` is the collector's (host sampling), the
// um-* ones add to the unified-memory records that come with cuda.
#define STEPSCOPE_TRACE_CATEGORIES(C)      \
  C("cuda", cuda, true)                    \
  C("nvtx", nvtx, true)                    \
  C("memory", memory, true)                \
  C("host", host, false)                   \
  C("host-mem", host_mem, true)            \
  C("um", um_at_start, false)              \
  C("um-migrations", um_migrations, false) \
  C("um-gpu-faults", um_gpu_faults, false) \
  C("um-cpu-faults", um_cpu_faults, false)

#define STEPSCOPE_CATEGORY_NAME(name, field, in_meta) name,
inline constexpr std::string_view kTraceCategories[] = {
    STEPSCOPE_TRACE_CATEGORIES(STEPSCOPE_CATEGORY_NAME)};
#undef STEPSCOPE_CATEGORY_NAME

inline bool IsTraceCategory(std::string_view c) {
  for (std::string_view k : kTraceCategories) {
    if (k == c) return true;
  }
  return false;
}

}  // namespace stepscope
