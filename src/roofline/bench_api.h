// The C interface of libstepscope_bench.so, the CUDA half of `stepscope
// bench`. The CLI loads it with dlopen so that the stepscope binary itself
// never needs the CUDA runtime or cuBLASLt: on a machine without them, only
// `bench` fails, with one line saying so.
//
// Plain C structs with fixed-size buffers: no C++ types cross the boundary.
// Bump kStepscopeBenchAbi when a struct changes; the CLI refuses a library of
// another ABI.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STEPSCOPE_BENCH_ABI 1
#define STEPSCOPE_BENCH_MAX_VALUES 32

struct StepscopeBenchOptions {
  int abi;     // STEPSCOPE_BENCH_ABI
  int device;  // CUDA device ordinal
  int gemm_m, gemm_n, gemm_k;
  int iterations;      // timed repetitions per measurement (median reported)
  int warmup;          // untimed repetitions before them
  int64_t dram_bytes;  // size of each buffer of the device copy
  int64_t host_bytes;  // size of the host<->device copies
  const char* only;    // comma-separated ceiling keys to measure, or NULL/"" for all
};

struct StepscopeBenchValue {
  char key[32];      // ceiling key (roofline/ceilings.h), e.g. "tensor_bf16"
  double value;      // bytes/s or FLOP/s (median)
  double min_value;  // slowest repetition
  double max_value;  // fastest repetition
  char detail[200];  // how it was measured
};

struct StepscopeBenchResult {
  char gpu_name[256];
  unsigned char uuid[16];
  int cc_major, cc_minor;
  int sm_count;
  int64_t l2_bytes;
  int count;
  struct StepscopeBenchValue values[STEPSCOPE_BENCH_MAX_VALUES];
  char notes[4096];  // measurements skipped and why, one per line
};

// Returns 0 on success, 2 when there is no usable CUDA GPU, 1 on another
// failure; `error` then holds one line.
typedef int (*StepscopeBenchRunFn)(const struct StepscopeBenchOptions* options,
                                   struct StepscopeBenchResult* result, char* error, int error_len);
int stepscope_bench_run(const struct StepscopeBenchOptions* options,
                        struct StepscopeBenchResult* result, char* error, int error_len);

#ifdef __cplusplus
}
#endif
