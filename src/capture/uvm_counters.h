// Unified-memory totals straight from the nvidia-uvm driver's tools interface
// (/dev/nvidia-uvm-tools), a second source beside CUPTI's UNIFIED_MEMORY_COUNTER
// records (docs/um.md "Totals from the driver").
//
// Why: under a fault storm CUPTI's per-migration records stop part-way through
// the kernel (lent H100/H200, driver 580: 112-194 of 256 MiB host->device per
// round, 0 records reported dropped). The driver's event queue that CUPTI
// drains has a fixed size and drops what does not fit. A *counter* tracker of
// the same interface is a set of 64-bit totals in a page of our memory that the
// driver adds to atomically at every migration and fault: nothing to drain,
// nothing dropped. Sampling it gives exact bytes per interval.
//
// The ABI used here (ioctl numbers 56 and 60 on /dev/nvidia-uvm-tools, the
// parameter layouts, counter indices) is the one the open nvidia-uvm module
// (NVIDIA/open-gpu-kernel-modules, kernel-open/nvidia-uvm/uvm_ioctl.h and
// uvm_types.h, MIT licensed) publishes; the structures are written here from
// those facts. Everything is best effort: any failure leaves the counters off
// with a reason, and the program is never touched.
//
// The tools fd is used only during Open(): the counters are updated through
// pinned memory, so a program that later closes every fd (daemon clean-up) and
// reuses the number cannot be written to by us. The fd is never closed by us
// (closing it would stop the counters); the process's exit closes it.
#pragma once

#include <cstdint>
#include <string>

namespace stepscope {

struct UvmTotals {
  uint64_t bytes_htod = 0;       // all host->device migrations (faults, prefetches)
  uint64_t bytes_dtoh = 0;       // all device->host migrations
  uint64_t cpu_page_faults = 0;  // CPU faults on managed memory
  uint64_t prefetch_bytes_htod =
      0;  // of bytes_htod: moved by cudaMemPrefetchAsync / driver prefetch
  uint64_t prefetch_bytes_dtoh = 0;  // of bytes_dtoh: the same, device->host
  uint64_t gpu_page_faults = 0;      // GPU faults serviced
  bool operator==(const UvmTotals&) const = default;
};

class UvmToolsCounters {
 public:
  // Opens a counter tracker over this process's unified-memory address space
  // (all processors). Needs a CUDA context (the driver's /dev/nvidia-uvm fd).
  // Returns false with *why on any failure.
  bool Open(std::string* why);
  bool is_open() const { return counters_ != nullptr; }
  // Relaxed atomic loads of the driver-updated totals.
  UvmTotals Read() const;

 private:
  uint64_t* counters_ = nullptr;  // one page, pinned by the driver
};

}  // namespace stepscope
