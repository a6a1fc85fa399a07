// Per-launch cost of the tracer by part, inside ONE process (bench/launch_cost.py --in-process):
// ROUNDS x SETS phases of N empty-kernel launches with recording ON (cudaProfilerStart/Stop,
// under `stepscope profile --capture-range cudaProfilerApi` with STEPSCOPE_DIAG_CYCLE: ON phase k
// uses diagnostics set k mod SETS), each followed by an OFF phase of N launches. Prints one JSON
// line: per phase the set, and microseconds per launch ON and OFF.
//   launch_phases [N 20000] [ROUNDS 20] [SETS 1]
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

__global__ void empty_kernel(int x) {
  if (x == -1) asm volatile("trap;");
}

static double LaunchUs(long n) {
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) empty_kernel<<<1, 32>>>(static_cast<int>(i & 0xffff));
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 20000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  const int sets = argc > 3 ? std::atoi(argv[3]) : 1;
  if (cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "cuda init failed\n");
    return 1;
  }
  LaunchUs(n);  // warm-up
  std::string out = "{\"phases\": [";
  for (int r = 0; r < rounds; ++r) {
    for (int s = 0; s < sets; ++s) {
      cudaProfilerStart();
      const double on = LaunchUs(n);
      cudaProfilerStop();
      const double off = LaunchUs(n);
      char buf[128];
      std::snprintf(buf, sizeof(buf), "%s{\"round\": %d, \"set\": %d, \"on\": %.4f, \"off\": %.4f}",
                    (r || s) ? ", " : "", r, s, on, off);
      out += buf;
    }
  }
  out += "]}";
  std::printf("%s\n", out.c_str());
  return 0;
}
