// NVTX push/pop callable from Python through ctypes, for the host-sampling
// test on a machine without the nvtx Python package: NVTX v3 is header-only,
// so a program needs some compiled caller to reach the injected tracer.
#include <nvtx3/nvToolsExt.h>

extern "C" {
__attribute__((visibility("default"))) int shim_push(const char* name) {
  return nvtxRangePushA(name);
}
__attribute__((visibility("default"))) int shim_pop() { return nvtxRangePop(); }
}
