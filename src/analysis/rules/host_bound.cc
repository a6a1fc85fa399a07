// host_bound: the host threads hold most of the median step's critical path
// (the replay's, whatif/replay.h): a larger batch amortizes the host's time.
// Read from the replay once the other findings are priced; priced per
// original batch of samples, AnalyzeOptions::batch_factor times the batch.
// Not reported when data loading explains most of the host's time (a larger
// batch loads more data).
#include <algorithm>

#include "analysis/rules/rule.h"
#include "analysis/whatif/pricing.h"

namespace stepscope {
namespace {

std::string Ms(int64_t ns) { return FormatFixed(ns / 1e6, 1); }

void DetectReplayed(const ReplayContext& r, std::vector<Finding>* out) {
  const RuleContext& c = r.p.c;
  const whatif::Graph& g = r.p.g;
  const whatif::CriticalPath& path = r.path;
  if (path.duration <= 0 || !path.host_bound) return;
  int64_t loading = 0;
  for (const Finding& f : r.a.findings) {
    if (f.rule == "data_loading" && f.reported) loading = std::max(loading, f.cost_per_step_ns);
  }
  const double n = c.opt.batch_factor;
  size_t bursts = 0;
  const whatif::Prediction p = PriceLargerBatch(r.p.e, c.steps, r.a.findings, n, &bursts);
  Finding f;
  f.rule = "host_bound";
  int64_t host = 0;
  std::string threads;
  for (const auto& [lane, ns] : path.lanes) {
    if (!g.lanes[lane].host) continue;
    host += ns;
    threads += (threads.empty() ? "" : ", ") + std::to_string(g.lanes[lane].id);
  }
  const IdleSummary& idle = r.a.idle;
  const double busy = idle.analyzed_ns > 0 ? 100.0 * idle.busy_ns / idle.analyzed_ns : 0;
  f.title = "The host bounds the step: host threads (" + threads + ") hold " +
            FormatFixed(100.0 * host / path.duration, 0) + "% of its critical path, the GPU is " +
            FormatFixed(busy, 0) + "% busy";
  f.where = "critical path of " + r.a.critical_path;
  f.detail = FormatFixed(n, 0) + "x the batch per step: step " + Ms(p.base_ns) + " -> " +
             Ms(p.fixed_ns) + " ms (" + LargerBatchNote(p, n, 0, bursts) + ")";
  const std::string trips = DataDependentRoundTrips(c);
  f.fix =
      "Give the GPU more work per host step: a larger batch (or fewer, larger micro-batches), "
      "CUDA graphs (torch.compile(mode=\"reduce-overhead\")) to cut the per-launch host cost" +
      (trips.empty() ? std::string() : " once the " + trips + " are gone") +
      ", fused kernels; move host work (logging, data preparation) off the training thread.";
  f.count = 1;
  // Priced per original batch of samples.
  whatif::Prediction per;
  per.base_ns = p.base_ns;
  per.fixed_ns = static_cast<int64_t>(p.fixed_ns / n);
  f.whatif = FormatFixed(n, 0) + "x batch, per original batch";
  f.step_before_ns = per.base_ns;
  f.step_after_ns = per.fixed_ns;
  f.cost_per_step_ns = std::max<int64_t>(0, per.saving_ns());
  f.cost_ns = f.cost_per_step_ns * std::max<int64_t>(c.nsteps, 1);
  f.cost_pct = per.base_ns > 0 ? 100.0 * f.cost_per_step_ns / per.base_ns : 0.0;
  f.reported = f.cost_pct >= c.opt.min_cost_pct && 2 * loading < f.cost_per_step_ns;
  out->push_back(f);
}

}  // namespace

extern const Rule kHostBoundRule{
    .id = "host_bound",
    .summary = "the host bounds the step (critical path): a larger batch amortizes it",
    .detect_replayed = DetectReplayed,
    .host_evidence = TopPythonLines,
    .symptom = true,
};

}  // namespace stepscope
