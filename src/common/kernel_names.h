// Kernel-name classification: what a demangled kernel name tells us. The one
// place that reads meaning into kernel names; analysis/ and ranks/ both ask it.
//
// Two definitions of a communication kernel, both on purpose:
//  * OpCategory::kCommunication (ClassifyKernelName) follows Holistic Trace
//    Analysis (HTA): a kernel of any collective library (NCCL, RCCL, NVSHMEM,
//    custom all-reduce kernels); the time breakdowns and the rules use it.
//  * IsNcclKernelName: a collective kernel NCCL itself launched
//    ("ncclDevKernel_*", "ncclKernel_*"), a subset of the above. `ranks`
//    matches these across ranks by name and order, which only NCCL's own
//    collectives allow (every rank launches the same sequence of them), and
//    leaves them out of the NVRx GPU score.
// Everything else launched as a kernel is computation; memcpy/memset
// activities are memory. GEMM detection
// and the input precision of a GEMM come from the names cuBLAS, cuBLASLt
// (nvjet), CUTLASS and the xmma kernels carry, e.g.
//   "nvjet_hsh_256x128_...", "nvjet_sm90_tst_..."  fp16 / bf16 inputs (cuBLASLt)
//   "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_..."  bf16 inputs, fp32 accumulate
//   "sm80_xmma_gemm_f32f32_f32f32_f32_nn_..."     fp32 inputs (no tensor cores)
//   "ampere_sgemm_128x64_nn", "cutlass_80_simt_sgemm_..."  fp32 SIMT GEMMs
//   "..._tf32..."                                 TF32 tensor-core GEMMs
// The precision is the *input* type: an fp32 accumulator is normal for
// bf16/fp16 GEMMs and must not count as an fp32 GEMM.
#pragma once

#include <string_view>

namespace stepscope {

enum class OpCategory : unsigned char { kCompute = 0, kCommunication = 1, kMemory = 2 };
const char* OpCategoryName(OpCategory c);

enum class GemmPrecision : unsigned char {
  kNotGemm = 0,
  kUnknown,  // a GEMM whose input type the name does not say
  kFp32,     // fp32 inputs on CUDA cores (sgemm, f32f32 xmma, simt)
  kTf32,     // fp32 data on TF32 tensor cores
  kLow,      // bf16 / fp16 / fp8 / int8 inputs on tensor cores
};
const char* GemmPrecisionName(GemmPrecision p);

struct KernelNameInfo {
  OpCategory category = OpCategory::kCompute;
  GemmPrecision gemm = GemmPrecision::kNotGemm;
};

KernelNameInfo ClassifyKernelName(std::string_view name);

// The kernel classes of MFU's per-class table (analysis/mfu.h, docs/flops.md),
// from the name alone, on top of ClassifyKernelName: communication (its
// category), GEMM (a GEMM precision), attention (FlashAttention, fmha, SDPA,
// cuDNN's sdpa/fusion kernels), optimizer (fused/multi-tensor optimizer
// kernels: "Adam", "multi_tensor_apply", "_foreach_"), and elementwise: every
// other compute kernel (elementwise, reductions, norms, softmax, copies).
// The for-loop optimizer's plain elementwise kernels are told apart by where
// they were launched (analysis/mfu.cc: inside an optimizer.step range).
enum class KernelClass : unsigned char {
  kGemm = 0,
  kAttention,
  kElementwise,
  kOptimizer,
  kCommunication,
  kCount
};
const char* KernelClassName(KernelClass c);
KernelClass ClassifyKernelClass(std::string_view name, const KernelNameInfo& info);

// True for NCCL collective kernels (names starting "ncclDevKernel_" or "ncclKernel_").
bool IsNcclKernelName(std::string_view name);

// An attention kernel (FlashAttention, fmha, SDPA) on fp32 data, which autocast
// moves to bf16 with the GEMMs: the whole (demangled) name, its template
// arguments included, names both (case-insensitive).
bool IsFp32AttentionKernelName(std::string_view name);

// A short display form of a long demangled name: drops the return type and the
// argument list, keeps the template arguments up to `max_len` characters.
std::string_view KernelBaseName(std::string_view name);

}  // namespace stepscope
