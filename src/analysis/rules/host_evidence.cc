// Host evidence for `analyze` (docs/host.md, docs/rules.md): the per-step host
// split of the launching thread, and the Python lines findings name (each
// rule's host_evidence, rule.h): the line that issued a sync or blocking copy
// (api_callsite, IssuingPythonLines), the top Python lines of a host-bound
// step (samples, else python_function spans; TopPythonLines). A trace without a
// host model gets none of this (older traces read as before); a trace with one
// but without the evidence a finding needs says so in the finding.
#include <algorithm>
#include <map>

#include "analysis/model/host.h"
#include "analysis/rules/rule.h"
#include "common/strings.h"

namespace stepscope {
namespace {

std::string Pct(int64_t part, int64_t whole) {
  return FormatFixed(whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0, 0) + "%";
}

// "train.py:88 collate 33%, train.py:160 log_metrics 20%" (up to n lines).
std::string TopLines(const PythonHotspots& h, size_t n) {
  std::string s;
  for (size_t i = 0; i < h.lines.size() && i < n; ++i) {
    if (h.lines[i].self_ns <= 0) break;
    s += (s.empty() ? "" : ", ") + h.lines[i].label + " " + Pct(h.lines[i].self_ns, h.total_ns);
  }
  return s;
}

uint32_t LaunchingThread(const TraceModel& m, const Step& s) {
  return s.tid != 0 ? s.tid : m.main_tid();
}

HostStepSplit SplitOf(const TraceModel& m, const Step& st, uint32_t tid,
                      const std::vector<HostSegment>& segs, HostSource src,
                      const std::vector<Interval>& api_calls,
                      const std::vector<Interval>& blocking_calls) {
  HostStepSplit h;
  h.step = st.number;
  h.tid = tid;
  h.source = HostSourceName(src);
  const int64_t s0 = st.range_start_ns, s1 = st.range_end_ns;
  h.step_ns = s1 - s0;
  const std::vector<Interval> window = {{s0, s1}};
  int64_t covered = 0;
  for (const HostSegment& g : segs) {
    const int64_t a = std::max(g.start_ns, s0), b = std::min(g.end_ns, s1);
    if (b <= a) continue;
    const int64_t d = b - a;
    covered += d;
    switch (g.state) {
      case ThreadState::kRunning: {
        const int64_t sync = Overlap(a, b, blocking_calls);
        const int64_t api = Overlap(a, b, api_calls);
        h.sync_ns += sync;
        h.cuda_api_ns += api;
        h.python_ns += std::max<int64_t>(0, d - sync - api);
        break;
      }
      case ThreadState::kBlockedCuda:
        h.sync_ns += d;
        break;
      case ThreadState::kBlockedGil:
        h.gil_ns += d;
        break;
      case ThreadState::kUnknown:
        h.unknown_ns += d;
        break;
      default:
        (IsDataLoaderStack(m, g.callsite) ? h.dataloader_ns : h.other_blocked_ns) += d;
        break;
    }
  }
  h.unknown_ns += std::max<int64_t>(0, h.step_ns - covered);
  if (src == HostSource::kSamples)
    h.top_python = TopLines(ComputePythonHotspots(m, tid, window), 3);
  return h;
}

}  // namespace

void HostEvidence(const RuleContext& c, Analysis* a) {
  const TraceModel& m = c.m;
  if (!HasHostModel(m)) return;
  // Per steady step: the launching thread's split.
  std::map<uint32_t, std::pair<std::vector<HostSegment>, HostSource>> segs;
  std::map<uint32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> calls;
  for (const Step& s : a->steps.steps) {
    if (!s.steady() || s.range_end_ns <= s.range_start_ns) continue;
    const uint32_t tid = LaunchingThread(m, s);
    if (!segs.count(tid)) {
      HostSource src;
      std::vector<HostSegment> v = ThreadSegments(m, tid, &src);
      segs[tid] = {std::move(v), src};
      auto& [api, blocking] = calls[tid];
      for (uint32_t i : m.ApisOfThread(tid)) {
        const ApiRecord& r = m.apis()[i];
        if (r.end_ns <= r.start_ns) continue;
        (m.IsBlockingApiName(r.name) ? blocking : api).push_back({r.start_ns, r.end_ns});
      }
    }
    a->host_split.push_back(
        SplitOf(m, s, tid, segs[tid].first, segs[tid].second, calls[tid].first, calls[tid].second));
  }
  // The findings' evidence, by their rule.
  for (Finding& f : a->findings) {
    const Rule* r = FindRule(f.rule);
    if (r && r->host_evidence) r->host_evidence(c, *a, &f);
  }
}

void IssuingPythonLines(const RuleContext& c, const Analysis& a, Finding* f) {
  const TraceModel& m = c.m;
  // The calls: the finding's blocking calls, else the launching calls of its copies.
  std::vector<uint32_t> apis = f->apis;
  if (apis.empty()) {
    for (uint32_t op : f->ops) {
      if (op < m.gpu_ops().size() && m.gpu_ops()[op].api != kNone)
        apis.push_back(m.gpu_ops()[op].api);
    }
  }
  if (apis.empty()) return;
  std::vector<std::string> lines;
  for (uint32_t api : apis) lines.push_back(m.ApiPythonLine(m.apis()[api].correlation));
  f->detail += IssuedAtText(lines);
}

std::string IssuedAtText(const std::vector<std::string>& calls) {
  std::map<std::string, int64_t> lines;
  int64_t known = 0;
  for (const std::string& line : calls) {
    if (line.empty()) continue;
    ++lines[line];
    ++known;
  }
  if (known == 0) return "; Python line: not recorded for these calls (no api_callsite rows)";
  std::vector<std::pair<std::string, int64_t>> v(lines.begin(), lines.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string s;
  for (size_t i = 0; i < v.size() && i < 2; ++i) {
    s += (i ? ", " : "") + v[i].first + " (" + std::to_string(v[i].second) + " of " +
         std::to_string(calls.size()) + " calls)";
  }
  return "; issued at " + s;
}

void TopPythonLines(const RuleContext& c, const Analysis& a, Finding* f) {
  const TraceModel& m = c.m;
  uint32_t tid = f->host_spans.empty() ? 0 : f->host_spans.front().tid;
  if (tid == 0) tid = m.main_tid();
  std::vector<Interval> windows;
  for (const Step& s : a.steps.steps) {
    if (s.steady() && s.range_end_ns > s.range_start_ns)
      windows.push_back({s.range_start_ns, s.range_end_ns});
  }
  std::sort(windows.begin(), windows.end(),
            [](const Interval& x, const Interval& y) { return x.start < y.start; });
  const PythonHotspots h = ComputePythonHotspots(m, tid, windows);
  const std::string top = TopLines(h, 3);
  if (top.empty()) {
    f->detail +=
        "; top Python lines: not recorded (no host samples or python_function spans "
        "of thread " +
        std::to_string(tid) + ")";
  } else {
    f->detail +=
        "; top Python lines of thread " + std::to_string(tid) + " (" + h.source + "): " + top;
  }
}

}  // namespace stepscope
