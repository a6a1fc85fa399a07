// The machine constants the rules price their fixes with (docs/rules.md,
// "Machine constants"): GEMM ceilings (fp32_gemm), host<->device copy
// bandwidths, pinned and pageable (pageable_memcpy, um_faults). One answer
// to "constant X for this trace's GPU":
//   1. this machine's `stepscope bench` results for the GPU (the CLI reads
//      the ceilings file, roofline/ceilings.h, and passes them in
//      AnalyzeOptions::bench), per constant;
//   2. else the table of GPU models below (published figures, each row with
//      its source), by the GPU's name in the trace's devices table;
//   3. else unknown: the value is 0 and the finding says so (never another
//      GPU's numbers).
// Keys are the ceiling keys of `stepscope bench` (roofline/ceilings.cc
// CeilingKeys): "fp32", "tensor_tf32", "tensor_bf16", "h2d_pinned",
// "d2h_pinned", "h2d_pageable", "d2h_pageable". Values in base units: FLOP/s,
// bytes/s. No dependency on the trace model: `stepscope bench` prints the
// host-link rows beside its measurements (roofline/ceilings.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

// This machine's `stepscope bench` results for one GPU.
struct BenchResults {
  std::string gpu_name;
  std::string host;                      // where bench ran; "" when the ceilings file does not say
  std::string measured_at;               // ISO-8601 UTC
  std::map<std::string, double> values;  // ceiling key -> FLOP/s or bytes/s
};

// A host<->device link as measured or published: pinned and pageable copy
// rates, bytes/s (0: no figure).
struct HostLink {
  const char* name;  // "x86+H100": printed by bench beside its measurements
  double h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;
  const char* source;
};
const std::vector<HostLink>& HostLinks();
const HostLink* FindHostLink(std::string_view name);

// A row of the table of GPU models: dense peak rates (FLOP/s) and the host
// link of the machines the model comes in.
struct GpuModel {
  const char* model;  // "H100 SXM"
  double fp32, tf32, bf16;
  const char* compute_source;
  const char* link;  // a HostLinks() name; nullptr: no figures
};
const std::vector<GpuModel>& GpuModels();
// The row for a GPU name as CUDA reports it ("NVIDIA H100 80GB HBM3",
// "NVIDIA GH200 480GB", "NVIDIA A100-SXM4-80GB"); nullptr: not in the table.
const GpuModel* FindGpuModel(std::string_view gpu_name);

// One constant and where it came from.
struct MachineValue {
  double value = 0;    // 0: unknown
  std::string source;  // "bench results of h100-a 2026-11-27", "H100 SXM table"
  bool bench = false;  // from this machine's bench results
  bool known() const { return value > 0; }
};

class MachineConstants {
 public:
  MachineConstants() = default;  // no GPU: every constant unknown
  // bench: this machine's results for this GPU, or nullptr.
  MachineConstants(std::string gpu_name, const BenchResults* bench);

  MachineValue Get(std::string_view key) const;
  const std::string& gpu_name() const { return gpu_name_; }
  const GpuModel* model() const { return model_; }
  // "H100 SXM table" or "bench results of HOST DATE", or both joined with
  // " and " when the keys' sources differ; "" when all are unknown.
  std::string SourceOf(const std::vector<std::string_view>& keys) const;
  // Why a constant is unknown, for the finding: "GPU 'X' is not in the table
  // of GPU models and this machine has no stepscope bench results for it".
  std::string Unknown(std::string_view key) const;

 private:
  std::string gpu_name_;
  const GpuModel* model_ = nullptr;
  bool has_bench_ = false;
  BenchResults bench_;
};

}  // namespace stepscope
