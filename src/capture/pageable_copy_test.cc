// Pageable async copies in the API callback (pageable_copy.h) and the stack
// policy by name (python_callstack.h), on fake callback parameters: no GPU.
#include "capture/pageable_copy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "capture/python_callstack.h"

namespace stepscope {
namespace {

char host_buf[64];
char pinned_buf[64];
char device_buf[64];
int queries = 0;

// Stands for cuPointerGetAttribute: host_buf is pageable, the others known.
HostMemory FakeQuery(const void* p) {
  ++queries;
  if (p == host_buf) return HostMemory::kPageable;
  if (p == pinned_buf || p == device_buf) return HostMemory::kKnown;
  return HostMemory::kUnknown;
}

constexpr CUpti_CallbackDomain kRt = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr CUpti_CallbackDomain kDrv = CUPTI_CB_DOMAIN_DRIVER_API;

cudaMemcpyAsync_v3020_params Rt(void* dst, const void* src, cudaMemcpyKind kind) {
  return {dst, src, 64, kind, nullptr};
}

TEST(PageableCopy, RuntimeCopyByKind) {
  HostCopyPointers h;
  auto up = Rt(device_buf, host_buf, cudaMemcpyHostToDevice);
  ASSERT_TRUE(AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &up, &h));
  ASSERT_EQ(h.n, 1);
  EXPECT_EQ(h.ptr[0], host_buf);
  auto down = Rt(host_buf, device_buf, cudaMemcpyDeviceToHost);
  ASSERT_TRUE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &down, &h));
  ASSERT_EQ(h.n, 1);
  EXPECT_EQ(h.ptr[0], host_buf);
  auto any = Rt(device_buf, host_buf, cudaMemcpyDefault);
  ASSERT_TRUE(AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &any, &h));
  EXPECT_EQ(h.n, 2);
  // Device-to-device and host-to-host copies have no host pointer to test.
  auto d2d = Rt(device_buf, device_buf, cudaMemcpyDeviceToDevice);
  EXPECT_FALSE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &d2d, &h));
  EXPECT_EQ(h.n, 0);
  auto h2h = Rt(host_buf, host_buf, cudaMemcpyHostToHost);
  EXPECT_FALSE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &h2h, &h));
}

TEST(PageableCopy, RuntimeVariants) {
  HostCopyPointers h;
  cudaMemcpyAsync_ptsz_v7000_params ptsz{device_buf, host_buf, 64, cudaMemcpyHostToDevice, nullptr};
  ASSERT_TRUE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, &ptsz, &h));
  EXPECT_EQ(h.ptr[0], host_buf);
  cudaMemcpy2DAsync_v3020_params two_d{host_buf, 8, device_buf, 8, 8, 8, cudaMemcpyDeviceToHost,
                                       nullptr};
  ASSERT_TRUE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020, &two_d, &h));
  EXPECT_EQ(h.ptr[0], host_buf);
  // Synchronous copies have their own policy (always a stack); other calls none.
  auto up = Rt(device_buf, host_buf, cudaMemcpyHostToDevice);
  EXPECT_FALSE(AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &up, &h));
  EXPECT_FALSE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &up, &h));
  EXPECT_FALSE(
      AsyncCopyHostPointers(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, nullptr, &h));
  EXPECT_FALSE(AsyncCopyHostPointers(CUPTI_CB_DOMAIN_NVTX,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &up, &h));
}

TEST(PageableCopy, DriverCopies) {
  HostCopyPointers h;
  cuMemcpyHtoDAsync_v2_params up{reinterpret_cast<CUdeviceptr>(device_buf), host_buf, 64, nullptr};
  ASSERT_TRUE(AsyncCopyHostPointers(kDrv, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &up, &h));
  ASSERT_EQ(h.n, 1);
  EXPECT_EQ(h.ptr[0], host_buf);
  cuMemcpyDtoHAsync_v2_ptsz_params down{host_buf, reinterpret_cast<CUdeviceptr>(device_buf), 64,
                                        nullptr};
  ASSERT_TRUE(
      AsyncCopyHostPointers(kDrv, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz, &down, &h));
  EXPECT_EQ(h.ptr[0], host_buf);
  cuMemcpyAsync_params any{reinterpret_cast<CUdeviceptr>(host_buf),
                           reinterpret_cast<CUdeviceptr>(device_buf), 64, nullptr};
  ASSERT_TRUE(AsyncCopyHostPointers(kDrv, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &any, &h));
  EXPECT_EQ(h.n, 2);
  cuMemcpyDtoDAsync_v2_params d2d{reinterpret_cast<CUdeviceptr>(device_buf),
                                  reinterpret_cast<CUdeviceptr>(device_buf), 64, nullptr};
  EXPECT_FALSE(AsyncCopyHostPointers(kDrv, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, &d2d, &h));
}

TEST(PageableCopy, PageableByQuery) {
  auto pageable = Rt(device_buf, host_buf, cudaMemcpyHostToDevice);
  auto pinned = Rt(device_buf, pinned_buf, cudaMemcpyHostToDevice);
  auto unknown = Rt(device_buf, reinterpret_cast<void*>(0x1234), cudaMemcpyHostToDevice);
  const auto cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
  EXPECT_TRUE(IsPageableAsyncCopy(kRt, cbid, &pageable, FakeQuery));
  EXPECT_FALSE(IsPageableAsyncCopy(kRt, cbid, &pinned, FakeQuery));
  EXPECT_FALSE(IsPageableAsyncCopy(kRt, cbid, &unknown, FakeQuery));  // a failed query: no stack
  EXPECT_FALSE(IsPageableAsyncCopy(kRt, cbid, &pageable, nullptr));
  // Default kind: the device side is known, the host side pageable.
  auto any = Rt(device_buf, host_buf, cudaMemcpyDefault);
  EXPECT_TRUE(IsPageableAsyncCopy(kRt, cbid, &any, FakeQuery));
  // A device-to-device copy is never queried.
  queries = 0;
  auto d2d = Rt(device_buf, host_buf, cudaMemcpyDeviceToDevice);
  EXPECT_FALSE(IsPageableAsyncCopy(kRt, cbid, &d2d, FakeQuery));
  EXPECT_EQ(queries, 0);
}

TEST(PageableCopy, DriverResultCodes) {
  EXPECT_EQ(HostMemoryFromResult(0), HostMemory::kKnown);     // CUDA_SUCCESS
  EXPECT_EQ(HostMemoryFromResult(1), HostMemory::kPageable);  // CUDA_ERROR_INVALID_VALUE
  EXPECT_EQ(HostMemoryFromResult(3), HostMemory::kUnknown);   // not initialized
  EXPECT_EQ(HostMemoryFromResult(4), HostMemory::kUnknown);   // deinitialized (exit)
}

TEST(PageableCopy, StackPolicyByName) {
  EXPECT_EQ(StackPolicyForName("cudaMemcpyAsync_v3020"), StackPolicy::kIfPageable);
  EXPECT_EQ(StackPolicyForName("cudaMemcpyAsync_ptsz_v7000"), StackPolicy::kIfPageable);
  EXPECT_EQ(StackPolicyForName("cuMemcpyHtoDAsync_v2"), StackPolicy::kIfPageable);
  EXPECT_EQ(StackPolicyForName("cudaMemcpy_v3020"), StackPolicy::kAlways);
  EXPECT_EQ(StackPolicyForName("cuMemcpyDtoH_v2"), StackPolicy::kAlways);
  EXPECT_EQ(StackPolicyForName("cudaMemsetAsync_v3020"), StackPolicy::kNone);
  EXPECT_EQ(StackPolicyForName("cudaStreamSynchronize_v3020"), StackPolicy::kAlways);
  EXPECT_EQ(StackPolicyForName("cudaLaunchKernel_v7000"), StackPolicy::kLaunch);
  EXPECT_EQ(StackPolicyForName(nullptr), StackPolicy::kNone);
}

// The decoding's share of the cost a copy call pays (the pointer query itself
// is measured on a GPU: bench/pointer_query_cost.cc).
TEST(PageableCopy, DecodeCostPerCall) {
  auto pinned = Rt(device_buf, pinned_buf, cudaMemcpyHostToDevice);
  auto d2d = Rt(device_buf, device_buf, cudaMemcpyDeviceToDevice);
  const int n = 2'000'000;
  int hits = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    hits += IsPageableAsyncCopy(kRt, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                                i % 2 ? static_cast<void*>(&pinned) : static_cast<void*>(&d2d),
                                FakeQuery);
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("decode + fake query: %.1f ns per copy call\n", ns);
  EXPECT_EQ(hits, 0);
  EXPECT_LT(ns, 1000.0);
}

}  // namespace
}  // namespace stepscope
