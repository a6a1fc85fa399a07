#include "common/api_names.h"

namespace stepscope {

bool IsBlockingApiName(std::string_view name) {
  static constexpr std::string_view kNames[] = {"cudaDeviceSynchronize",
                                                "cudaStreamSynchronize",
                                                "cudaEventSynchronize",
                                                "cudaThreadSynchronize",
                                                "cuCtxSynchronize",
                                                "cuStreamSynchronize",
                                                "cuEventSynchronize",
                                                "cudaMemcpy",
                                                "cudaMemset",
                                                "cudaMemcpy2D",
                                                "cudaMemcpyToSymbol",
                                                "cudaMemcpyFromSymbol",
                                                "cuMemcpyDtoH",
                                                "cuMemcpyHtoD",
                                                "cuMemcpyDtoH_v2",
                                                "cuMemcpyHtoD_v2",
                                                "cuMemcpy",
                                                "cuMemsetD8",
                                                "cuMemsetD32",
                                                "cuMemsetD8_v2",
                                                "cuMemsetD32_v2"};
  for (std::string_view k : kNames) {
    if (name == k) return true;
  }
  return false;
}

}  // namespace stepscope
