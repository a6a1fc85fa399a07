// The only symbols libstepscope_inject.so exports (see inject.map): the entry
// points the CUDA driver and NVTX look up, and the recording window's attach hook. Everything else,
// the statically linked SQLite included, is hidden so it cannot clash with the program's own
// libraries (e.g. Python's sqlite3 module).
#include <cstdint>

#include "capture/cupti_setup.h"
#include "capture/nvtx_injection.h"
#include "capture/session.h"

extern "C" {

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
// this library. Must not throw; returns 1 (0 would make the driver complain,
// and the program must run on either way).
__attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    return stepscope::InitializeCupti();
  } catch (...) {
    stepscope::Session::Get().Disable("internal error in the CUDA tracer setup");
    return 1;
  }
}

// Called by NVTX on the first NVTX call when NVTX_INJECTION64_PATH names this
// library. Returns 1 when the handlers are installed, 0 to leave NVTX a no-op.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  try {
    stepscope::Session& s = stepscope::Session::Get();
    if (!s.EnsureStarted() || !s.config().nvtx) return 0;
    return stepscope::InstallNvtxHandlers(get_export_table);
  } catch (...) {
    return 0;
  }
}

// A recording window is about to open (STEPSCOPE_DETACH, on by default with a
// window): attaches CUPTI, which the previous window's end (or the start, for
// the first window) left out of the process. The --steps iteration hook
// (python/stepscope/_iteration_ranges.py) and bench/overhead_phases.py call it
// (ctypes) just before cudaProfilerStart. Returns 1 when CUPTI is attached
// afterwards; 0 (CUDA not loaded yet, or tracing off) is never the program's
// concern.
__attribute__((visibility("default"))) int stepscope_attach(void) {
  return stepscope::AttachCuptiForWindow(/*announced=*/true);
}

}  // extern "C"
