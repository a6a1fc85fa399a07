#include "analysis/model/machine_constants.h"

#include <algorithm>
#include <cctype>

namespace stepscope {
namespace {

// Name tokens that pick a row of GpuModels(), most specific first (a GH200's
// name contains "h200"; an H100 PCIe's contains "h100"). Matched on the name
// lowercased, '-' and '_' read as spaces.
struct ModelMatch {
  const char* tokens[2];
  const char* model;
};
constexpr ModelMatch kMatches[] = {
    {{"gh200", nullptr}, "GH200"},   {{"h200", "nvl"}, "H200 NVL"},
    {{"h200", nullptr}, "H200 SXM"}, {{"h100", "nvl"}, "H100 NVL"},
    {{"h100", "pcie"}, "H100 PCIe"}, {{"h100", nullptr}, "H100 SXM"},
    {{"a100", "pcie"}, "A100 PCIe"}, {{"a100", nullptr}, "A100 SXM"},
};

std::string Normalized(std::string_view name) {
  std::string s(name.substr(0, 256));
  for (char& ch : s) {
    ch = ch == '-' || ch == '_' ? ' '
                                : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return s;
}

// The table's value of a key for a model (0: no figure).
double TableValue(const GpuModel& g, std::string_view key) {
  if (key == "fp32") return g.fp32;
  if (key == "tensor_tf32") return g.tf32;
  if (key == "tensor_bf16") return g.bf16;
  const HostLink* l = g.link ? FindHostLink(g.link) : nullptr;
  if (!l) return 0;
  if (key == "h2d_pinned") return l->h2d_pinned;
  if (key == "d2h_pinned") return l->d2h_pinned;
  if (key == "h2d_pageable") return l->h2d_pageable;
  if (key == "d2h_pageable") return l->d2h_pageable;
  return 0;
}

}  // namespace

const std::vector<HostLink>& HostLinks() {
  // bytes/s: H2D pinned, D2H pinned, H2D pageable, D2H pageable.
  static const std::vector<HostLink> links = {
      // An x86 host with an H100 over PCIe Gen5 x16: the reference figures
      // `stepscope bench` prints beside its own (docs/roofline.md); the lent
      // H100 host of 2026-11-27 showed the same ~6-7x pinned/pageable ratio
      // (issue 32).
      {"x86+H100", 55.67e9, 54.42e9, 9.5e9, 14.5e9,
       "stepscope's x86 + H100 PCIe Gen5 reference figures, docs/roofline.md"},
      // `stepscope bench` on a lent x86 H200 host, 2026-11-21
      // (docs/PERFORMANCE.md, "GPU ceilings").
      {"x86+H200", 55.5e9, 55.4e9, 10.8e9, 19.9e9,
       "stepscope bench on a lent x86 H200 host, 2026-11-21, docs/PERFORMANCE.md"},
      // Grace Hopper over NVLink-C2C: pageable memory is as fast as pinned
      // (the GPU reads the CPU's page tables); docs/roofline.md, docs/um.md.
      {"GH200 C2C", 381.7e9, 297.7e9, 381.0e9, 295.8e9,
       "published NVLink-C2C figures, docs/roofline.md and docs/um.md"},
      // PCIe Gen4 x16: 64 GB/s both directions together (NVIDIA A100
      // datasheet), 32 GB/s each: the link's rate, an upper bound for
      // pinned copies; no pageable figure.
      {"x86+A100", 32e9, 32e9, 0, 0, "PCIe Gen4 x16 link rate, NVIDIA A100 datasheet"},
  };
  return links;
}

const HostLink* FindHostLink(std::string_view name) {
  for (const HostLink& l : HostLinks()) {
    if (name == l.name) return &l;
  }
  return nullptr;
}

const std::vector<GpuModel>& GpuModels() {
  // Dense peak rates (the datasheets give tensor rates with 2:4 sparsity,
  // twice the dense ones): fp32 on CUDA cores, TF32 and BF16 tensor cores.
  //   H100: https://www.nvidia.com/en-us/data-center/h100/ (SXM 67 / 989* /
  //         1,979*; PCIe 51 / 756* / 1,513*; NVL 60 / 835* / 1,671* TFLOPS)
  //   H200: https://www.nvidia.com/en-us/data-center/h200/ (SXM 67 / 989* /
  //         1,979*; NVL 60 / 835* / 1,671*)
  //   GH200: https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/
  //         (67 / 494 / 990 dense)
  //   A100: https://www.nvidia.com/en-us/data-center/a100/ (19.5 / 156 / 312,
  //         SXM and PCIe alike)
  static const char* const kH100 = "NVIDIA H100 datasheet";
  static const char* const kH200 = "NVIDIA H200 datasheet";
  static const std::vector<GpuModel> models = {
      {"H100 SXM", 67e12, 494.5e12, 989.5e12, kH100, "x86+H100"},
      {"H100 PCIe", 51e12, 378e12, 756.5e12, kH100, "x86+H100"},
      {"H100 NVL", 60e12, 417.5e12, 835.5e12, kH100, "x86+H100"},
      {"H200 SXM", 67e12, 494.5e12, 989.5e12, kH200, "x86+H200"},
      {"H200 NVL", 60e12, 417.5e12, 835.5e12, kH200, "x86+H200"},
      {"GH200", 67e12, 494e12, 990e12, "NVIDIA GH200 datasheet", "GH200 C2C"},
      {"A100 SXM", 19.5e12, 156e12, 312e12, "NVIDIA A100 datasheet", "x86+A100"},
      {"A100 PCIe", 19.5e12, 156e12, 312e12, "NVIDIA A100 datasheet", "x86+A100"},
  };
  return models;
}

const GpuModel* FindGpuModel(std::string_view gpu_name) {
  const std::string n = Normalized(gpu_name);
  for (const ModelMatch& mm : kMatches) {
    bool all = true;
    for (const char* t : mm.tokens) all = all && (!t || n.find(t) != std::string::npos);
    if (!all) continue;
    for (const GpuModel& g : GpuModels()) {
      if (std::string_view(g.model) == mm.model) return &g;
    }
  }
  return nullptr;
}

MachineConstants::MachineConstants(std::string gpu_name, const BenchResults* bench)
    : gpu_name_(std::move(gpu_name)), model_(FindGpuModel(gpu_name_)) {
  if (bench) {
    has_bench_ = true;
    bench_ = *bench;
  }
}

MachineValue MachineConstants::Get(std::string_view key) const {
  MachineValue v;
  if (has_bench_) {
    auto it = bench_.values.find(std::string(key));
    if (it != bench_.values.end() && it->second > 0) {
      v.value = it->second;
      v.bench = true;
      v.source = "bench results of " + (bench_.host.empty() ? std::string() : bench_.host + " ") +
                 bench_.measured_at.substr(0, 10);
      return v;
    }
  }
  if (model_) {
    v.value = TableValue(*model_, key);
    if (v.value > 0) v.source = std::string(model_->model) + " table";
  }
  return v;
}

std::string MachineConstants::SourceOf(const std::vector<std::string_view>& keys) const {
  std::vector<std::string> seen;
  for (std::string_view k : keys) {
    const MachineValue v = Get(k);
    if (v.known() && std::find(seen.begin(), seen.end(), v.source) == seen.end())
      seen.push_back(v.source);
  }
  std::string s;
  for (size_t i = 0; i < seen.size(); ++i) s += (i ? " and " : "") + seen[i];
  return s;
}

std::string MachineConstants::Unknown(std::string_view key) const {
  if (gpu_name_.empty()) return "the trace does not name the GPU (no devices row)";
  if (!model_) {
    return "GPU '" + gpu_name_.substr(0, 80) +
           "' is not in the table of GPU models and this machine has no stepscope bench "
           "results for it (run stepscope bench on it)";
  }
  return std::string(model_->model) + " table has no " + std::string(key) +
         " figure and this machine has no stepscope bench results for it (run stepscope bench "
         "on it)";
}

}  // namespace stepscope
