#include "capture/pageable_copy.h"

namespace stepscope {
namespace {

// A runtime copy's host pointers by its cudaMemcpyKind.
bool ByKind(cudaMemcpyKind kind, const void* dst, const void* src, HostCopyPointers* out) {
  switch (kind) {
    case cudaMemcpyHostToDevice:
      out->ptr[out->n++] = src;
      return true;
    case cudaMemcpyDeviceToHost:
      out->ptr[out->n++] = dst;
      return true;
    case cudaMemcpyDefault:  // unified addressing: either side may be host memory
      out->ptr[out->n++] = src;
      out->ptr[out->n++] = dst;
      return true;
    default:  // host-to-host, device-to-device
      return false;
  }
}

template <typename P>
bool Runtime(const void* params, HostCopyPointers* out) {
  const P* p = static_cast<const P*>(params);
  return ByKind(p->kind, p->dst, p->src, out);
}

bool RuntimeCopy(CUpti_CallbackId cbid, const void* params, HostCopyPointers* out) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
      return Runtime<cudaMemcpyAsync_v3020_params>(params, out);
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000:
      return Runtime<cudaMemcpyAsync_ptsz_v7000_params>(params, out);
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020:
      return Runtime<cudaMemcpy2DAsync_v3020_params>(params, out);
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000:
      return Runtime<cudaMemcpy2DAsync_ptsz_v7000_params>(params, out);
    default:
      return false;
  }
}

bool DriverCopy(CUpti_CallbackId cbid, const void* params, HostCopyPointers* out) {
  const void* a = nullptr;
  const void* b = nullptr;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
      a = static_cast<const cuMemcpyHtoDAsync_v2_params*>(params)->srcHost;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz:
      a = static_cast<const cuMemcpyHtoDAsync_v2_ptsz_params*>(params)->srcHost;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
      a = static_cast<const cuMemcpyDtoHAsync_v2_params*>(params)->dstHost;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz:
      a = static_cast<const cuMemcpyDtoHAsync_v2_ptsz_params*>(params)->dstHost;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync: {
      const auto* p = static_cast<const cuMemcpyAsync_params*>(params);
      a = reinterpret_cast<const void*>(p->src);
      b = reinterpret_cast<const void*>(p->dst);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz: {
      const auto* p = static_cast<const cuMemcpyAsync_ptsz_params*>(params);
      a = reinterpret_cast<const void*>(p->src);
      b = reinterpret_cast<const void*>(p->dst);
      break;
    }
    default:
      return false;
  }
  out->ptr[out->n++] = a;
  if (b) out->ptr[out->n++] = b;
  return true;
}

}  // namespace

bool AsyncCopyHostPointers(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                           HostCopyPointers* out) {
  *out = HostCopyPointers{};
  if (!params) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return RuntimeCopy(cbid, params, out);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return DriverCopy(cbid, params, out);
  return false;
}

bool IsPageableAsyncCopy(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                         PointerQuery query) {
  HostCopyPointers h;
  if (!query || !AsyncCopyHostPointers(domain, cbid, params, &h)) return false;
  for (int i = 0; i < h.n; ++i) {
    if (h.ptr[i] && query(h.ptr[i]) == HostMemory::kPageable) return true;
  }
  return false;
}

HostMemory HostMemoryFromResult(int cu_result) {
  return cu_result == 0   ? HostMemory::kKnown
         : cu_result == 1 ? HostMemory::kPageable  // CUDA_ERROR_INVALID_VALUE
                          : HostMemory::kUnknown;
}

}  // namespace stepscope
