// collective_wait: this GPU waits for other ranks inside NCCL collectives.
//
// An NCCL kernel spins until every rank has arrived, so on a rank that
// arrives early it lasts as long as the others are late. One trace cannot
// see the other ranks, but it can see what the wait costs this GPU: the
// time a collective ran with no compute kernel beside it (its compute-free
// time, as `stepscope ranks` measures it, docs/ranks.md) beyond what the
// transfer itself needs (its transfer time, TransferTimes below; docs/rules.md
// has the measured numbers). Per instance:
//   wait = max(0, compute-free time - transfer time).
// The fix replays the steps with each such collective without its wait (its
// duration less the wait): what the steps would take if the other ranks
// arrived on time. The finding points to `stepscope ranks`, which names the
// rank they wait for and why.
#include <algorithm>
#include <unordered_map>

#include "analysis/rules/rule.h"
#include "common/collective_wait.h"
#include "common/intervals.h"
#include "common/stats.h"

namespace stepscope {
namespace {

// Each waiting collective's duration without its wait, parallel to Finding::ops.
struct AtTransfer : FindingData {
  std::vector<int64_t> target_ns;
};

bool OnDevice(const RuleContext& c, const GpuOp& o) {
  return c.device < 0 || o.device == static_cast<uint32_t>(c.device);
}

// Time of [lo, hi) covered by the merged, sorted intervals v.
int64_t Covered(const std::vector<Interval>& v, int64_t lo, int64_t hi) {
  auto j = std::upper_bound(v.begin(), v.end(), lo,
                            [](int64_t t, const Interval& x) { return t < x.end; });
  int64_t total = 0;
  for (; j != v.end() && j->start < hi; ++j) total += std::min(hi, j->end) - std::max(lo, j->start);
  return total;
}

// The transfer time of a collective kernel: what it takes, compute-free, when
// every rank arrives on time: the shortest instance of its name anywhere in
// the trace (docs/rules.md). Not the steady steps' shortest: on a rank that
// waits in every step, every steady instance waits too (on the 2026-11-27
// loader run the shortest steady all-reduce was 1.03 ms, the other rank's
// 0.28 ms). A collective that is not the step's last overlaps this rank's
// compute when nobody is late, so its own on-time compute-free time is near
// 0 anyway; the step's last one (DDP's last bucket) stays exposed on time,
// and that transfer (0.63 ms per step there) reads as wait: the finding is
// reported only when a step's wait is a straggler's (MinStragglerWaitNs).
std::unordered_map<StringId, int64_t> TransferTimes(const RuleContext& c) {
  const TraceModel& m = c.m;
  std::unordered_map<StringId, int64_t> shortest;
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kKernel || !OnDevice(c, o)) continue;
    const StringId name = m.kernels()[o.index].name;
    if (m.NameInfo(name).category != OpCategory::kCommunication) continue;
    auto [it, fresh] = shortest.emplace(name, o.end_ns - o.start_ns);
    if (!fresh) it->second = std::min(it->second, o.end_ns - o.start_ns);
  }
  return shortest;
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  std::vector<Interval> compute;
  std::vector<uint32_t> comm;  // steady steps' collective kernels
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kKernel || !OnDevice(c, o)) continue;
    if (m.NameInfo(m.kernels()[o.index].name).category != OpCategory::kCommunication) {
      compute.push_back({o.start_ns, std::max(o.start_ns, o.end_ns)});
      continue;
    }
    const int st = c.op_step[i];
    if (st >= 0 && c.steps.steps[static_cast<size_t>(st)].steady()) comm.push_back(i);
  }
  if (comm.empty()) return;
  MergeIntervals(&compute);
  std::unordered_map<StringId, int64_t> transfer = TransferTimes(c);
  OpGroup acc;
  auto data = std::make_shared<AtTransfer>();
  int64_t comm_ns = 0, free_ns = 0, transfer_ns = 0;
  std::unordered_map<int, int64_t> step_wait;
  for (uint32_t i : comm) {
    const GpuOp& o = m.gpu_ops()[i];
    const int64_t d = o.end_ns - o.start_ns, t = transfer[m.kernels()[o.index].name];
    const int64_t free = d - Covered(compute, o.start_ns, o.end_ns);
    comm_ns += d, free_ns += free, transfer_ns += std::min(free, t);
    const int64_t wait = std::max<int64_t>(0, free - t);
    step_wait[c.op_step[i]] += wait;
    if (wait <= 0) continue;
    acc.Add(c, OpTime(m, o), o.start_ns, o.end_ns, wait, kNone);
    acc.f.ops.push_back(i);
    data->target_ns.push_back(d - wait);  // without the wait: its compute-free time is the transfer
  }
  if (acc.f.count == 0) return;
  Finding& f = acc.f;
  f.rule = "collective_wait";
  f.title = "this GPU waits for other ranks in NCCL collectives";
  f.where = c.StepsText(acc.steps) + (c.device >= 0 ? ", device " + std::to_string(c.device) : "");
  const double steps = static_cast<double>(std::max<int64_t>(1, c.nsteps));
  f.detail =
      std::to_string(f.count) + " of " + std::to_string(comm.size()) +
      " collective kernels waited: per step " +
      FormatDuration(static_cast<int64_t>(comm_ns / steps)) + " in collectives, " +
      FormatDuration(static_cast<int64_t>(free_ns / steps)) + " of it with no compute beside, " +
      FormatDuration(static_cast<int64_t>(transfer_ns / steps)) +
      " of that the transfers need (each kernel's shortest instance); the rest is the wait for "
      "the last rank to arrive";
  f.fix =
      "The wait is another rank's lateness, not this rank's work: run `stepscope ranks` on every "
      "rank's trace (stepscope profile -o run_%q{RANK} -- torchrun ...; stepscope ranks "
      "run_*.sqlite) to name the rank the others wait for, why (data loading, host CPU, GPU work, "
      "a slower GPU, communication) and what it costs.";
  f.data = std::move(data);
  // Reported when the median steady step waits as long as a straggler's wait
  // in `stepscope ranks`: a balanced run's exposed last transfer is not.
  std::vector<int64_t> waits;
  for (const Step& s : c.steps.steps) {
    if (s.steady()) waits.push_back(step_wait[static_cast<int>(&s - c.steps.steps.data())]);
  }
  const bool straggler =
      !waits.empty() && UpperMedian(&waits) >= MinStragglerWaitNs(c.steps.stats.median);
  c.FinishAtThreshold(&f);
  f.reported = f.reported && straggler;
  out->push_back(f);
}

// Every waiting collective without its wait.
Fix AtTransferTime(const PricingContext& p, Finding* f) {
  static const AtTransfer kEmpty;
  const auto* d = dynamic_cast<const AtTransfer*>(f->data.get());
  if (!d) d = &kEmpty;
  std::vector<uint32_t> nodes;
  std::vector<int64_t> ns;
  for (size_t i = 0; i < f->ops.size() && i < d->target_ns.size(); ++i) {
    const uint32_t o = f->ops[i];
    if (o >= p.g.op_node.size() || p.g.op_node[o] == kNone) continue;
    nodes.push_back(p.g.op_node[o]);
    ns.push_back(d->target_ns[i]);
  }
  return {[=](whatif::Graph* x) { return whatif::SetDurations(x, nodes, ns); },
          "the other ranks on time: " + std::to_string(nodes.size()) +
              " collectives without their wait (their compute-free time cut to the transfer)"};
}

}  // namespace

extern const Rule kCollectiveWaitRule{
    .id = "collective_wait",
    .summary = "this GPU waits for other ranks inside NCCL collectives (see `stepscope ranks`)",
    .detect = Detect,
    .fix = AtTransferTime,
};

}  // namespace stepscope
