// Unified-memory analysis shared by the um_* recipes and the um_faults rule
// (docs/um.md).
//
// Fault-driven migration: a kernel (or the CPU) touches managed pages that
// live on the other side; the GPU stalls while the driver services the fault
// group and migrates the pages. Evidence, per kernel: the GPU fault groups
// (um.kind = gpu_page_fault, recorded with --trace um-gpu-faults) whose
// [start, end] overlaps the kernel, else the driver's GPU-fault totals
// (driver_gpu_faults, recorded by default: faults serviced per ~1 ms poll)
// overlapping it, else the host->device migrations that faults caused (cause
// coherence, and the driver's speculative prefetch of the neighbouring pages;
// CUPTI's records, --trace ...,um-migrations) that overlap it. The union of
// the fault groups clipped to the kernel, groups less than 200 us apart
// merged (the replay latency between batches; without them: the span from the
// first to the last fault-driven migration in it) is the kernel's **recorded
// stall**.
//
// What a prefetch before the kernel removes (its **fault-stalled time**):
//   * when the trace has runs of the same kernel (name, grid, block) with no
//     fault evidence, the kernel's time beyond the median of those runs (the
//     data was resident there). This wins over the evidence: a kernel that
//     computes while its faults are served (lent H200, um_touch --work 30000:
//     fault groups over 94% of an 86 ms kernel that takes 79 ms resident)
//     stalls far less than its fault groups span;
//   * else the kernel's whole time: before its first record, between its
//     records and after its last one it is the same fault storm, unrecorded.
//     CUPTI's records of a fault storm stop before the kernel ends (lent H100
//     and H200, 2026-11-24: the last migration record 18-39 ms before the end
//     of 64-82 ms kernels, 0 records reported dropped; a prefetched run of the
//     same kernel takes 0.2 ms), so the records' end is not the faults' end.
//     This is an upper bound: exact for a kernel whose time is the faults
//     (um_touch: within 1%), far too high for one that computes meanwhile
//     (um_touch --work 30000: 265 ms predicted, 21 ms measured). The finding
//     says which kernels had no fault-free run.
// Its host->device bytes: the driver's host->device totals over the kernel
// (each poll interval's bytes prorated by its overlap with the kernel), which
// are complete. Without them (an older driver, or STEPSCOPE_UM_DRIVER=off):
// CUPTI's recorded ones, plus, past the last migration record, the recorded
// migrations' rate over their span continued to the end of the kernel
// (without a fault-free run only, and when the records span at least a tenth
// of the kernel).
//
// Pricing (the what-if of a bulk cudaMemPrefetchAsync): the same bytes moved
// as one prefetch at the link's bandwidth. saving = fault-stalled time
// - bytes / bandwidth, never below 0. The bandwidth: bytes / copy time of the
// trace's user-prefetch migrations when there are any; else the host<->device
// ceiling of `stepscope bench` (h2d_pinned) when the caller has it; else the
// speed of the trace's large migrations (>= 256 KiB, either direction: one
// record is one copy on the link, and large ones run near its speed); else of
// all migrations of that direction; else of the trace's explicit pinned copies
// of that direction (>= 256 KiB: the same link); else the published figure of
// this GPU's host link (the CLI passes it by GPU name: x86 + H100 PCIe Gen5
// 55.7 / 54.4 GB/s, Grace Hopper NVLink-C2C 381.7 / 297.7 GB/s); else 0 (no
// pricing).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/trace_model.h"

namespace stepscope {

struct UmKernelStall {
  uint32_t op = kNone;               // index into gpu_ops()
  int64_t stalled_ns = 0;            // fault-stalled time: what a prefetch removes
  int64_t recorded_ns = 0;           // kernel time overlapped by fault groups / fault migrations
  int64_t resident_ns = -1;          // median fault-free run of the same kernel (-1: none)
  uint64_t htod_bytes = 0;           // host->device bytes of the stall (recorded, extrapolated)
  uint64_t htod_bytes_recorded = 0;  // fault-driven host->device bytes recorded during it
  int64_t fault_groups = 0;          // GPU fault groups overlapping the kernel
  int64_t faults = 0;                // faults in those groups
};

struct UmCpuBurst {
  // first to last fault-driven device->host migration (from the driver's
  // totals: the poll intervals that saw CPU faults and device->host bytes)
  int64_t start_ns = 0, end_ns = 0;
  uint64_t dtoh_bytes = 0;
  int64_t migrations = 0;
};

// Where a prefetch's bandwidth comes from (first that has a number, in this
// order; see "Pricing" above).
enum class UmBandwidthSource {
  kNone,
  kPrefetches,
  kBench,
  kLargeMigrations,
  kMigrations,
  kCopies,
  kPublished
};
const char* UmBandwidthSourceText(UmBandwidthSource s);

struct UmAnalysis {
  bool has_gpu_faults = false;         // the trace holds GPU fault-group records
  bool has_driver_totals = false;      // the trace holds the driver's totals (driver_*)
  std::vector<UmKernelStall> kernels;  // kernels with stalled_ns > 0, in gpu_ops() order
  std::vector<UmCpuBurst> cpu_bursts;  // fault-driven D->H bursts while no kernel ran
  double htod_bytes_per_ns = 0;        // the prefetch's bandwidth (0: unknown)
  double dtoh_bytes_per_ns = 0;
  UmBandwidthSource htod_bw_source = UmBandwidthSource::kNone;
  UmBandwidthSource dtoh_bw_source = UmBandwidthSource::kNone;
};

// A migration kind (HtoD, DtoH, DtoD).
inline bool IsUmMigration(UmCounterKind k) {
  return k == UmCounterKind::kBytesHtoD || k == UmCounterKind::kBytesDtoH ||
         k == UmCounterKind::kBytesDtoD;
}

// link_bytes_per_ns: the host<->device ceilings of `stepscope bench`
// (h2d_pinned, d2h_pinned; 0: not known); published_bytes_per_ns: the
// published figures of the GPU's host link (the last resort, see above).
UmAnalysis AnalyzeUm(const TraceModel& m, int device, double h2d_link_bytes_per_ns = 0,
                     double d2h_link_bytes_per_ns = 0, double h2d_published_bytes_per_ns = 0,
                     double d2h_published_bytes_per_ns = 0);

// Saving of a bulk prefetch of `bytes` in place of `stalled_ns` of faulting.
int64_t UmPrefetchSaving(int64_t stalled_ns, uint64_t bytes, double bytes_per_ns);

}  // namespace stepscope
