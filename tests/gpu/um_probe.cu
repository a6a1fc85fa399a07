// Standalone probe: can CUPTI unified-memory counters be enabled on this
// machine at all, independently of stepscope's tracer? Configures the UM
// counters (HtoD, DtoH, GPU page faults) at three moments (before cuInit, after
// the primary context exists, after a managed allocation), enables the
// activity kind, touches 64 MiB of managed memory from CPU and GPU and counts
// the records. Prints each CUPTI result code. (docs/um.md, issue 15.)
//
// FLUSH_MS > 0 adds a thread that calls cuptiActivityFlushAll(0) every
// FLUSH_MS ms (does draining more often keep the records of a fault storm?);
// TOOLS 1 also opens the driver's unified-memory counter totals
// (src/capture/uvm_counters.cc) and prints them per round beside CUPTI's.
//
// Build: nvcc -O2 -std=c++20 -I src -o um_probe tests/gpu/um_probe.cu src/capture/uvm_counters.cc -lcupti
// Run:   um_probe early|context|alloc [KINDS 2|3|7] [MIB] [FLUSH_MS] [TOOLS 0|1]   (three CPU/GPU touch rounds)
#include <cuda_runtime.h>
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "capture/uvm_counters.h"

static int g_records = 0, g_faults = 0, g_other = 0;
static unsigned long long g_bytes[3][8];  // [direction 1 htod / 2 dtoh][cause]

static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

static void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) {
      ++g_records;
      auto* u = reinterpret_cast<CUpti_ActivityUnifiedMemoryCounter3*>(rec);
      if (u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD)
        g_bytes[1][u->flags & 7] += u->value;
      else if (u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH)
        g_bytes[2][u->flags & 7] += u->value;
      else if (u->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT)
        ++g_faults;
      else
        ++g_other;
    }
  }
  free(buffer);
}

static const char* Str(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "?";
}

static int g_nkinds = 3;  // 2: migrations; 3: + GPU faults; 7: + thrashing, throttling, remote map, DtoD

static CUptiResult Configure() {
  CUpti_ActivityUnifiedMemoryCounterConfig cfg[7];
  std::memset(cfg, 0, sizeof(cfg));
  CUpti_ActivityUnifiedMemoryCounterKind kinds[7] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD};
  for (int i = 0; i < g_nkinds; ++i) {
    cfg[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    cfg[i].kind = kinds[i];
    cfg[i].deviceId = 0;
    cfg[i].enable = 1;
  }
  return cuptiActivityConfigureUnifiedMemoryCounter(cfg, g_nkinds);
}

__global__ void touch(float* a, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] += 1.0f;
}

int main(int argc, char** argv) {
  const char* when = argc > 1 ? argv[1] : "context";  // early | context | alloc
  if (argc > 2) g_nkinds = std::atoi(argv[2]);
  const size_t mib = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
  cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  CUptiResult r;
  if (!std::strcmp(when, "early")) {
    r = Configure();
    std::printf("configure before cuInit: %s\n", Str(r));
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    std::printf("enable before cuInit: %s\n", Str(r));
  }
  cudaFree(0);
  if (!std::strcmp(when, "context")) {
    r = Configure();
    std::printf("configure after context: %s\n", Str(r));
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    std::printf("enable after context: %s\n", Str(r));
  }
  const size_t n = (mib << 20) / sizeof(float);
  float* a = nullptr;
  cudaMallocManaged(&a, n * sizeof(float));
  if (!std::strcmp(when, "alloc")) {
    r = Configure();
    std::printf("configure after cudaMallocManaged: %s\n", Str(r));
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    std::printf("enable after cudaMallocManaged: %s\n", Str(r));
  }
  int attr = -1;
  cudaDeviceGetAttribute(&attr, cudaDevAttrConcurrentManagedAccess, 0);
  std::printf("concurrentManagedAccess=%d\n", attr);
  cudaDeviceGetAttribute(&attr, cudaDevAttrPageableMemoryAccess, 0);
  std::printf("pageableMemoryAccess=%d\n", attr);
  const int flush_ms = argc > 4 ? std::atoi(argv[4]) : 0;
  const bool tools = argc > 5 && std::atoi(argv[5]) != 0;
  stepscope::UvmToolsCounters counters;
  if (tools) {
    std::string why;
    if (!counters.Open(&why)) std::printf("tools counters: %s\n", why.c_str());
    else std::printf("tools counters: open\n");
  }
  std::atomic<bool> stop{false};
  std::thread flusher;
  if (flush_ms > 0)
    flusher = std::thread([&] {
      while (!stop.load()) {
        cuptiActivityFlushAll(0);
        std::this_thread::sleep_for(std::chrono::milliseconds(flush_ms));
      }
    });
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int round = 0; round < 3; ++round) {
    const auto t0 = counters.Read();
    const unsigned long long c_h = g_bytes[1][0] + g_bytes[1][1] + g_bytes[1][2] + g_bytes[1][3] + g_bytes[1][4],
                             c_d = g_bytes[2][0] + g_bytes[2][1] + g_bytes[2][2] + g_bytes[2][3] + g_bytes[2][4];
    for (size_t i = 0; i < n; ++i) a[i] = 1.0f;
    cudaEventRecord(e0);
    touch<<<1024, 256>>>(a, n);
    cudaEventRecord(e1);
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(1);
    const auto t1 = counters.Read();
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    unsigned long long h = 0, d = 0;
    for (int c = 0; c < 8; ++c) h += g_bytes[1][c], d += g_bytes[2][c];
    std::printf("round %d: kernel %.1f ms; CUPTI HtoD %.1f MiB DtoH %.1f MiB; driver totals HtoD %.1f MiB "
                "(prefetch %.1f) DtoH %.1f MiB, CPU faults %llu, GPU faults %llu\n",
                round, ms, (h - c_h) / 1048576.0, (d - c_d) / 1048576.0,
                (t1.bytes_htod - t0.bytes_htod) / 1048576.0,
                (t1.prefetch_bytes_htod - t0.prefetch_bytes_htod) / 1048576.0,
                (t1.bytes_dtoh - t0.bytes_dtoh) / 1048576.0,
                (unsigned long long)(t1.cpu_page_faults - t0.cpu_page_faults),
                (unsigned long long)(t1.gpu_page_faults - t0.gpu_page_faults));
  }
  stop = true;
  if (flusher.joinable()) flusher.join();
  cuptiActivityFlushAll(1);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::printf("mode=%s kinds=%d mib=%zu flush_ms=%d x3 rounds: UM records=%d GPU fault records=%d other=%d dropped=%zu\n",
              when, g_nkinds, mib, flush_ms, g_records, g_faults, g_other, dropped);
  for (int d = 1; d <= 2; ++d)
    for (int c = 0; c < 8; ++c)
      if (g_bytes[d][c])
        std::printf("  %s cause %d: %.1f MiB\n", d == 1 ? "HtoD" : "DtoH", c, g_bytes[d][c] / 1048576.0);
  return 0;
}
