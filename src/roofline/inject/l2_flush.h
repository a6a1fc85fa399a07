// Flushing the GPU's L2 cache before a profiled launch, as Nsight Compute's
// default --cache-control all does, so that a kernel's DRAM bytes do not
// depend on what earlier kernels left in L2.
#pragma once

#include <cuda.h>

#include <string>

namespace stepscope::inject {

// Reads a buffer of twice the L2 size through L2 on the context's NULL
// stream and waits for it: dirty lines left by earlier work are written back
// during the flush, and L2 is left full of clean lines, so the next kernel
// reads its inputs from DRAM and its writes evict nothing dirty. The first
// call loads the flush kernel (PTX, JIT-compiled by the driver) and
// allocates the buffer in the current context. Returns false with *error set
// when any step fails (the caller reports it and profiles without a flush).
bool FlushL2(CUcontext ctx, std::string* error);

// Frees the buffer (at exit; safe to call when nothing was allocated).
void ReleaseL2Flush();

}  // namespace stepscope::inject
