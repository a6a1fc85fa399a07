// Pageable async copies, told apart in the API callback (docs/capture.md,
// "Host capture"): an async copy to or from pageable host memory is staged
// through a driver buffer and blocks its thread like a synchronous copy, so
// it gets the thread's Python stack as the synchronous calls do.
//
// Decoding is separate from the pointer test so that both are testable
// without a GPU: AsyncCopyHostPointers reads the callback's function
// parameters (the host pointers of an async copy whose direction involves
// host memory; device-to-device and host-to-host copies have none and are
// never tested); IsPageableAsyncCopy asks a PointerQuery about each.
#pragma once

#include <cupti.h>

#include <cstdint>

namespace stepscope {

// The host pointers of one async copy (at most source and destination).
struct HostCopyPointers {
  const void* ptr[2] = {nullptr, nullptr};
  int n = 0;
};

// Fills `out` for the async copies whose direction involves host memory:
// cudaMemcpyAsync and cudaMemcpy2DAsync (and _ptsz) by their kind
// (host-to-device: the source; device-to-host: the destination; default:
// both), cuMemcpyHtoDAsync_v2 / cuMemcpyDtoHAsync_v2 (and _ptsz): the host
// side, cuMemcpyAsync (and _ptsz; unified addressing, direction unknown):
// both. False for any other call, a device-to-device or host-to-host kind,
// or no params.
bool AsyncCopyHostPointers(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                           HostCopyPointers* out);

// What CUDA knows about a host pointer.
enum class HostMemory : uint8_t {
  kUnknown,   // the query failed for another reason: no stack
  kPageable,  // not allocated, registered or mapped by CUDA
  kKnown,     // pinned, device or managed memory
};
using PointerQuery = HostMemory (*)(const void* p);

// True when the call is an async copy (AsyncCopyHostPointers) with a pageable
// host pointer.
bool IsPageableAsyncCopy(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                         PointerQuery query);

// The tracer's query (api_callbacks.cc) is cuPointerGetAttribute
// (CU_POINTER_ATTRIBUTE_MEMORY_TYPE); its return code read as a HostMemory:
// 0 success, 1 CUDA_ERROR_INVALID_VALUE (memory unknown to CUDA: pageable).
HostMemory HostMemoryFromResult(int cu_result);

}  // namespace stepscope
