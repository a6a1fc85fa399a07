// Standalone probe: can CUPTI unified-memory counters be enabled on this
// machine at all, independently of stepscope's tracer? Configures the UM
// counters (HtoD, DtoH, GPU page faults) at three moments (before cuInit, after
// the primary context exists, after a managed allocation), enables the
// activity kind, touches 64 MiB of managed memory from CPU and GPU and counts
// the records. Prints each CUPTI result code. (docs/um.md, issue 15.)
//
// Build: nvcc -O2 -o um_probe tests/gpu/um_probe.cu -lcupti
// Run:   um_probe early|context|alloc [KINDS 2|3|7] [MIB]   (three CPU/GPU touch rounds)
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < n; ++i) a[i] = 1.0f;
    touch<<<1024, 256>>>(a, n);
    cudaDeviceSynchronize();
  }
  cuptiActivityFlushAll(1);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::printf("mode=%s kinds=%d mib=%zu x3 rounds: UM records=%d GPU fault records=%d other=%d dropped=%zu\n",
              when, g_nkinds, mib, g_records, g_faults, g_other, dropped);
  for (int d = 1; d <= 2; ++d)
    for (int c = 0; c < 8; ++c)
      if (g_bytes[d][c])
        std::printf("  %s cause %d: %.1f MiB\n", d == 1 ? "HtoD" : "DtoH", c, g_bytes[d][c] / 1048576.0);
  return 0;
}
