// fp32_gemm: GEMMs in fp32 or TF32 on a GPU with bf16/fp16 tensor cores
// (sm_80 and later). Without the replay the cost is estimated: tensor cores
// run a GEMM at least 2x faster than fp32 on CUDA cores (peak ratios are 8-16x
// on A100/H100) and than TF32 (2x), so half of the fp32 GEMM time and a
// quarter of the TF32 time. Fix: tensor-core GEMMs at the measured ratio of
// the ceilings, fp32 attention kernels with them (autocast moves both).
#include <algorithm>
#include <set>
#include <unordered_map>

#include "analysis/rules/rule.h"
#include "common/kernel_names.h"

namespace stepscope {
namespace {

// The finding's evidence without the fixed-fraction estimate, which the
// replay replaces.
struct Evidence : FindingData {
  std::string detail;
};

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  OpGroup acc;
  int64_t fp32 = 0, tf32 = 0;
  std::unordered_map<StringId, int64_t> by_name;
  std::string device_name;
  uint32_t cc = 0;
  int64_t no_device = 0;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kKernel) continue;
    const KernelRecord& k = m.kernels()[o.index];
    const GemmPrecision p = m.NameInfo(k.name).gemm;
    if (p != GemmPrecision::kFp32 && p != GemmPrecision::kTf32) continue;
    const DeviceRecord* d = m.Device(o.device);
    const int64_t t = OpTime(m, o);
    if (!d && c.InWindows(t)) ++no_device;
    if (!d || d->cc_major < 8) continue;
    if (!c.InWindows(t)) continue;
    const int64_t dur = o.end_ns - o.start_ns;
    (p == GemmPrecision::kFp32 ? fp32 : tf32) += dur;
    by_name[k.name] += dur;
    device_name = m.String(d->name);
    cc = d->cc_major * 10 + d->cc_minor;
    acc.Add(c, t, o.start_ns, o.end_ns, p == GemmPrecision::kFp32 ? dur / 2 : dur / 4,
            OpRange(m, o));
    acc.f.ops.push_back(static_cast<uint32_t>(&o - m.gpu_ops().data()));
  }
  if (no_device > 0 && c.undecided) {
    c.undecided->push_back("fp32_gemm: " + std::to_string(no_device) +
                           " fp32/TF32 GEMM kernels on a device the trace does not describe "
                           "(no devices row: compute capability unknown)");
  }
  if (acc.f.count == 0) return;
  Finding& f = acc.f;
  f.rule = "fp32_gemm";
  f.title = std::string(fp32 > 0 ? "GEMMs run in fp32" : "GEMMs run in TF32") + " on " +
            (device_name.empty() ? "a GPU" : device_name) + " (sm_" + std::to_string(cc) +
            ") with bf16/fp16 tensor cores";
  f.where = acc.Where(c);
  std::vector<std::pair<int64_t, StringId>> names;
  for (const auto& [n, t] : by_name) names.push_back({-t, n});
  std::sort(names.begin(), names.end());
  std::string top;
  for (size_t i = 0; i < names.size() && i < 3; ++i) {
    top += (i ? ", " : "") + std::string(KernelBaseName(m.String(names[i].second))).substr(0, 60);
  }
  auto evidence = std::make_shared<Evidence>();
  evidence->detail = std::to_string(f.count) + " GEMM kernels: " + FormatDuration(fp32) +
                     " fp32 + " + FormatDuration(tf32) + " TF32 (" + top + ")";
  f.detail =
      evidence->detail + "; estimated saving half the fp32 time and a quarter of the TF32 time";
  f.data = std::move(evidence);
  f.fix =
      "Run the model in bf16: torch.autocast(\"cuda\", dtype=torch.bfloat16) (AMP) or "
      "model.to(torch.bfloat16); on Hopper consider FP8 (Transformer Engine). At the very least "
      "allow TF32: torch.backends.cuda.matmul.allow_tf32 = True. Where a GEMM dimension is not a "
      "multiple of 8 (the vocabulary first: GPT-2's 50,257), pad it to a multiple of 64 "
      "(50,304): such a bf16 GEMM runs on older, slower kernels, which the price (aligned "
      "shapes) does not assume.";
  c.FinishAtThreshold(&f, fp32 + tf32);
  out->push_back(f);
}

// Tensor-core GEMM time over fp32 (and TF32) GEMM time: the ratios of the
// GPU's ceilings (bf16 tensor cores against fp32 CUDA cores and TF32 tensor
// cores), from this machine's bench results or the table of GPU models.
// Unknown GPU: the detection's lower-bound estimate (half the fp32 time, three
// quarters of the TF32 time), and the finding says why.
struct GemmRatios {
  double fp32 = 0.5, tf32 = 0.75;
  std::string source;
};
GemmRatios TensorCoreRatios(const MachineConstants& mc) {
  GemmRatios r;
  const MachineValue fp32 = mc.Get("fp32"), tf32 = mc.Get("tensor_tf32"),
                     bf16 = mc.Get("tensor_bf16");
  if (!bf16.known() || !fp32.known()) {
    r.source =
        mc.Unknown(bf16.known() ? "fp32" : "tensor_bf16") + "; the lower-bound estimate instead";
    return r;
  }
  r.fp32 = fp32.value / bf16.value;
  if (tf32.known()) r.tf32 = tf32.value / bf16.value;
  r.source = mc.SourceOf({"fp32", "tensor_tf32", "tensor_bf16"});
  return r;
}

// The GEMMs, and fp32 attention kernels, which autocast moves to bf16 too.
Fix TensorCores(const PricingContext& p, Finding* f) {
  const RuleContext& c = p.c;
  const whatif::Graph& g = p.g;
  std::vector<uint32_t> ops32, ops_tf32;
  const std::set<uint32_t> gemm(f->ops.begin(), f->ops.end());
  for (uint32_t i = 0; i < c.m.gpu_ops().size(); ++i) {
    const GpuOp& o = c.m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kKernel || g.op_node[i] == kNone) continue;
    const KernelRecord& k = c.m.kernels()[o.index];
    const int32_t st = g.nodes[g.op_node[i]].step;
    if (st < 0 || !c.steps.steps[st].steady()) continue;
    const std::string& name = c.m.String(k.name);
    const GemmPrecision prec = c.m.NameInfo(k.name).gemm;
    if (gemm.count(i) || prec == GemmPrecision::kFp32 || prec == GemmPrecision::kTf32) {
      (prec == GemmPrecision::kTf32 ? ops_tf32 : ops32).push_back(g.op_node[i]);
    } else if (IsFp32AttentionKernelName(name)) {
      ops32.push_back(g.op_node[i]);
    }
  }
  const GemmRatios r = TensorCoreRatios(c.machine);
  if (const auto* e = dynamic_cast<const Evidence*>(f->data.get())) f->detail = e->detail;
  return {[=](whatif::Graph* x) {
            return whatif::ScaleOps(x, ops32, r.fp32) + whatif::ScaleOps(x, ops_tf32, r.tf32);
          },
          "tensor-core GEMMs (fp32 time x " + FormatFixed(r.fp32, 3) + ", TF32 x " +
              FormatFixed(r.tf32, 3) + ": " + r.source + ")"};
}

}  // namespace

extern const Rule kFp32GemmRule{
    .id = "fp32_gemm",
    .summary = "fp32 GEMMs on a GPU with bf16/fp16 tensor cores",
    .detect = Detect,
    .fix = TensorCores,
};

}  // namespace stepscope
