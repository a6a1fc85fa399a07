// libstepscope_roofline_inject.so: loaded into the profiled program by the
// CUDA driver (CUDA_INJECTION64_PATH) when `stepscope roofline` runs its
// profiling passes (the survey pass runs under the tracer,
// libstepscope_inject.so, like `stepscope profile`). It collects hardware
// counters with the CUPTI range profiler (auto range = one range per kernel,
// kernel replay) for the launches of the kernels listed in
// STEPSCOPE_ROOFLINE_TARGETS only, at most K instances each, and appends one
// JSON line per instance to STEPSCOPE_ROOFLINE_RESULTS (see
// roofline/profile_io.h).
//
// Like the tracer, this library must never take the program down: no
// exceptions escape, every CUPTI failure becomes one warning on stderr and
// an "error" line for the CLI, and profiling then stops while the program
// runs on.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

namespace stepscope::inject {

// An exception reached an entry point: one warning, no more profiling.
void DisableAfterError(const char* where);

// Appends a line to the results file (thread-safe, flushed).
void WriteResultLine(const std::string& line);
// Reports a failure once on stderr and as an error line.
void ReportError(const std::string& message, int code);
bool MpsActive();

// GPU name and UUID of a CUDA device ordinal (through libcuda, already loaded).
void DeviceIdentity(int ordinal, std::string* name, std::string* uuid);

// The range profiler (range_profiler.cc).
bool ProfileStart(CUpti_SubscriberHandle subscriber);
void ProfileCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
void ProfileFinish();

// The driver's kernel-launch callbacks (the profiler intercepts these).
inline constexpr CUpti_CallbackId kDriverLaunchCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
bool IsDriverLaunch(CUpti_CallbackId cbid);
// Turns on the callbacks for every kDriverLaunchCbids entry; the first failure.
CUptiResult EnableDriverLaunchCallbacks(CUpti_SubscriberHandle sub);
// Grid and block of a driver launch call from its parameters; false when unknown.
bool LaunchDims(CUpti_CallbackId cbid, const void* params, int32_t grid[3], int32_t block[3]);

}  // namespace stepscope::inject
