#pragma once

namespace stepscope {

// Sets up CUPTI for the session (called from InitializeInjection). Always
// returns 1: a failure disables tracing with one warning, the program runs on.
// With a recording window (CaptureConfig::DetachesOutsideWindows) it
// subscribes to nothing until the window opens (cupti_setup.cc says how).
int InitializeCupti();

// CUPTI's unified-memory activity kind is enabled (per-migration records).
bool UnifiedMemoryActivityOn();

// A recording window is about to open: subscribes to CUPTI when the window's
// detach left the process without it (the exported stepscope_attach(), the
// timer thread's --delay, the NVTX push of the capture range), or cancels a
// detach that has not run yet. Returns 1 when CUPTI is attached afterwards, 0
// when it is not (CUDA never loaded the tracer, or the attach failed: the
// session is then off, with one warning). Never throws. `announced`: the
// program's own call (stepscope_attach): it announces every window it opens,
// so CUPTI need not watch for its cudaProfilerStart between windows.
int AttachCuptiForWindow(bool announced = false);

// A recording window ended (recording already off): CUPTI leaves the process
// at the next API exit callback that may finalize. No-op unless windows
// detach. Never throws.
void DetachCuptiAfterWindow();

// Timer thread: with the program's own cudaProfilerStart opening windows,
// subscribes again (callbacks for that call only) once a window's detach ran.
void WatchForWindow();

}  // namespace stepscope
