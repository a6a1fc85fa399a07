// CUDA API calls by name, one definition for every reader: which calls block
// the calling thread until the GPU catches up (the analysis's host-wait and
// sync findings, the rank summaries' host CPU that excludes such waits).
#pragma once

#include <string_view>

namespace stepscope {

// True for runtime and driver calls that block the calling thread until
// earlier GPU work is done: the explicit synchronizations
// (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, their
// driver forms) and the synchronous copies and memsets (cudaMemcpy, cuMemcpyDtoH, ...).
bool IsBlockingApiName(std::string_view name);

}  // namespace stepscope
