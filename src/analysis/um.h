// Unified-memory analysis shared by the um_* recipes and the um_faults rule
// (docs/um.md).
//
// Fault-driven migration: a kernel (or the CPU) touches managed pages that
// live on the other side; the GPU stalls while the driver services the fault
// group and migrates the pages. Evidence, per kernel: the GPU fault groups
// (um.kind = gpu_page_fault, recorded with --trace um-gpu-faults) whose
// [start, end] overlaps the kernel, else the host->device migrations that
// faults caused (cause coherence, and the driver's speculative prefetch of the
// neighbouring pages) that overlap it (recorded by default). The union of
// the fault groups clipped to the kernel, groups less than 200 us apart
// merged (the replay latency between batches; without them: the span from the
// first to the last fault-driven migration in it) is the kernel's
// **fault-stalled time**: what a prefetch before the kernel would remove.
//
// Pricing (the what-if of a bulk cudaMemPrefetchAsync): the same bytes moved
// as one prefetch at the measured migration bandwidth. saving = stalled time
// - bytes / bandwidth, never below 0. The bandwidth is measured in the trace:
// bytes / copy time of the user-prefetch migrations when there are any, else
// of all migrations of that direction (each migration record is one copy of
// a page group on the link: its bytes / duration is the link's speed, not the
// fault latency), else 0 (no pricing). When src/analysis/whatif/ gains a
// "prefetch" scenario, um_faults should ask it for this number instead; the
// formula here is the one to keep it honest against.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/trace_model.h"

namespace stepscope {

struct UmKernelStall {
  uint32_t op = kNone;       // index into gpu_ops()
  int64_t stalled_ns = 0;    // kernel time overlapped by fault groups / fault migrations
  uint64_t htod_bytes = 0;   // fault-driven host->device bytes during the kernel
  int64_t fault_groups = 0;  // GPU fault groups overlapping the kernel
  int64_t faults = 0;        // faults in those groups
};

struct UmCpuBurst {
  int64_t start_ns = 0, end_ns = 0;  // first to last fault-driven device->host migration
  uint64_t dtoh_bytes = 0;
  int64_t migrations = 0;
};

struct UmAnalysis {
  bool has_gpu_faults = false;         // the trace holds GPU fault-group records
  std::vector<UmKernelStall> kernels;  // kernels with stalled_ns > 0, in gpu_ops() order
  std::vector<UmCpuBurst> cpu_bursts;  // fault-driven D->H bursts while no kernel ran
  double htod_bytes_per_ns = 0;        // measured migration bandwidth (0: unknown)
  double dtoh_bytes_per_ns = 0;
  bool htod_bw_from_prefetch = false;  // measured on user prefetches
};

// A migration kind (HtoD, DtoH, DtoD).
inline bool IsUmMigration(UmCounterKind k) {
  return k == UmCounterKind::kBytesHtoD || k == UmCounterKind::kBytesDtoH ||
         k == UmCounterKind::kBytesDtoD;
}

UmAnalysis AnalyzeUm(const TraceModel& m, int device);

// Saving of a bulk prefetch of `bytes` in place of `stalled_ns` of faulting.
int64_t UmPrefetchSaving(int64_t stalled_ns, uint64_t bytes, double bytes_per_ns);

}  // namespace stepscope
