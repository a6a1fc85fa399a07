// Runs the GPU half of `stepscope bench` (libstepscope_bench.so, loaded with
// dlopen) and turns its result into Ceilings.
#pragma once

#include <string>

#include "common/status.h"
#include "roofline/ceilings.h"

namespace stepscope {

struct BenchOptions {
  int device = 0;
  int gemm_m = 8192, gemm_n = 8192, gemm_k = 8192;
  int iterations = 20;
  int warmup = 5;
  int64_t dram_bytes = int64_t{1} << 30;
  int64_t host_bytes = int64_t{256} << 20;
  std::string only;  // comma-separated ceiling keys; "" = all
};

// Where the library is looked for: $STEPSCOPE_BENCH_LIB, then
// <dir of the stepscope binary>/../lib/libstepscope_bench.so.
std::string BenchLibraryPath();

// kUnavailable when the library or the CUDA runtime cannot be loaded or there
// is no GPU (the message says which); `notes` gets the skipped measurements.
StatusOr<Ceilings> MeasureCeilings(const BenchOptions& o, std::string* notes);

// Current UTC time, ISO 8601 ("2025-01-31T12:00:00Z").
std::string UtcNowIso();

}  // namespace stepscope
