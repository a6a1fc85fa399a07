// memory_bound: stretches of the analyzed steps in which the GPU moved DRAM
// bytes near the device's peak, read from the GPU metrics (`profile
// --gpu-metrics`): PM samples whose DRAM read + write bytes per second reach
// kMemoryBoundPctOfPeak of the peak (gpu_metric_samples.h: this machine's
// bench ceiling, else the device's datasheet figure from the trace), joined
// into stretches; their share of the analyzed time and the kernels in them.
// Evidence only, like tensor_idle: a kernel at the DRAM roof runs faster only
// by moving fewer bytes (fusion, lower precision), and the trace does not say
// how many fewer, so nothing is replayed. Silent without GPU metrics.
#include <algorithm>

#include "analysis/rules/gpu_metric_samples.h"
#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

// Reported when the stretches cover a tenth of the analyzed time or more: at
// most that share of the step could be won by moving fewer bytes, and fusion
// wins a part of it. The train_gpt fixtures spend 0.6% (fp32) and 4% (bf16)
// of their samples there; the copy of h200_pm_gemm_copy about a third of its
// GPU time.
constexpr double kMinSharePct = 10.0;
// As tensor_idle: a pause in the PM sampling longer than this splits a stretch.
constexpr int64_t kJoinNs = 100'000;

double Dram(const MetricSample& s) { return s.dram_bps(); }

std::string Tbs(double bps) { return FormatFixed(bps / 1e12, 2) + " TB/s"; }

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  if (c.device < 0 || c.m.gpu_metrics().empty()) return;
  const std::vector<MetricSample> samples =
      MetricSamples(c.m, static_cast<uint32_t>(c.device), c.windows);
  if (samples.empty()) return;
  const DramPeak peak = DramPeakOf(c);
  const bool sampled = WeightedMean(samples, Dram) >= 0;
  if ((!sampled || peak.bps <= 0) && c.undecided) {
    c.undecided->push_back(
        "memory_bound: " +
        std::string(!sampled ? "the GPU metrics have no dram_read_bw and dram_write_bw samples"
                             : "no DRAM peak for the GPU (no stepscope bench dram_bw, no "
                               "memory bandwidth in the devices row)") +
        " on device " + std::to_string(c.device));
  }
  if (!sampled || peak.bps <= 0) return;
  std::vector<char> flagged(samples.size(), 0);
  std::vector<MetricSample> in;
  std::vector<int> steps;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!MemoryBoundSample(samples[i], peak)) continue;
    flagged[i] = 1;
    in.push_back(samples[i]);
    const int st = SampleStep(c, samples[i]);
    if (st >= 0) steps.push_back(st);
  }
  if (in.empty()) return;
  const std::vector<Interval> stretches = FlaggedStretches(samples, flagged, c.windows, kJoinNs);
  int64_t ns = 0;
  for (const Interval& s : stretches) ns += s.end - s.start;
  const std::vector<KernelShare> kernels =
      KernelsIn(c.m, static_cast<uint32_t>(c.device), stretches);
  const double share = c.analyzed_ns > 0 ? 100.0 * static_cast<double>(ns) / c.analyzed_ns : 0.0;
  const double mean = WeightedMean(in, Dram);

  Finding f;
  f.rule = "memory_bound";
  f.title = "Memory-bound stretches: DRAM near its peak " + FormatFixed(share, 0) +
            "% of the time (" + Tbs(mean) + ", " + FormatFixed(100.0 * mean / peak.bps, 0) +
            "% of " + Tbs(peak.bps) + ")";
  const std::string st = c.StepsText(steps);
  f.where = (st.empty() ? std::string() : st + ", ") + "device " + std::to_string(c.device);
  f.detail = std::to_string(stretches.size()) +
             (stretches.size() == 1 ? " stretch (" : " stretches (") + std::to_string(in.size()) +
             " of " + std::to_string(samples.size()) + " PM samples, " + FormatDuration(ns) + ", " +
             FormatFixed(share, 1) + "% of the analyzed time) with DRAM read + write at >= " +
             FormatFixed(kMemoryBoundPctOfPeak, 0) + "% of the peak, " + Tbs(peak.bps) + " (" +
             peak.source + "): in them " + Tbs(mean) + " (read " +
             Tbs(WeightedMean(in, [](const MetricSample& s) { return s.dram_read_bps; })) +
             ", write " +
             Tbs(WeightedMean(in, [](const MetricSample& s) { return s.dram_write_bps; })) +
             "), over the analyzed time " + Tbs(WeightedMean(samples, Dram)) +
             "; kernels in them: " + TopKernelsText(c.m, kernels, 3);
  f.fix =
      "These kernels run at the DRAM roof: only fewer bytes make them faster. Fuse elementwise, "
      "normalization and optimizer kernels (torch.compile; fused=True optimizers), keep "
      "activations in bf16, use flash attention (scaled_dot_product_attention) instead of "
      "materialized attention scores, and avoid copies (.contiguous(), .clone()) the model does "
      "not need.";
  f.count = static_cast<int64_t>(in.size());
  f.evidence_only = true;
  f.examples = LongestStretchExamples(c, stretches, 3);
  c.Finish(&f, share >= kMinSharePct);
  out->push_back(f);
}

}  // namespace

extern const Rule kMemoryBoundRule{
    .id = "memory_bound",
    .summary = "stretches with DRAM near its peak bandwidth (GPU metrics; evidence, not priced)",
    .detect = Detect,
};

}  // namespace stepscope
