#include "common/kernel_names.h"

#include <cctype>
#include <initializer_list>
#include <string>

#include "common/strings.h"

namespace stepscope {
namespace {

bool Contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Precision of an xmma/cutlass name "..._gemm_<A><B>_<C><Acc>_...": the first
// type token after "gemm_" names the inputs.
GemmPrecision PrecisionAfter(std::string_view s, size_t pos) {
  std::string_view t = s.substr(pos);
  if (t.substr(0, 4) == "tf32") return GemmPrecision::kTf32;
  if (t.substr(0, 6) == "f32f32" || t.substr(0, 4) == "f32_" || t.substr(0, 6) == "s1688f") {
    return GemmPrecision::kFp32;
  }
  for (std::string_view low : {"bf16", "f16", "h16", "e4m3", "e5m2", "fp8", "i8", "s8", "hmma"}) {
    if (t.substr(0, low.size()) == low) return GemmPrecision::kLow;
  }
  return GemmPrecision::kUnknown;
}

}  // namespace

const char* OpCategoryName(OpCategory c) {
  switch (c) {
    case OpCategory::kCompute:
      return "compute";
    case OpCategory::kCommunication:
      return "communication";
    case OpCategory::kMemory:
      return "memory";
  }
  return "compute";
}

const char* GemmPrecisionName(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kNotGemm:
      return "";
    case GemmPrecision::kUnknown:
      return "unknown";
    case GemmPrecision::kFp32:
      return "fp32";
    case GemmPrecision::kTf32:
      return "tf32";
    case GemmPrecision::kLow:
      return "16-bit/8-bit";
  }
  return "";
}

KernelNameInfo ClassifyKernelName(std::string_view name) {
  KernelNameInfo info;
  const std::string l = Lower(KernelBaseName(name));
  const std::string full = Lower(name);
  if (Contains(l, "nccl") || Contains(l, "rccl") || Contains(l, "allreduce") ||
      Contains(l, "all_reduce") || Contains(l, "allgather") || Contains(l, "reducescatter") ||
      Contains(l, "cross_device_reduce") || Contains(l, "nvshmem")) {
    info.category = OpCategory::kCommunication;
    return info;
  }
  // cuBLASLt's nvjet kernels: "nvjet_[smXX_]<A><C><D>_...", one letter per
  // type (A = inputs): h = fp16, t = bf16, s = fp32, e/q = fp8, i = int8.
  // Seen on H200 with CUDA 13: bf16 autocast GEMMs are "nvjet_sm90_tst_...".
  if (l.rfind("nvjet_", 0) == 0) {
    std::string_view t = std::string_view(l).substr(6);
    if (t.size() > 2 && t[0] == 's' && t[1] == 'm' &&
        std::isdigit(static_cast<unsigned char>(t[2]))) {
      const size_t u = t.find('_');
      t = u == std::string_view::npos ? std::string_view() : t.substr(u + 1);
    }
    const char a = t.empty() ? '\0' : t[0];
    info.gemm = a == 's' ? GemmPrecision::kFp32
                : (a == 'h' || a == 't' || a == 'b' || a == 'q' || a == 'e' || a == 'i')
                    ? GemmPrecision::kLow
                    : GemmPrecision::kUnknown;
    return info;
  }
  const bool gemm = Contains(l, "gemm") || Contains(l, "gemv") || Contains(l, "matmul") ||
                    Contains(l, "cutlass") || Contains(l, "xmma") || Contains(l, "s884") ||
                    Contains(l, "h884") || Contains(l, "s1688") || Contains(l, "h1688") ||
                    Contains(l, "s16816") || Contains(l, "h16816");
  if (!gemm) return info;
  // Attention and other fused kernels built on CUTLASS are not GEMM calls.
  if (Contains(l, "flash") || Contains(l, "fmha") || Contains(l, "attention") ||
      Contains(l, "softmax")) {
    return info;
  }
  info.gemm = GemmPrecision::kUnknown;
  if (Contains(l, "tf32") || Contains(l, "tensorop_s1688gemm")) {
    // Ampere's "tensorop_s1688gemm" kernels run fp32 data as TF32.
    info.gemm = GemmPrecision::kTf32;
  } else if (Contains(l, "sgemm") || Contains(l, "dgemm")) {
    info.gemm = GemmPrecision::kFp32;
  } else if (Contains(l, "hgemm") || Contains(l, "bf16") || Contains(l, "f16") ||
             Contains(l, "h884") || Contains(l, "h1688") || Contains(l, "h16816") ||
             Contains(l, "e4m3") || Contains(l, "fp8") || Contains(l, "int8") ||
             Contains(l, "imma") || Contains(l, "hmma")) {
    // Mixed names such as "xmma_gemm_f32f32_..." are handled below first.
    size_t g = l.find("gemm_");
    GemmPrecision p = g == std::string::npos ? GemmPrecision::kLow : PrecisionAfter(l, g + 5);
    info.gemm = p == GemmPrecision::kUnknown ? GemmPrecision::kLow : p;
  } else {
    size_t g = l.find("gemm_");
    if (g != std::string::npos) info.gemm = PrecisionAfter(l, g + 5);
    // cuBLAS templated kernels with the element type in the arguments,
    // e.g. "void gemv2T_kernel_val<int, int, float, float, ...>".
    if (info.gemm == GemmPrecision::kUnknown && Contains(full, "<float") &&
        !Contains(full, "bfloat16") && !Contains(full, "half")) {
      info.gemm = GemmPrecision::kFp32;
    }
  }
  return info;
}

const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kAttention:
      return "attention";
    case KernelClass::kElementwise:
      return "elementwise";
    case KernelClass::kOptimizer:
      return "optimizer";
    case KernelClass::kCommunication:
      return "communication";
    case KernelClass::kCount:
      break;
  }
  return "elementwise";
}

KernelClass ClassifyKernelClass(std::string_view name, const KernelNameInfo& info) {
  if (info.category == OpCategory::kCommunication) return KernelClass::kCommunication;
  if (info.gemm != GemmPrecision::kNotGemm) return KernelClass::kGemm;
  const std::string l = Lower(KernelBaseName(name));
  if (Contains(l, "flash") || Contains(l, "fmha") || Contains(l, "attention") ||
      Contains(l, "sdpa") || Contains(l, "cudnn::fusion")) {
    return KernelClass::kAttention;
  }
  const std::string full = Lower(name.substr(0, 4096));
  if (Contains(full, "adam") || Contains(full, "multi_tensor_apply") ||
      Contains(full, "_foreach_") || Contains(full, "sgd") || Contains(full, "lamb_")) {
    return KernelClass::kOptimizer;
  }
  return KernelClass::kElementwise;
}

bool IsNcclKernelName(std::string_view name) {
  return StartsWith(name, "ncclDevKernel_") || StartsWith(name, "ncclKernel_");
}

// Plain substring tests: kernel names are untrusted input (no regex on them).
bool IsFp32AttentionKernelName(std::string_view name) {
  const std::string l = Lower(name);
  const auto any_of = [&](std::initializer_list<std::string_view> words) {
    for (std::string_view w : words) {
      if (Contains(l, w)) return true;
    }
    return false;
  };
  return any_of({"fmha", "flash", "attention", "sdpa"}) && any_of({"f32", "float"});
}

std::string_view KernelBaseName(std::string_view name) {
  // "void ns::kernel<...>(args)" -> "ns::kernel<...>"
  std::string_view s = name;
  if (s.rfind("void ", 0) == 0) s.remove_prefix(5);
  // Cut the argument list: the last '(' at template depth 0.
  int depth = 0;
  size_t cut = s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0 && i > 0) {
      // "(anonymous namespace)" is part of the name, not an argument list.
      if (s.substr(i, 21) == "(anonymous namespace)") {
        i += 20;
        continue;
      }
      cut = i;
      break;
    }
  }
  return s.substr(0, cut);
}

}  // namespace stepscope
