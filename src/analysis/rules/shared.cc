// Helpers the rule files share (rule.h): ops into a finding, the copy rules'
// finding, a finding's selections as the replay takes them, and the fix of
// the blocking-call rules.
#include <algorithm>
#include <set>

#include "analysis/rules/rule.h"

namespace stepscope {

int64_t OpTime(const TraceModel& m, const GpuOp& o) {
  return o.api != kNone ? m.apis()[o.api].start_ns : o.start_ns;
}

uint32_t OpRange(const TraceModel& m, const GpuOp& o) {
  return o.api != kNone ? m.api_range()[o.api] : kNone;
}

std::string Mb(uint64_t bytes) { return FormatFixed(bytes / 1e6, 1) + " MB"; }

void OpGroup::Add(const RuleContext& c, int64_t host_t, int64_t s, int64_t e, int64_t cost,
                  uint32_t range) {
  f.cost_ns += cost;
  ++f.count;
  const int st = c.steps.AtHostTime(host_t);
  if (st >= 0) steps.push_back(st);
  const std::string rn = range == kNone ? "" : c.m.String(c.m.nvtx()[range].name);
  by_range[c.RangeName(range)] += cost;
  f.examples.push_back({st >= 0 ? c.steps.steps[st].number : -1, s, e, rn, cost});
  std::sort(f.examples.begin(), f.examples.end(),
            [](const FindingExample& a, const FindingExample& b) { return a.cost_ns > b.cost_ns; });
  if (f.examples.size() > 3) f.examples.resize(3);
}

std::string OpGroup::Ranges() const {
  std::vector<std::pair<int64_t, std::string>> v;
  for (const auto& [k, t] : by_range) v.push_back({-t, k});
  std::sort(v.begin(), v.end());
  std::string s;
  for (size_t i = 0; i < v.size() && i < 3; ++i) {
    s += (i ? ", " : "") + v[i].second + " " + FormatDuration(-v[i].first);
  }
  return s;
}

std::string OpGroup::Where(const RuleContext& c, bool with_times) const {
  std::string s = c.StepsText(steps);
  std::string r = Ranges();
  if (!with_times) {
    r.clear();
    size_t n = 0;
    for (const auto& [k, t] : by_range) r += (n++ ? ", " : "") + k;
  }
  if (!r.empty()) s += (s.empty() ? "" : "; ") + std::string("in ") + r;
  return s;
}

CopyGroup::CopyGroup(const RuleContext& c, GapOwner owner, const char* rule_id)
    : rule(rule_id), gaps(BlockingCopyGaps(c, owner)) {
  gaps.f.rule = rule;
}

void CopyGroup::Add(const RuleContext& c, uint32_t row, int64_t cost) {
  const GpuOp& o = c.m.gpu_ops()[row];
  ops.Add(c, OpTime(c.m, o), o.start_ns, o.end_ns, std::max<int64_t>(cost, 0), OpRange(c.m, o));
  ops.f.ops.push_back(row);
  op_ns += o.end_ns - o.start_ns;
  if (o.kind == GpuOpKind::kMemcpy) bytes += c.m.memcpys()[o.index].bytes;
  if (o.api == kNone) return;
  ops.f.apis.push_back(o.api);
  blocked_ns += std::max<int64_t>(0, c.m.apis()[o.api].end_ns - c.m.apis()[o.api].start_ns);
}

void CopyGroup::Emit(const RuleContext& c, std::string title, std::string detail,
                     const char* no_gaps, std::string fix, int64_t own_cost,
                     std::vector<Finding>* out) {
  if (ops.f.count == 0) {
    if (gaps.f.count > 0) {
      gaps.Finish(c);
      out->push_back(gaps.f);
    }
    return;
  }
  Finding& f = ops.f;
  f.rule = rule;
  f.title = std::move(title);
  f.where = ops.Where(c, false);
  f.cost_ns = own_cost + gaps.f.cost_ns;
  for (int k = 0; k < 4; ++k) f.gap_ns[k] = gaps.f.gap_ns[k];
  f.detail = std::move(detail) + (gaps.f.count > 0 ? "; " + gaps.f.detail : no_gaps);
  f.fix = std::move(fix);
  c.FinishAtThreshold(&f);
  out->push_back(f);
}

std::vector<uint32_t> OpNodes(const whatif::Graph& g, const std::vector<uint32_t>& ops) {
  std::vector<uint32_t> v;
  for (uint32_t o : ops) {
    if (o < g.op_node.size() && g.op_node[o] != kNone) v.push_back(g.op_node[o]);
  }
  return v;
}

std::vector<whatif::HostSpan> HostSpansOf(const std::vector<Finding::Span>& spans) {
  using whatif::HostSpan;
  std::vector<HostSpan> v;
  for (const Finding::Span& s : spans) v.push_back({s.tid, s.start_ns, s.end_ns});
  std::sort(v.begin(), v.end(), [](const HostSpan& a, const HostSpan& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.start_ns < b.start_ns;
  });
  v.erase(std::unique(v.begin(), v.end(),
                      [](const HostSpan& a, const HostSpan& b) {
                        return a.tid == b.tid && a.start_ns == b.start_ns && a.end_ns == b.end_ns;
                      }),
          v.end());
  return v;
}

// The blocking calls a fix takes out of the loop: every blocking call in the
// NVTX ranges of the finding's calls (loss.item() is a device-to-host copy and
// a stream synchronization; avoiding it removes both), or, outside every
// range, the calls of the same name; in the analyzed windows.
Fix RemoveLikeWaits(const PricingContext& p, Finding* f) {
  const RuleContext& c = p.c;
  const whatif::Graph& g = p.g;
  std::set<uint32_t> ranges;
  std::set<StringId> names;
  for (uint32_t a : f->apis) {
    const uint32_t r = c.m.api_range()[a];
    if (r != kNone && !(r < c.is_step_range.size() && c.is_step_range[r])) {
      ranges.insert(c.m.nvtx()[r].name);
    } else {
      names.insert(c.m.apis()[a].name);
    }
  }
  std::vector<uint32_t> calls;
  for (uint32_t a = 0; a < c.m.apis().size(); ++a) {
    const ApiRecord& r = c.m.apis()[a];
    if (g.call_node[a] == kNone) continue;  // outside the replayed steps
    const whatif::Node& n = g.nodes[g.call_node[a]];
    if (n.block == whatif::BlockKind::kNone || n.block == whatif::BlockKind::kQueueFull) continue;
    if (!c.InWindows(r.start_ns)) continue;
    const uint32_t range = c.m.api_range()[a];
    const bool in_range = range != kNone && ranges.count(c.m.nvtx()[range].name);
    if (in_range || names.count(r.name)) calls.push_back(g.call_node[a]);
  }
  return {[=](whatif::Graph* x) { return whatif::RemoveWaits(x, calls); },
          "the host does not wait in " + std::to_string(calls.size()) + " calls"};
}

Fix RemoveRoundTripsOf(const PricingContext& p, const std::vector<int32_t>& trips) {
  const whatif::Graph& g = p.g;
  std::vector<uint32_t> calls, copies;
  for (int32_t i : trips) {
    const RoundTrip& t = p.c.round_trips[i];
    for (uint32_t a : t.calls) {
      if (g.call_node[a] != kNone) calls.push_back(g.call_node[a]);
    }
    if (t.reads_value && g.op_node[t.read_back] != kNone) copies.push_back(g.op_node[t.read_back]);
  }
  return {[=](whatif::Graph* x) { return whatif::RemoveRoundTrips(x, calls, copies); },
          "without the " + std::to_string(trips.size()) +
              " round trips: no wait, no read-back copy (" + std::to_string(calls.size()) +
              " calls, " + std::to_string(copies.size()) + " copies in the replayed steps)"};
}

}  // namespace stepscope
