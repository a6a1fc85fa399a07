// stepscope_roofline_selftest: kernels whose work is known exactly, for
// checking what `stepscope roofline` counts (tests/gpu/roofline_check.sh).
//
//   stepscope_roofline_selftest [--gemm M,N,K] [--repeat R]
//
// Runs, R times each: a cuBLASLt bf16 GEMM of shape M,N,K (2*M*N*K FLOPs), an
// fp32 FMA kernel (16 FLOPs per thread per iteration, plus a few adds), and a
// 256 MiB device copy kernel (256 MiB read, 256 MiB written). Prints one JSON
// line per kernel with the expected work, then "selftest ok".
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "roofline/gpu/bench_kernels.cuh"

using namespace stepscope_gpu;

#define CHECK(expr)                                                                   \
  do {                                                                                \
    auto _r = (expr);                                                                 \
    if (static_cast<int>(_r) != 0) {                                                  \
      std::fprintf(stderr, "selftest: %s failed: %d\n", #expr, static_cast<int>(_r)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  size_t m = 4096, n = 4096, k = 4096;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gemm") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%zu,%zu,%zu", &m, &n, &k) != 3) {
        std::fprintf(stderr, "selftest: --gemm wants M,N,K\n");
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: stepscope_roofline_selftest [--gemm M,N,K] [--repeat R]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "selftest: no CUDA GPU\n");
    return 2;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;

  // GEMM: D(MxN) = A^T(MxK) * B(KxN), bf16 in, fp32 accumulate, bf16 out.
  __nv_bfloat16 *A, *B, *D;
  CHECK(cudaMalloc(&A, m * k * 2));
  CHECK(cudaMalloc(&B, k * n * 2));
  CHECK(cudaMalloc(&D, m * n * 2));
  FillRandom<__nv_bfloat16><<<sms * 8, 256>>>(A, m * k, 1);
  FillRandom<__nv_bfloat16><<<sms * 8, 256>>>(B, k * n, 2);
  size_t ws_bytes = 64u << 20;
  void* ws;
  CHECK(cudaMalloc(&ws, ws_bytes));
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, k));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &ws_bytes, sizeof(ws_bytes)));
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
  if (!found) {
    std::fprintf(stderr, "selftest: no cuBLASLt algorithm\n");
    return 1;
  }
  float alpha = 1, beta = 0;
  for (int r = 0; r < repeat; ++r) {
    CHECK(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, lc, D, lc, &heur.algo, ws,
                         ws_bytes, 0));
  }
  CHECK(cudaDeviceSynchronize());
  std::printf("{\"kernel\": \"gemm\", \"m\": %zu, \"n\": %zu, \"k\": %zu, \"flops\": %.0f}\n", m, n,
              k, 2.0 * m * n * k);

  // FMA kernel: 8 chains x iters FFMA per thread.
  const int iters = 4096, blocks = sms * 4, threads = 256;
  float* sink;
  CHECK(cudaMalloc(&sink, 64));
  for (int r = 0; r < repeat; ++r)
    FmaKernel<float><<<blocks, threads>>>(1e-3f, 0.999f, iters, sink);
  CHECK(cudaDeviceSynchronize());
  std::printf(
      "{\"kernel\": \"fma_fp32\", \"name\": \"FmaKernel\", \"ffma\": %.0f, \"flops_min\": %.0f}\n",
      8.0 * iters * blocks * threads, 16.0 * iters * blocks * threads);

  // Copy kernel: 256 MiB read, 256 MiB written.
  size_t bytes = 256u << 20;
  int4 *src, *dst;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  FillRandom<uint8_t><<<sms * 8, 256>>>(reinterpret_cast<uint8_t*>(src), bytes, 3);
  for (int r = 0; r < repeat; ++r) CopyKernel<<<sms * 16, 512>>>(src, dst, bytes / 16);
  CHECK(cudaDeviceSynchronize());
  std::printf(
      "{\"kernel\": \"copy\", \"name\": \"CopyKernel\", \"read_bytes\": %zu, \"write_bytes\": "
      "%zu}\n",
      bytes, bytes);
  CHECK(cudaGetLastError());
  std::printf("selftest ok\n");
  return 0;
}
