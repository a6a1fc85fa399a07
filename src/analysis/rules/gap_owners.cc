// Which rule owns each GPU idle gap (the ownership table in rules.h), decided
// once for the gap rules (data_loading, host_sync, sync_memcpy,
// pageable_memcpy, launch_bound, host_wait), and the helpers they share.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "analysis/rules/rule.h"
#include "common/step_names.h"
#include "common/strings.h"

namespace stepscope {
namespace {

// Launch-bound stretches on the device: runs of consecutive kernels each
// shorter than the time between its launch and the previous op's launch.
// Returns, per op index, the stretch id (or -1).
std::vector<int32_t> LaunchBoundStretches(const RuleContext& c, std::vector<int64_t>* stretch_len) {
  const auto& ops = c.m.gpu_ops();
  std::vector<int32_t> id(ops.size(), -1);
  std::vector<size_t> run;
  int64_t prev_launch = -1;
  auto close_run = [&] {
    if (static_cast<int>(run.size()) >= kMinLaunchBoundStretch) {
      const int32_t sid = static_cast<int32_t>(stretch_len->size());
      for (size_t i : run) id[i] = sid;
      stretch_len->push_back(static_cast<int64_t>(run.size()));
    }
    run.clear();
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const GpuOp& o = ops[i];
    if (o.device != c.device) continue;
    if (o.api == kNone) {
      close_run();
      prev_launch = -1;
      continue;
    }
    const int64_t launch = c.m.apis()[o.api].start_ns;
    const bool bound = o.kind == GpuOpKind::kKernel && prev_launch >= 0 &&
                       o.end_ns - o.start_ns < launch - prev_launch;
    if (bound) {
      run.push_back(i);
    } else {
      close_run();
    }
    prev_launch = launch;
  }
  close_run();
  return id;
}

// A sync-wait gap: a data-dependent round trip's (data_dependent_sync),
// else the blocking call's kind decides.
GapOwner SyncWaitOwner(const RuleContext& c, const GpuGap& g) {
  const RoundTrip* t = c.RoundTripOf(g);
  if (t && t->data_dependent) return GapOwner::kDataDependentSync;
  const uint8_t copy = g.blocking_api != kNone ? c.blocking_copy[g.blocking_api] : 0;
  return copy == 1   ? GapOwner::kSyncMemcpy
         : copy == 2 ? GapOwner::kPageableMemcpy
                     : GapOwner::kHostSync;
}

// The program took no batch from a torch DataLoader: `profile`'s DataLoader
// ranges were installed (the iteration hook's mark) and none was recorded.
// Its waits at step starts are other host work (zero_grad, building the
// batch in the loop, Python before the first launch), whose fix is not a
// DataLoader's.
bool NoDataLoader(const TraceModel& m) {
  bool mark = false;
  for (const NvtxRecord& r : m.nvtx()) {
    const std::string_view name = m.String(r.name);
    if (r.kind != NvtxKind::kMark && name == kLoaderRangeName) return false;
    mark = mark || (r.kind == NvtxKind::kMark && name == kLoaderRangesOnMark);
  }
  return mark;
}

// A host-wait gap (or a sync-wait gap outside the steps): what the host was
// doing while the GPU waited decides.
OwnedGap HostWaitOwner(const RuleContext& c, const GpuGap& g, const std::vector<int32_t>& stretch,
                       bool no_loader, GapOwners* w) {
  const TraceModel& m = c.m;
  const GpuOp* next = g.next_op == kNone ? nullptr : &m.gpu_ops()[g.next_op];
  OwnedGap o;
  o.launch_range = next && next->api != kNone ? m.api_range()[next->api] : kNone;
  o.tid = next && next->api != kNone ? m.apis()[next->api].tid : m.main_tid();
  const int64_t mid = g.start_ns + (std::max(g.launch_ns, g.start_ns) - g.start_ns) / 2;
  o.host_range = m.RangeAt(o.tid, mid);
  if (o.host_range == kNone && o.tid != m.main_tid()) o.host_range = m.RangeAt(m.main_tid(), mid);
  // Step starts and "between steps" are evidence of a wait for the next
  // batch only when the steps are host-side ranges: kernel-sequence steps
  // (no step ranges) start where a repeating kernel does, which in a single
  // forward pass is a layer, not a batch.
  const int step = c.StepAtWindow(g.end_ns);
  const bool host_steps = c.steps.method == "nvtx";
  const bool at_step_start = step >= 0 && c.steps.steps[step].first_op == g.next_op;
  const bool first_of_step = host_steps && at_step_start;
  o.between_steps = host_steps && !c.steps.steps.empty() && c.steps.AtHostTime(mid) < 0;
  if (!host_steps && at_step_start) w->undecided_data_ns += g.length();
  auto data_range = [&](uint32_t r) {
    return r != kNone && IsDataLoadingRangeName(m.String(m.nvtx()[r].name));
  };
  o.in_data = data_range(o.host_range) || data_range(o.launch_range);
  const bool step_edge = first_of_step || o.between_steps;
  if (step_edge && no_loader && !o.in_data) w->no_loader_data_ns += g.length();
  if ((step_edge && !no_loader) || o.in_data) {
    o.owner = GapOwner::kDataLoading;
  } else if (g.next_op != kNone && stretch[g.next_op] >= 0) {
    o.owner = PerParamOptimizerRange(m, o.launch_range) ? GapOwner::kPerParamOptimizer
                                                        : GapOwner::kLaunchBound;
    o.stretch = stretch[g.next_op];
  } else {
    o.owner = GapOwner::kHostWait;
  }
  return o;
}

// The round trip that keeps each stretch from being captured, -1 for none
// (GapOwners::stretch_blocker): a round trip between two launches of the
// stretch (a synchronization cannot be captured), a data-dependent one right
// before it (its shapes come from the value read back; one right after it
// ends the capture, which can hold what came before), or a loop of them
// around it, forward or backward.
std::vector<int32_t> StretchBlockers(const RuleContext& c, const std::vector<int32_t>& stretch,
                                     const std::vector<Finding::Span>& spans) {
  const size_t nstretches = spans.size();
  std::vector<int32_t> blocker(nstretches, -1);
  auto of = [&](uint32_t op) { return op == kNone || op >= stretch.size() ? -1 : stretch[op]; };
  for (size_t i = 0; i < c.round_trips.size(); ++i) {
    const RoundTrip& t = c.round_trips[i];
    const int32_t before = of(t.op_before), after = of(t.op_after);
    std::vector<int32_t> hit;
    if (before >= 0 && before == after) hit.push_back(before);
    if (t.data_dependent) hit.push_back(after);
    for (int32_t s : hit) {
      if (s >= 0 && blocker[s] < 0) blocker[s] = static_cast<int32_t>(i);
    }
  }
  // Overlapping a loop of round trips or its backward: data-dependent shapes.
  for (size_t s = 0; s < nstretches; ++s) {
    for (const RoundTripLoop& l : c.round_trip_loops) {
      for (const Finding::Span& r : l.regions) {
        if (blocker[s] >= 0 || r.tid != spans[s].tid || r.end_ns <= spans[s].start_ns ||
            r.start_ns >= spans[s].end_ns)
          continue;
        blocker[s] = l.trips.front();
      }
    }
  }
  return blocker;
}

}  // namespace

bool IsDataLoadingRangeName(std::string_view name) {
  std::string lower(name.substr(0, 4096));
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // C++ operators (aten::batch_norm, c10d::broadcast_) are never data loading.
  if (lower.find("::") != std::string::npos) return false;
  for (const char* k : {"dataloader", "data_loader", "__next__", "_next_data", "prefetch"}) {
    if (lower.find(k) != std::string::npos) return true;
  }
  // Whole words only: "DistributedDataParallel.forward" is one word and a
  // forward; "convolution_backward_data" is a backward.
  std::vector<std::string_view> words;
  std::string_view v = lower;
  for (size_t i = 0; i < v.size();) {
    while (i < v.size() && !std::isalnum(static_cast<unsigned char>(v[i]))) ++i;
    size_t j = i;
    while (j < v.size() && std::isalnum(static_cast<unsigned char>(v[j]))) ++j;
    if (j > i) words.push_back(v.substr(i, j - i));
    i = j;
  }
  auto has = [&](std::initializer_list<std::string_view> ks) {
    for (std::string_view w : words) {
      for (std::string_view k : ks) {
        if (w == k) return true;
      }
    }
    return false;
  };
  if (has({"forward", "backward"})) return false;
  if (has({"data", "loader", "loading"})) return true;
  return has({"batch", "input", "inputs"}) &&
         has({"load", "get", "next", "fetch", "read", "prepare"});
}

GapOwners OwnGaps(const RuleContext& c) {
  const TraceModel& m = c.m;
  GapOwners w;
  const std::vector<int32_t> stretch =
      c.device >= 0 ? LaunchBoundStretches(c, &w.stretch_len) : std::vector<int32_t>();
  // Host extent of each stretch's launches (thread of its first launch).
  w.stretch_span.assign(w.stretch_len.size(), {0, INT64_MAX, INT64_MIN});
  for (size_t i = 0; i < stretch.size(); ++i) {
    if (stretch[i] < 0 || m.gpu_ops()[i].api == kNone) continue;
    const ApiRecord& a = m.apis()[m.gpu_ops()[i].api];
    Finding::Span& sp = w.stretch_span[stretch[i]];
    if (a.start_ns < sp.start_ns) {
      sp.start_ns = a.start_ns;
      sp.tid = a.tid;
    }
    sp.end_ns = std::max(sp.end_ns, a.end_ns);
  }
  w.stretch_blocker = StretchBlockers(c, stretch, w.stretch_span);
  const bool no_loader = NoDataLoader(m);
  w.gaps.reserve(c.gaps.size());
  for (const GpuGap& g : c.gaps) {
    // A synchronization outside every step (torch.cuda.synchronize() between
    // warm-up and timed steps) is not a per-step cost: what the host did
    // after it returned decides, as for a host-wait gap.
    const int64_t block_t = g.blocking_api != kNone    ? m.apis()[g.blocking_api].start_ns
                            : g.blocking_sync != kNone ? m.syncs()[g.blocking_sync].start_ns
                                                       : -1;
    const bool sync_in_step = block_t >= 0 && c.steps.AtHostTime(block_t) >= 0;
    if (g.cause == GapCause::kSyncWait && (sync_in_step || c.steps.steps.empty())) {
      OwnedGap o;
      o.owner = SyncWaitOwner(c, g);
      w.gaps.push_back(o);
    } else if (g.cause != GapCause::kHostWait && g.cause != GapCause::kSyncWait) {
      w.gaps.push_back({});
    } else {
      w.gaps.push_back(HostWaitOwner(c, g, stretch, no_loader, &w));
    }
  }
  return w;
}

std::vector<size_t> RuleContext::GapsOf(GapOwner owner) const {
  std::vector<size_t> v;
  for (size_t i = 0; i < owners.gaps.size(); ++i) {
    if (owners.gaps[i].owner == owner) v.push_back(i);
  }
  return v;
}

void GapGroup::Add(const RuleContext& c, const GpuGap& g, uint32_t host_range) {
  f.cost_ns += g.length();
  f.gap_ns[static_cast<int>(g.cause)] += g.length();
  ++f.count;
  const int s = c.StepAtWindow(g.end_ns);
  if (s >= 0) steps.push_back(s);
  const uint32_t where = c.WhereRange(host_range);
  FindingExample e{s >= 0 ? c.steps.steps[s].number : -1, g.start_ns, g.end_ns,
                   where == kNone ? "" : c.m.String(c.m.nvtx()[where].name), g.length()};
  f.examples.push_back(e);
  std::sort(f.examples.begin(), f.examples.end(),
            [](const FindingExample& a, const FindingExample& b) { return a.cost_ns > b.cost_ns; });
  if (f.examples.size() > 3) f.examples.resize(3);
}

void GapGroup::Finish(const RuleContext& c) {
  const std::string s = c.StepsText(steps);
  f.where = (s.empty() ? "" : s + ", ") + "device " + std::to_string(c.device);
  c.FinishAtThreshold(&f);
}

GapGroup BlockingCopyGaps(const RuleContext& c, GapOwner owner) {
  GapGroup grp;
  for (size_t i : c.GapsOf(owner)) {
    const GpuGap& g = c.gaps[i];
    const uint32_t api = g.blocking_api;
    grp.Add(c, g, api != kNone ? c.m.api_range()[api] : kNone);
    if (api != kNone) grp.f.apis.push_back(api);
  }
  grp.f.detail = std::to_string(grp.f.count) + " gaps, " + FormatDuration(grp.f.cost_ns) +
                 " of GPU idle time after the host returned from the blocking call";
  return grp;
}

}  // namespace stepscope
