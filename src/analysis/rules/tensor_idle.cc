// tensor_idle: the GPU busy with its tensor pipes idle, read from the GPU
// metrics (`profile --gpu-metrics`): the PM samples of the analyzed steps in
// which gr_active (sm_active where the pass has no gr_active) is high and
// tensor_active is low, their time-weighted means, and the kernels that ran
// in them. Samples near the DRAM peak are memory_bound's (tensor cores would
// not make them faster). Evidence only: no cost model and no fix to replay
// (the finding says what the hardware did, not what a change would save).
// When fp32_gemm fires too, the finding says it corroborates it and leaves
// the fix and its price to fp32_gemm. Silent without GPU metrics.
#include <algorithm>

#include "analysis/rules/gpu_metric_samples.h"
#include "analysis/rules/rule.h"
#include "common/kernel_names.h"

namespace stepscope {
namespace {

// The GPU had work in the compute pipe for most of the sample: at 80% and
// more of its cycles (gr_active) it is busy in the sense `steps` calls a GPU
// busy, and the fp32 train_gpt fixture never drops below 78% in its steps.
constexpr double kBusyPct = 80.0;
// The tensor pipes issued in under 5% of the cycles: essentially unused. A
// bf16 GEMM keeps them 40-99% busy (the GEMM of h200_pm_gemm_copy: 98.6%), a
// bf16 training step averages 10% even when host-bound (h200_pm_small_bf16),
// an fp32 one 1.8% with a 8% maximum (h200_pm_small_fp32).
constexpr double kTensorIdlePct = 5.0;
// Reported when such samples cover a fifth of the analyzed time or more: the
// share of the step the tensor cores could have sped up. A bf16 step has a
// few busy samples of elementwise or optimizer kernels without tensor work
// (3% of h200_pm_small_bf16's samples), which is no finding; an fp32 model
// spends most of its step there (86% of h200_pm_small_fp32's).
constexpr double kMinSharePct = 20.0;
// PM samples of one run follow each other back to back; a pause in the
// sampling longer than this splits a stretch.
constexpr int64_t kJoinNs = 100'000;

double Busy(const MetricSample& s) { return s.busy(); }
double Gr(const MetricSample& s) { return s.gr_active; }
double Sm(const MetricSample& s) { return s.sm_active; }
double Tensor(const MetricSample& s) { return s.tensor_active; }

std::string Pct(double v) { return v < 0 ? "not sampled" : FormatFixed(v, 1) + "%"; }

// "gr_active 99.9%, sm_active 91.7%, tensor_active 1.8%"
std::string Means(const std::vector<MetricSample>& s) {
  return "gr_active " + Pct(WeightedMean(s, Gr)) + ", sm_active " + Pct(WeightedMean(s, Sm)) +
         ", tensor_active " + Pct(WeightedMean(s, Tensor));
}

// The fp32 and TF32 GEMMs' share of the kernel time in the samples.
double Fp32GemmShare(const TraceModel& m, const std::vector<KernelShare>& kernels) {
  int64_t all = 0, gemm = 0;
  for (const KernelShare& k : kernels) {
    all += k.ns;
    const GemmPrecision p = m.NameInfo(k.name).gemm;
    if (p == GemmPrecision::kFp32 || p == GemmPrecision::kTf32) gemm += k.ns;
  }
  return all > 0 ? 100.0 * static_cast<double>(gemm) / all : 0.0;
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  if (c.device < 0 || c.m.gpu_metrics().empty()) return;
  const std::vector<MetricSample> samples =
      MetricSamples(c.m, static_cast<uint32_t>(c.device), c.windows);
  if (samples.empty()) return;
  if (WeightedMean(samples, Busy) < 0 || WeightedMean(samples, Tensor) < 0) {
    if (c.undecided) {
      c.undecided->push_back(
          "tensor_idle: the GPU metrics of device " + std::to_string(c.device) +
          " have no gr_active/sm_active or no tensor_active sample in the analyzed time");
    }
    return;
  }
  const DramPeak peak = DramPeakOf(c);
  std::vector<char> flagged(samples.size(), 0);
  std::vector<MetricSample> in;
  std::vector<int> steps;
  int64_t ns = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const MetricSample& s = samples[i];
    if (s.busy() < kBusyPct || s.tensor_active < 0 || s.tensor_active >= kTensorIdlePct) continue;
    if (MemoryBoundSample(s, peak)) continue;  // memory_bound's
    flagged[i] = 1;
    in.push_back(s);
    ns += s.weight_ns;
    const int st = SampleStep(c, s);
    if (st >= 0) steps.push_back(st);
  }
  if (in.empty()) return;
  const std::vector<Interval> stretches = FlaggedStretches(samples, flagged, c.windows, kJoinNs);
  const std::vector<KernelShare> kernels =
      KernelsIn(c.m, static_cast<uint32_t>(c.device), stretches);
  const double share = c.analyzed_ns > 0 ? 100.0 * static_cast<double>(ns) / c.analyzed_ns : 0.0;

  Finding f;
  f.rule = "tensor_idle";
  f.title =
      "GPU busy with its tensor pipes idle " + FormatFixed(share, 0) +
      "% of the time (GPU metrics: " + (in.front().gr_active >= 0 ? "gr_active " : "sm_active ") +
      Pct(WeightedMean(in, Busy)) + ", tensor_active " + Pct(WeightedMean(in, Tensor)) + ")";
  const std::string st = c.StepsText(steps);
  f.where = (st.empty() ? std::string() : st + ", ") + "device " + std::to_string(c.device);
  f.detail = std::to_string(in.size()) + " of " + std::to_string(samples.size()) + " PM samples (" +
             FormatDuration(ns) + ", " + FormatFixed(share, 1) +
             "% of the analyzed time) with the GPU busy (" +
             (in.front().gr_active >= 0 ? "gr_active" : "sm_active") +
             " >= " + FormatFixed(kBusyPct, 0) + "%) and its tensor pipes idle (tensor_active < " +
             FormatFixed(kTensorIdlePct, 0) + "%): in them " + Means(in) +
             " (time-weighted); over the analyzed time " + Means(samples) +
             "; kernels in them: " + TopKernelsText(c.m, kernels, 3);
  const auto fp32 = std::find_if(out->begin(), out->end(), [](const Finding& x) {
    return x.rule == "fp32_gemm" && x.reported;
  });
  if (fp32 != out->end()) {
    // fp32_gemm detects before this rule (registry.cc): its finding is in `out`.
    f.detail += "; this corroborates fp32_gemm: its fp32/TF32 GEMMs are " +
                FormatFixed(Fp32GemmShare(c.m, kernels), 0) +
                "% of the kernel time in these samples";
    f.fix = "See fp32_gemm: its fix (bf16 autocast) and its price are this finding's too.";
  } else {
    f.fix =
        "The kernels above do not use the tensor cores: run GEMMs and convolutions in bf16/fp16 "
        "(torch.autocast(\"cuda\", dtype=torch.bfloat16)), attention through "
        "scaled_dot_product_attention (flash), matrix dimensions in multiples of 16 so cuBLAS "
        "picks tensor-core kernels; elementwise and normalization kernels gain from fusion "
        "(torch.compile) instead.";
  }
  f.count = static_cast<int64_t>(in.size());
  f.evidence_only = true;
  f.examples = LongestStretchExamples(c, stretches, 3);
  c.Finish(&f, share >= kMinSharePct);
  out->push_back(f);
}

}  // namespace

extern const Rule kTensorIdleRule{
    .id = "tensor_idle",
    .summary = "GPU busy with its tensor pipes idle (GPU metrics; evidence, not priced)",
    .detect = Detect,
};

}  // namespace stepscope
