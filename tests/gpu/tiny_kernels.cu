// Launches N empty kernels as fast as the host can, for the tracer's
// throughput test: every kernel must be in the trace, or every drop counted.
//   tiny_kernels N
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel(int x) {
  if (x == -1) asm volatile("trap;");
}

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  cudaError_t e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda init failed: %s\n", cudaGetErrorString(e));
    return 1;
  }
  empty_kernel<<<1, 1>>>(0);
  cudaDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) empty_kernel<<<1, 32>>>(static_cast<int>(i & 0xffff));
  e = cudaDeviceSynchronize();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "kernel failed: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("{\"kernels\": %ld, \"seconds\": %.4f, \"launches_per_s\": %.0f}\n", n + 1, s, n / s);
  return 0;
}
