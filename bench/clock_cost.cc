// Figure: what one timestamp costs on this machine (docs/PERFORMANCE.md, "Capture overhead"):
// the tracer stamps every API call twice. Prints ns per call of clock_gettime (REALTIME,
// MONOTONIC), rdtsc and cuptiGetTimestamp, and the kernel's clock source (a VM whose clock
// source has no vDSO path turns clock_gettime into a system call).
//
// Build: nvcc -O2 -o clock_cost bench/clock_cost.cc -lcupti   Run: ./clock_cost
#include <cupti.h>
#include <time.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

template <typename F>
double NsPerCall(F&& f, int n = 2000000) {
  uint64_t sink = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) sink += f();
  double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 42) std::printf(" ");
  return ns / n;
}

int main() {
  std::string src;
  std::ifstream("/sys/devices/system/clocksource/clocksource0/current_clocksource") >> src;
  std::printf("clocksource %s\n", src.c_str());
  auto rt = [] {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return uint64_t(t.tv_nsec);
  };
  auto mono = [] {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return uint64_t(t.tv_nsec);
  };
  auto tsc = [] { return uint64_t(__rdtsc()); };
  auto cupti = [] {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
  };
  std::printf("clock_gettime(REALTIME)  %.1f ns\n", NsPerCall(rt));
  std::printf("clock_gettime(MONOTONIC) %.1f ns\n", NsPerCall(mono));
  std::printf("rdtsc                    %.1f ns\n", NsPerCall(tsc));
  std::printf("cuptiGetTimestamp        %.1f ns\n", NsPerCall(cupti, 200000));
  return 0;
}
