// Figure: what the tracer adds to an async host<->device copy call to tell a
// pageable one (docs/capture.md, "Host capture"; src/capture/pageable_copy.h):
// one cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE) on the host
// pointer. Prints ns per query on pageable (malloc), pinned (cuMemAllocHost)
// and device (cuMemAlloc) pointers, from 1 and from 8 threads at once (the
// driver's lookup takes a lock), and, for scale, ns per cuMemcpyHtoDAsync
// call of 4 KiB from pinned memory.
//
// Build: g++ -O2 -std=c++17 -I/usr/local/cuda/include -o pointer_query_cost
//        bench/pointer_query_cost.cc -lcuda -lpthread      Run: ./pointer_query_cost
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(x)                                                         \
  do {                                                                   \
    CUresult r_ = (x);                                                   \
    if (r_ != CUDA_SUCCESS) {                                            \
      std::fprintf(stderr, "%s failed: %d\n", #x, static_cast<int>(r_)); \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

double QueryNs(CUdeviceptr p, int n, int* result) {
  unsigned int type = 0;
  int last = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    last = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  *result = last;
  return ns / n;
}

int main() {
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  const size_t bytes = 64 << 20;
  std::vector<char> pageable(bytes, 1);
  void* pinned = nullptr;
  CHECK(cuMemAllocHost(&pinned, bytes));
  CUdeviceptr device;
  CHECK(cuMemAlloc(&device, bytes));
  // A few live pinned and device allocations, as in a training process.
  std::vector<void*> more_pinned(64);
  std::vector<CUdeviceptr> more_device(256);
  for (auto& p : more_pinned) CHECK(cuMemAllocHost(&p, 1 << 20));
  for (auto& p : more_device) CHECK(cuMemAlloc(&p, 1 << 20));
  const int n = 1000000;
  struct Case {
    const char* what;
    CUdeviceptr p;
  } cases[] = {{"pageable (malloc)", reinterpret_cast<CUdeviceptr>(pageable.data() + 4096)},
               {"pinned (cuMemAllocHost)", reinterpret_cast<CUdeviceptr>(pinned) + 4096},
               {"device (cuMemAlloc)", device + 4096}};
  for (const Case& c : cases) {
    int rc = 0;
    const double one = QueryNs(c.p, n, &rc);
    std::vector<std::thread> ts;
    std::vector<double> ns(8);
    for (int t = 0; t < 8; ++t) {
      ts.emplace_back([&, t] {
        cuCtxSetCurrent(ctx);
        int r = 0;
        ns[t] = QueryNs(c.p, n / 8, &r);
      });
    }
    for (auto& t : ts) t.join();
    double worst = 0;
    for (double x : ns) worst = x > worst ? x : worst;
    std::printf("%-26s result %d: %7.1f ns per query (1 thread), %7.1f ns (8 threads, slowest)\n",
                c.what, rc, one, worst);
  }
  CUstream s;
  CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const int copies = 20000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < copies; ++i) CHECK(cuMemcpyHtoDAsync(device, pinned, 4096, s));
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  CHECK(cuStreamSynchronize(s));
  std::printf("cuMemcpyHtoDAsync 4 KiB pinned: %.1f ns per call (for scale)\n", ns / copies);
  return 0;
}
