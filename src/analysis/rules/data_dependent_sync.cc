// data_dependent_sync: host round trips inside the model (rule.h, RoundTrip):
// an op in a module's forward/backward whose result's size or value the host
// must read back (torch.nonzero, boolean indexing, masked_select, .item(),
// .tolist(), unique, repeat_interleave without output_size), so the host
// waits for the GPU to drain everything queued before it, then the GPU idles
// while the host resumes and launches again. One finding per op and Python
// line. Fix: make the shapes static (no read-back); priced by replaying the
// steps without the round trips' waits and read-back copies.
#include <algorithm>
#include <map>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

struct Trips : FindingData {
  std::vector<int32_t> trips;           // RuleContext::round_trips
  std::vector<whatif::HostSpan> loops;  // the iterations a batched loop does not run
};

// What to do instead, by the op that needed the value.
std::string FixFor(const std::string& op) {
  std::string s;
  if (op == "aten::nonzero" || op == "aten::masked_select" || op == "aten::index") {
    s = "Make the shapes static: instead of torch.nonzero / x[mask] / masked_select (a count "
        "read back before the output exists), dispatch with a fixed capacity (positions from a "
        "cumsum over the one-hot routing, scatter into an [experts, capacity, hidden] buffer, "
        "batched expert GEMMs, tokens over capacity dropped or padded), "
        "torch.nonzero_static(x, size=N), or torch.where(mask, x, 0) where the result can keep "
        "the input's shape.";
  } else if (op == "aten::unique") {
    s = "torch.unique's output size is data: use a fixed-size form instead (a one-hot or "
        "bincount with minlength=N over a known range, a mask over all candidates).";
  } else if (op == "a cumsum's total") {
    s = "Pass the size the host already knows: repeat_interleave(..., output_size=N); keep "
        "cumsum results on the GPU instead of reading their total.";
  } else if (op == "aten::bincount" || op == "aten::histc") {
    s = "bincount/histc read the data's range back: scatter_add_ into torch.zeros(N) with N "
        "known on the host.";
  } else if (op == "`.tolist()` / `.cpu()`") {
    s = "Keep the data on the GPU (index with tensors, not Python lists); if the host needs it, "
        "copy it with non_blocking=True into pinned memory and read it after the step's work "
        "is queued.";
  } else {
    s = "Keep the value on the GPU: compute with it as a tensor (torch.where, clamp, masks) "
        "instead of a Python number (a Python `if` on a tensor is an .item() too), or read it "
        "once per step after the step's work is queued.";
  }
  return s +
         " Without the round trips the step can also be captured as a CUDA graph "
         "(torch.compile(mode=\"reduce-overhead\")).";
}

// "; in 6 loops of 8 iterations (...)": the loops the fix batches, and the
// host time of the iterations it no longer runs, forward and backward.
std::string LoopText(const RuleContext& c, const std::vector<RoundTripLoop>& loops,
                     std::vector<whatif::HostSpan>* spans) {
  if (loops.empty()) return "";
  size_t iterations = 0, backward = 0;
  int64_t fwd_ns = 0, bwd_ns = 0;
  for (const RoundTripLoop& l : loops) {
    iterations += l.trips.size();
    backward += l.backward_runs;
    for (size_t k = 0; k < l.removed.size(); ++k) {
      const Finding::Span& s = l.removed[k];
      (k == 0 ? fwd_ns : bwd_ns) += s.end_ns - s.start_ns;
      spans->push_back({s.tid, s.start_ns, s.end_ns});
    }
  }
  const int64_t steps = std::max<int64_t>(c.nsteps, 1);
  return "; " + std::to_string(iterations) + " of them in " + std::to_string(loops.size()) +
         " loops (" + FormatFixed(static_cast<double>(iterations) / loops.size(), 1) +
         " iterations each, the same launches per iteration); batched, each loop runs once: "
         "its other iterations' host time goes, " +
         FormatDuration(fwd_ns / steps) + " per step on the launching thread and " +
         FormatDuration(bwd_ns / steps) + " in the backward (" + std::to_string(backward) +
         " runs of launches repeating as often on the backward thread)";
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  // By op and line: a deterministic order.
  std::map<std::string, std::vector<int32_t>> sites;
  for (size_t i = 0; i < c.round_trips.size(); ++i) {
    const RoundTrip& t = c.round_trips[i];
    if (t.data_dependent) sites[t.op + "\x01" + t.line].push_back(static_cast<int32_t>(i));
  }
  // The GPU idle time after them: the sync-wait gaps this rule owns.
  std::map<std::string, GapGroup> idle;
  for (size_t i : c.GapsOf(GapOwner::kDataDependentSync)) {
    const RoundTrip* t = c.RoundTripOf(c.gaps[i]);
    if (!t) continue;
    const uint32_t api = c.gaps[i].blocking_api;
    idle[t->op + "\x01" + t->line].Add(c, c.gaps[i], api != kNone ? c.m.api_range()[api] : kNone);
  }
  for (auto& [key, trips] : sites) {
    const RoundTrip& first = c.round_trips[trips.front()];
    GapGroup& grp = idle[key];
    Finding& f = grp.f;
    f.rule = "data_dependent_sync";
    int64_t blocked = 0;
    uint64_t bytes = 0;
    for (int32_t i : trips) {
      const RoundTrip& t = c.round_trips[i];
      blocked += t.end_ns - t.start_ns;
      bytes += t.bytes;
      grp.steps.push_back(t.step);
      f.apis.insert(f.apis.end(), t.calls.begin(), t.calls.end());
      f.ops.push_back(t.read_back);
    }
    const int64_t gaps = f.cost_ns;
    const int64_t n = static_cast<int64_t>(trips.size());
    const int64_t steps = std::max<int64_t>(c.nsteps, 1);
    const std::string per_step = FormatFixed(static_cast<double>(n) / steps, n % steps ? 1 : 0);
    const std::string at = first.line.empty() ? "" : " at " + first.line;
    f.title = "Data-dependent host round trip " + first.op + at +
              ": the host waits for the GPU to read a value back, " +
              (n == steps ? std::string("once") : per_step + " times") + " per step";
    f.detail = std::to_string(n) + " round trips (" + per_step + " per step), " +
               FormatBytes(bytes) + " read back (op named by " + first.op_evidence +
               "); the host blocked " + FormatDuration(blocked) + " in them and the GPU idled " +
               FormatDuration(gaps) + " after them (" + std::to_string(f.count) +
               " sync-wait gaps)" +
               (first.line.empty() ? "; Python line: not recorded for these calls" : "");
    auto data = std::make_shared<Trips>();
    data->trips = trips;
    std::vector<RoundTripLoop> loops;
    for (const RoundTripLoop& l : c.round_trip_loops) {
      if (std::binary_search(trips.begin(), trips.end(), l.trips.front())) loops.push_back(l);
    }
    f.detail += LoopText(c, loops, &data->loops);
    f.fix = FixFor(first.op);
    f.count = n;
    f.cost_ns = gaps + blocked;
    f.data = data;
    grp.Finish(c);
    out->push_back(f);
  }
}

// The round trips go; a loop of them runs once (its iterations batched).
Fix RemoveThem(const PricingContext& p, Finding* f) {
  const auto* d = static_cast<const Trips*>(f->data.get());
  if (!d) return {[](whatif::Graph*) { return 0; }, "nothing"};
  const Fix trips = RemoveRoundTripsOf(p, d->trips);
  if (d->loops.empty()) return trips;
  const std::vector<whatif::HostSpan> spans = d->loops;
  return {[=](whatif::Graph* x) { return trips.transform(x) + whatif::BatchLoops(x, spans); },
          trips.what + "; the loops batched (" + std::to_string(spans.size()) +
              " spans of iterations not run)"};
}

}  // namespace

extern const Rule kDataDependentSyncRule{
    .id = "data_dependent_sync",
    .summary = "host round trips inside the model: nonzero, boolean indexing, .item(), .tolist()",
    .detect = Detect,
    .fix = RemoveThem,
};

}  // namespace stepscope
