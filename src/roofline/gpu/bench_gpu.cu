// libstepscope_bench.so: measures this GPU's ceilings (see bench_api.h).
//
// Every measurement: allocate, fill with random data, run `warmup` untimed
// repetitions, then time `iterations` repetitions one by one with CUDA events
// and report the median rate (min and max too). Rates use the work each
// repetition is known to do: 2*M*N*K for a GEMM, bytes read + written for a
// device copy, bytes read for the L2 loop, 2 FLOPs per FMA.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "roofline/bench_api.h"
#include "roofline/gpu/bench_kernels.cuh"

namespace {

using namespace stepscope_gpu;

struct Failure {
  std::string message;
};

#define CUDA_OK(expr)                                                    \
  do {                                                                   \
    cudaError_t _e = (expr);                                             \
    if (_e != cudaSuccess) {                                             \
      throw Failure{std::string(#expr) + ": " + cudaGetErrorString(_e)}; \
    }                                                                    \
  } while (0)

#define LT_OK(expr)                                                                     \
  do {                                                                                  \
    cublasStatus_t _s = (expr);                                                         \
    if (_s != CUBLAS_STATUS_SUCCESS) {                                                  \
      throw Failure{std::string(#expr) + ": cublas status " + std::to_string(int(_s))}; \
    }                                                                                   \
  } while (0)

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { CUDA_OK(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Events {
  cudaEvent_t a = nullptr, b = nullptr;
  Events() {
    CUDA_OK(cudaEventCreate(&a));
    CUDA_OK(cudaEventCreate(&b));
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
};

struct Rates {
  double median = 0, min = 0, max = 0;
};

// Runs fn warmup times, then times it `iters` times; work/seconds per rep.
Rates Measure(const std::function<void()>& fn, double work, int warmup, int iters,
              cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i) fn();
  CUDA_OK(cudaStreamSynchronize(stream));
  Events ev;
  std::vector<double> rates;
  for (int i = 0; i < iters; ++i) {
    CUDA_OK(cudaEventRecord(ev.a, stream));
    fn();
    CUDA_OK(cudaEventRecord(ev.b, stream));
    CUDA_OK(cudaEventSynchronize(ev.b));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, ev.a, ev.b));
    if (ms > 0) rates.push_back(work / (ms * 1e-3));
  }
  CUDA_OK(cudaGetLastError());
  Rates r;
  if (rates.empty()) return r;
  std::sort(rates.begin(), rates.end());
  r.min = rates.front();
  r.max = rates.back();
  size_t n = rates.size();
  r.median = n % 2 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
  return r;
}

class Bench {
 public:
  Bench(const StepscopeBenchOptions& o, StepscopeBenchResult* r) : o_(o), r_(r) {}

  bool Wanted(const char* key) const {
    if (!o_.only || !*o_.only) return true;
    std::string list = std::string(",") + o_.only + ",";
    return list.find(std::string(",") + key + ",") != std::string::npos;
  }

  void Add(const char* key, const Rates& rates, const std::string& detail) {
    if (r_->count >= STEPSCOPE_BENCH_MAX_VALUES) return;
    StepscopeBenchValue& v = r_->values[r_->count++];
    std::snprintf(v.key, sizeof(v.key), "%s", key);
    v.value = rates.median;
    v.min_value = rates.min;
    v.max_value = rates.max;
    std::snprintf(v.detail, sizeof(v.detail), "%s", detail.c_str());
  }

  void Note(const std::string& line) {
    size_t used = std::strlen(r_->notes);
    std::snprintf(r_->notes + used, sizeof(r_->notes) - used, "%s\n", line.c_str());
  }

  // Runs one measurement; a failure becomes a note, not the end of the bench.
  void Try(const char* key, const std::function<void()>& fn) {
    if (!Wanted(key)) return;
    try {
      fn();
    } catch (const Failure& f) {
      Note(std::string(key) + ": skipped: " + f.message);
      cudaGetLastError();  // clear a sticky-free error so the next measurement can run
    }
  }

  void Run() {
    CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, o_.device));
    sms_ = prop.multiProcessorCount;
    l2_ = prop.l2CacheSize;
    Try("dram_bw", [&] { Dram(); });
    Try("l2_bw", [&] { L2(); });
    Try("tensor_bf16",
        [&] { Gemm("tensor_bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2); });
    Try("tensor_fp16",
        [&] { Gemm("tensor_fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2); });
    Try("tensor_tf32",
        [&] { Gemm("tensor_tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4); });
    if (prop.major * 10 + prop.minor >= 89) {
      Try("tensor_fp8",
          [&] { Gemm("tensor_fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2); });
    } else if (Wanted("tensor_fp8")) {
      Note("tensor_fp8: skipped: fp8 tensor cores need compute capability 8.9 or newer");
    }
    Try("tensor_fp64",
        [&] { Gemm("tensor_fp64", CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8); });
    Try("fp32", [&] { Fma<float>("fp32"); });
    Try("fp64", [&] { Fma<double>("fp64"); });
    Try("fp16", [&] { Hfma2(); });
    Try("h2d_pinned", [&] { HostCopy(true, true); });
    Try("d2h_pinned", [&] { HostCopy(false, true); });
    Try("h2d_pageable", [&] { HostCopy(true, false); });
    Try("d2h_pageable", [&] { HostCopy(false, false); });
    cudaStreamDestroy(stream_);
  }

 private:
  int Blocks(int per_sm) const { return sms_ * per_sm; }

  void Dram() {
    size_t bytes = static_cast<size_t>(o_.dram_bytes) & ~size_t{15};
    DeviceBuffer a(bytes), b(bytes);
    FillRandom<uint8_t><<<Blocks(8), 256, 0, stream_>>>(static_cast<uint8_t*>(a.p), bytes, 1);
    CUDA_OK(cudaGetLastError());
    double work = 2.0 * static_cast<double>(bytes);
    Rates memcpy_rate = Measure(
        [&] { CUDA_OK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, stream_)); }, work,
        o_.warmup, o_.iterations, stream_);
    Rates kernel_rate = Measure(
        [&] {
          CopyKernel<<<Blocks(16), 512, 0, stream_>>>(static_cast<const int4*>(a.p),
                                                      static_cast<int4*>(b.p), bytes / 16);
        },
        work, o_.warmup, o_.iterations, stream_);
    bool use_kernel = kernel_rate.median > memcpy_rate.median;
    char d[200];
    std::snprintf(d, sizeof(d), "%s copy of %.0f MiB, read+written; other method %.2f TB/s",
                  use_kernel ? "kernel" : "cudaMemcpy", bytes / 1048576.0,
                  (use_kernel ? memcpy_rate.median : kernel_rate.median) / 1e12);
    Add("dram_bw", use_kernel ? kernel_rate : memcpy_rate, d);
  }

  void L2() {
    // A quarter of L2: stays inside the near partition on GPUs with a split L2.
    size_t bytes = (static_cast<size_t>(l2_) / 4) & ~size_t{4095};
    if (bytes < (1u << 20)) throw Failure{"L2 size unknown"};
    DeviceBuffer buf(bytes), sink(64);
    FillRandom<uint8_t><<<Blocks(8), 256, 0, stream_>>>(static_cast<uint8_t*>(buf.p), bytes, 2);
    const int reps = 64;
    auto run = [&] {
      L2ReadKernel<<<Blocks(8), 512, 0, stream_>>>(static_cast<const int4*>(buf.p), bytes / 16,
                                                   reps, static_cast<int4*>(sink.p));
    };
    Rates r = Measure(run, static_cast<double>(bytes) * reps, o_.warmup, o_.iterations, stream_);
    char d[200];
    std::snprintf(d, sizeof(d), "%.1f MiB buffer read %d times (ld.global.cg)", bytes / 1048576.0,
                  reps);
    Add("l2_bw", r, d);
  }

  template <typename T>
  void FillMatrix(void* p, size_t n, uint64_t seed) {
    FillRandom<T><<<Blocks(8), 256, 0, stream_>>>(static_cast<T*>(p), n, seed);
    CUDA_OK(cudaGetLastError());
  }

  void FillTyped(cudaDataType t, void* p, size_t n, uint64_t seed) {
    switch (t) {
      case CUDA_R_16BF:
        FillMatrix<__nv_bfloat16>(p, n, seed);
        break;
      case CUDA_R_16F:
        FillMatrix<__half>(p, n, seed);
        break;
      case CUDA_R_32F:
        FillMatrix<float>(p, n, seed);
        break;
      case CUDA_R_64F:
        FillMatrix<double>(p, n, seed);
        break;
      case CUDA_R_8F_E4M3:
        FillMatrix<__nv_fp8_e4m3>(p, n, seed);
        break;
      default:
        throw Failure{"no fill for this type"};
    }
  }

  // D = A^T * B ("TN", the layout every tensor-core path supports, fp8 included):
  // A is K x M, B is K x N, D is M x N, all column-major.
  void Gemm(const char* key, cudaDataType ab_type, cudaDataType cd_type,
            cublasComputeType_t compute, size_t ab_size, size_t cd_size) {
    const size_t m = o_.gemm_m, n = o_.gemm_n, k = o_.gemm_k;
    cublasLtHandle_t lt = nullptr;
    LT_OK(cublasLtCreate(&lt));
    struct Cleanup {
      cublasLtHandle_t lt;
      cublasLtMatmulDesc_t op = nullptr;
      cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
      cublasLtMatmulPreference_t pref = nullptr;
      ~Cleanup() {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (c) cublasLtMatrixLayoutDestroy(c);
        if (op) cublasLtMatmulDescDestroy(op);
        cublasLtDestroy(lt);
      }
    } cl{lt};
    DeviceBuffer A(m * k * ab_size), B(k * n * ab_size), D(m * n * cd_size);
    const size_t workspace_bytes = 64u << 20;
    DeviceBuffer W(workspace_bytes);
    FillTyped(ab_type, A.p, m * k, 11);
    FillTyped(ab_type, B.p, k * n, 12);
    cudaDataType scale_type = compute == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
    LT_OK(cublasLtMatmulDescCreate(&cl.op, compute, scale_type));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_OK(cublasLtMatmulDescSetAttribute(cl.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    LT_OK(cublasLtMatmulDescSetAttribute(cl.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    LT_OK(cublasLtMatrixLayoutCreate(&cl.a, ab_type, k, m, k));
    LT_OK(cublasLtMatrixLayoutCreate(&cl.b, ab_type, k, n, k));
    LT_OK(cublasLtMatrixLayoutCreate(&cl.c, cd_type, m, n, m));
    LT_OK(cublasLtMatmulPreferenceCreate(&cl.pref));
    LT_OK(cublasLtMatmulPreferenceSetAttribute(cl.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &workspace_bytes, sizeof(workspace_bytes)));
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    LT_OK(cublasLtMatmulAlgoGetHeuristic(lt, cl.op, cl.a, cl.b, cl.c, cl.c, cl.pref, 1, &heur,
                                         &found));
    if (found == 0) throw Failure{"cuBLASLt has no algorithm for this type on this GPU"};
    double alpha64 = 1, beta64 = 0;
    float alpha32 = 1, beta32 = 0;
    const void* alpha = scale_type == CUDA_R_64F ? static_cast<const void*>(&alpha64) : &alpha32;
    const void* beta = scale_type == CUDA_R_64F ? static_cast<const void*>(&beta64) : &beta32;
    auto run = [&] {
      LT_OK(cublasLtMatmul(lt, cl.op, alpha, A.p, cl.a, B.p, cl.b, beta, D.p, cl.c, D.p, cl.c,
                           &heur.algo, W.p, workspace_bytes, stream_));
    };
    Rates r = Measure(run, 2.0 * m * n * k, o_.warmup, o_.iterations, stream_);
    char d[200];
    std::snprintf(d, sizeof(d), "cuBLASLt %zux%zux%zu (M,N,K) TN, random data, median of %d", m, n,
                  k, o_.iterations);
    Add(key, r, d);
  }

  template <typename T>
  void Fma(const char* key) {
    DeviceBuffer sink(64);
    const int iters = sizeof(T) == 8 ? 8192 : 16384;
    const int blocks = Blocks(8), threads = 256;
    auto run = [&] {
      FmaKernel<T><<<blocks, threads, 0, stream_>>>(static_cast<T>(1e-3), static_cast<T>(0.999),
                                                    iters, static_cast<T*>(sink.p));
    };
    double flops = 2.0 * 8 * iters * static_cast<double>(blocks) * threads;
    Rates r = Measure(run, flops, o_.warmup, o_.iterations, stream_);
    char d[200];
    std::snprintf(d, sizeof(d), "%s FMA kernel, %d blocks x %d threads x 8 chains x %d", key,
                  blocks, threads, iters);
    Add(key, r, d);
  }

  void Hfma2() {
    DeviceBuffer sink(64);
    const int iters = 16384, blocks = Blocks(8), threads = 256;
    auto run = [&] {
      Hfma2Kernel<<<blocks, threads, 0, stream_>>>(1e-3f, 0.999f, iters,
                                                   static_cast<__half2*>(sink.p));
    };
    // Counted like sm__sass_thread_inst_executed_op_hfma_pred_on (one per HFMA2
    // thread instruction) times 2, so that kernels' fp16 FLOPs compare with it.
    double flops = 2.0 * 8 * iters * static_cast<double>(blocks) * threads;
    Rates r = Measure(run, flops, o_.warmup, o_.iterations, stream_);
    Add("fp16", r, "HFMA2 kernel, 2 FLOPs per HFMA2 thread instruction (the counters' convention)");
  }

  void HostCopy(bool h2d, bool pinned) {
    size_t bytes = static_cast<size_t>(o_.host_bytes);
    DeviceBuffer dev(bytes);
    void* host = nullptr;
    if (pinned) {
      CUDA_OK(cudaMallocHost(&host, bytes));
    } else {
      host = std::malloc(bytes);
      if (!host) throw Failure{"out of host memory"};
    }
    std::memset(host, 1, bytes);  // touch every page
    auto free_host = [&] {
      if (pinned) {
        cudaFreeHost(host);
      } else {
        std::free(host);
      }
    };
    // Pageable copies go through the driver's staging buffer; the call is the
    // same, the memory kind decides the path.
    auto run = [&] {
      CUDA_OK(cudaMemcpyAsync(h2d ? dev.p : host, h2d ? host : dev.p, bytes,
                              h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream_));
    };
    int iters = std::max(3, o_.iterations / 2);
    Rates r;
    try {
      r = Measure(run, static_cast<double>(bytes), std::min(o_.warmup, 2), iters, stream_);
    } catch (...) {
      free_host();
      throw;
    }
    free_host();
    char d[200];
    std::snprintf(d, sizeof(d), "%s %.0f MiB, %s memory, median of %d",
                  h2d ? "host->device" : "device->host", bytes / 1048576.0,
                  pinned ? "cudaMallocHost" : "malloc (pageable)", iters);
    Add(h2d ? (pinned ? "h2d_pinned" : "h2d_pageable") : (pinned ? "d2h_pinned" : "d2h_pageable"),
        r, d);
  }

  StepscopeBenchOptions o_;
  StepscopeBenchResult* r_;
  cudaStream_t stream_ = nullptr;
  int sms_ = 1;
  int l2_ = 0;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) int stepscope_bench_run(
    const StepscopeBenchOptions* o, StepscopeBenchResult* r, char* error, int error_len) {
  auto fail = [&](int rc, const std::string& m) {
    std::snprintf(error, static_cast<size_t>(error_len), "%s", m.c_str());
    return rc;
  };
  if (!o || !r || o->abi != STEPSCOPE_BENCH_ABI) return fail(1, "bench library ABI mismatch");
  std::memset(r, 0, sizeof(*r));
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    return fail(2, std::string("no usable CUDA GPU: ") +
                       (e != cudaSuccess ? cudaGetErrorString(e) : "no devices"));
  }
  if (o->device < 0 || o->device >= n) {
    return fail(2, "no CUDA device " + std::to_string(o->device) + " (this machine has " +
                       std::to_string(n) + ")");
  }
  try {
    CUDA_OK(cudaSetDevice(o->device));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, o->device));
    std::snprintf(r->gpu_name, sizeof(r->gpu_name), "%s", prop.name);
    std::memcpy(r->uuid, prop.uuid.bytes, 16);
    r->cc_major = prop.major;
    r->cc_minor = prop.minor;
    r->sm_count = prop.multiProcessorCount;
    r->l2_bytes = prop.l2CacheSize;
    Bench b(*o, r);
    b.Run();
  } catch (const Failure& f) {
    return fail(1, f.message);
  }
  return 0;
}
