// The managed-memory program of docs/um.md: a cudaMallocManaged buffer touched
// alternately by the CPU and by a GPU kernel `touch`, ROUNDS rounds, each in
// an NVTX range "step N". --prefetch adds cudaMemPrefetchAsync to the GPU
// before each kernel (the fix um_faults proposes); --device-mem uses cudaMalloc
// instead (no unified memory at all: the no-cost check). Prints one JSON line
// with the kernel times measured by CUDA events.
//
// Build: nvcc -O2 -o um_touch tests/gpu/um_touch.cu   (tests/gpu/um_check.py does it)
// --work N adds N dependent multiply-adds per element (a kernel that also
// computes: its time with the data resident is no longer ~0).
// --repeat R launches the kernel R times per round: the first faults, the
// others find the data resident (fault-free runs of the same kernel).
// Run:   um_touch [--mib 256] [--rounds 3] [--prefetch] [--device-mem] [--work N] [--repeat R]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

__global__ void touch(float* a, size_t n, int work) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float v = a[i];
    for (int k = 0; k < work; ++k) v = v * 0.999f + 0.5f;  // compute on the element
    a[i] = v * 2.0f + 1.0f;
  }
}

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));            \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main(int argc, char** argv) {
  size_t mib = 256;
  int rounds = 3;
  bool prefetch = false, device_mem = false;
  int work = 0, repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mib") && i + 1 < argc) mib = std::strtoull(argv[++i], 0, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--prefetch")) prefetch = true;
    else if (!std::strcmp(argv[i], "--device-mem")) device_mem = true;
    else if (!std::strcmp(argv[i], "--work") && i + 1 < argc) work = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
  }
  const size_t bytes = mib << 20, n = bytes / sizeof(float);
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  float* a = nullptr;
  std::vector<float> host;
  if (device_mem) {
    CHECK(cudaMalloc(&a, bytes));
    host.assign(n, 0.0f);
  } else {
    CHECK(cudaMallocManaged(&a, bytes));
  }
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> kernel_ms;
  for (int r = 1; r <= rounds; ++r) {
    std::string name = "step " + std::to_string(r);
    nvtxRangePushA(name.c_str());
    float* cpu = device_mem ? host.data() : a;
    for (size_t i = 0; i < n; i += 1) cpu[i] += 1.0f;  // CPU touch (faults pages back)
    if (device_mem) CHECK(cudaMemcpyAsync(a, host.data(), bytes, cudaMemcpyHostToDevice, s));
    if (prefetch && !device_mem) {
#if CUDART_VERSION >= 13000
      cudaMemLocation loc{};
      loc.type = cudaMemLocationTypeDevice;
      loc.id = dev;
      CHECK(cudaMemPrefetchAsync(a, bytes, loc, 0, s));
#else
      CHECK(cudaMemPrefetchAsync(a, bytes, dev, s));
#endif
    }
    CHECK(cudaEventRecord(e0, s));
    for (int k = 0; k < repeat; ++k) touch<<<1024, 256, 0, s>>>(a, n, work);
    CHECK(cudaEventRecord(e1, s));
    if (device_mem) CHECK(cudaMemcpyAsync(host.data(), a, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaDeviceSynchronize());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    kernel_ms.push_back(ms);
    nvtxRangePop();
  }
  std::printf(
      "{\"mib\": %zu, \"rounds\": %d, \"work\": %d, \"prefetch\": %s, \"device_mem\": %s, "
      "\"kernel_ms\": [",
      mib, rounds, work, prefetch ? "true" : "false", device_mem ? "true" : "false");
  for (size_t i = 0; i < kernel_ms.size(); ++i) std::printf("%s%.3f", i ? ", " : "", kernel_ms[i]);
  std::printf("]}\n");
  cudaFree(a);
  return 0;
}
