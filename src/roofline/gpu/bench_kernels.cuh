// Kernels shared by the bench library and the roofline self-test: random
// fill, a streaming copy, an L2 read loop, and FMA loops whose work is known
// exactly (so the self-test can check the profiler's counting).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace stepscope_gpu {

// A value in [-1, 1) from a 64-bit hash of (seed, i): random-looking data
// so GEMMs do not run on zeros (which draws less power and clocks higher).
__device__ __forceinline__ float HashUniform(uint64_t seed, uint64_t i) {
  uint64_t x = seed ^ (i * 0x9E3779B97F4A7C15ull);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__device__ __forceinline__ T FromFloat(float f) {
  return static_cast<T>(f);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float f) {
  return __float2bfloat16(f);
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float f) {
  return __float2half(f);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 FromFloat<__nv_fp8_e4m3>(float f) {
  return __nv_fp8_e4m3(f);
}

template <typename T>
__global__ void FillRandom(T* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = FromFloat<T>(HashUniform(seed, i));
  }
}

// dst = src, 16 bytes per thread per iteration: reads n16*16 bytes and writes
// as many.
__global__ void CopyKernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n16;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

// Reads a buffer `reps` times through L2 (ld.global.cg: cached in L2, not in
// L1). The xor of everything read is stored only when it equals a value it
// practically never takes, so the loads cannot be optimized away.
__global__ void L2ReadKernel(const int4* __restrict__ buf, size_t n16, int reps, int4* sink) {
  int acc = 0;
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (int r = 0; r < reps; ++r) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n16;
         i += stride) {
      int4 v = __ldcg(buf + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x7fffffff) sink[0] = make_int4(acc, acc, acc, acc);
}

// Each thread runs `iters` rounds of 8 independent FMA chains: exactly
// 8 * iters FMA instructions per thread (16 * iters FLOPs).
template <typename T>
__global__ void FmaKernel(T a, T b, int iters, T* sink) {
  T x0 = a + static_cast<T>(threadIdx.x), x1 = x0 + static_cast<T>(1), x2 = x0 + static_cast<T>(2),
    x3 = x0 + static_cast<T>(3), x4 = x0 + static_cast<T>(4), x5 = x0 + static_cast<T>(5),
    x6 = x0 + static_cast<T>(6), x7 = x0 + static_cast<T>(7);
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
    x0 = fma(x0, b, a);
    x1 = fma(x1, b, a);
    x2 = fma(x2, b, a);
    x3 = fma(x3, b, a);
    x4 = fma(x4, b, a);
    x5 = fma(x5, b, a);
    x6 = fma(x6, b, a);
    x7 = fma(x7, b, a);
  }
  T s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  if (s == static_cast<T>(-12345.0)) sink[0] = s;
}

// The same with packed half2: 8 * iters HFMA2 instructions per thread.
__global__ void Hfma2Kernel(float a, float b, int iters, __half2* sink) {
  __half2 va = __float2half2_rn(a), vb = __float2half2_rn(b);
  __half2 x0 = __float2half2_rn(a + threadIdx.x * 1e-3f), x1 = __hadd2(x0, va),
          x2 = __hadd2(x1, va), x3 = __hadd2(x2, va), x4 = __hadd2(x3, va), x5 = __hadd2(x4, va),
          x6 = __hadd2(x5, va), x7 = __hadd2(x6, va);
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
    x0 = __hfma2(x0, vb, va);
    x1 = __hfma2(x1, vb, va);
    x2 = __hfma2(x2, vb, va);
    x3 = __hfma2(x3, vb, va);
    x4 = __hfma2(x4, vb, va);
    x5 = __hfma2(x5, vb, va);
    x6 = __hfma2(x6, vb, va);
    x7 = __hfma2(x7, vb, va);
  }
  __half2 s =
      __hadd2(__hadd2(__hadd2(x0, x1), __hadd2(x2, x3)), __hadd2(__hadd2(x4, x5), __hadd2(x6, x7)));
  if (__low2float(s) == -12345.0f) sink[0] = s;
}

}  // namespace stepscope_gpu
