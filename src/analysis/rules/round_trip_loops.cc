// Loops of host round trips (rule.h, RoundTripLoop; docs/rules.md
// "data_dependent_sync"): a data-dependent op inside a Python loop over items
// (experts, samples, classes) reads a value back once per item, and the loop
// launches the same op sequence per item. The fix that removes the round trip
// (a fixed-capacity dispatch) also runs the loop once, batched: found here
// are the loop's iterations on the launching thread, and the same repetition
// in the backward pass on the thread that launches it (the autograd thread).
#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/rules/rule.h"

namespace stepscope {
namespace {

// A launch's token for comparing iterations: a GEMM is one token whatever its
// tile (cuBLAS picks it by shape), another kernel its name without template
// arguments, a copy or memset its kind.
std::string Token(const TraceModel& m, const GpuOp& o) {
  if (o.kind != GpuOpKind::kKernel) return m.OpName(o);
  const StringId name = m.kernels()[o.index].name;
  if (m.NameInfo(name).gemm != GemmPrecision::kNotGemm) return "gemm";
  std::string out;
  int depth = 0;
  for (char ch : KernelBaseName(m.String(name))) {
    if (ch == '<') {
      ++depth;
    } else if (ch == '>') {
      depth = depth > 0 ? depth - 1 : 0;
    } else if (depth == 0) {
      out += ch;
    }
  }
  return out.find("splitKreduce") != std::string::npos ? "gemm" : out;
}

// One thread's launches in time order: call start, token (an id per text).
struct Launches {
  std::vector<int64_t> t;
  std::vector<uint32_t> tok;
  size_t At(int64_t time) const {  // first launch at or after `time`
    return static_cast<size_t>(std::lower_bound(t.begin(), t.end(), time) - t.begin());
  }
};

std::map<uint32_t, Launches> LaunchesByThread(const TraceModel& m) {
  std::map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>> v;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.api != kNone) v[m.apis()[o.api].tid].push_back({m.apis()[o.api].start_ns, i});
  }
  std::map<uint32_t, Launches> out;
  std::map<std::string, uint32_t> ids;
  for (auto& [tid, x] : v) {
    std::sort(x.begin(), x.end());
    Launches& l = out[tid];
    for (const auto& [t, op] : x) {
      l.t.push_back(t);
      l.tok.push_back(ids.try_emplace(Token(m, m.gpu_ops()[op]), static_cast<uint32_t>(ids.size()))
                          .first->second);
    }
  }
  return out;
}

// Two iterations launch the same ops: the same length and at least 80% of the
// tokens equal, position by position (a kernel picked by shape may differ).
bool Similar(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty() || a.size() != b.size()) return false;
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return same * 5 >= a.size() * 4;
}

std::vector<uint32_t> Slice(const Launches& l, size_t from, size_t to) {
  to = std::min(to, l.tok.size());
  return from < to ? std::vector<uint32_t>(l.tok.begin() + from, l.tok.begin() + to)
                   : std::vector<uint32_t>();
}

// The loops among one thread's round trips of one site in one step (sorted):
// runs of iterations (the launches from one round trip to the next) that
// repeat; the last iteration is compared with what follows its round trip.
void ForwardLoops(const RuleContext& c, const Launches& l, const std::vector<int32_t>& trips,
                  std::vector<RoundTripLoop>* out) {
  const size_t n = trips.size();
  if (n < 2) return;
  std::vector<char> similar(n - 1, 0);
  for (size_t k = 0; k + 1 < n; ++k) {
    const RoundTrip& a = c.round_trips[trips[k]];
    const RoundTrip& b = c.round_trips[trips[k + 1]];
    const std::vector<uint32_t> body = Slice(l, l.At(a.end_ns), l.At(b.start_ns));
    const size_t next0 = l.At(b.end_ns);
    const size_t next1 =
        k + 2 < n ? l.At(c.round_trips[trips[k + 2]].start_ns) : next0 + body.size();
    similar[k] = Similar(body, Slice(l, next0, next1));
  }
  for (size_t a = 0; a + 1 < n;) {
    if (!similar[a]) {
      ++a;
      continue;
    }
    size_t b = a;
    while (b + 1 < n - 1 && similar[b + 1]) ++b;
    // Iterations a..b+1 repeat; the round trip after them (same site, the
    // iteration before it confirmed) starts the last one, which what follows
    // the loop cuts short.
    const size_t last = std::min(b + 2, n - 1);
    RoundTripLoop loop;
    loop.trips.assign(trips.begin() + a, trips.begin() + last + 1);
    loop.tid = c.round_trips[trips[a]].tid;
    loop.step = c.round_trips[trips[a]].step;
    loop.body = l.At(c.round_trips[trips[a + 1]].start_ns) - l.At(c.round_trips[trips[a]].end_ns);
    // All iterations but the last go: from the first round trip to the last.
    const int64_t t0 = c.round_trips[trips[a]].start_ns, t1 = c.round_trips[trips[last]].start_ns;
    loop.removed.push_back({loop.tid, t0, t1});
    // The loop's launches with data-dependent shapes: from its first round
    // trip to the end of its last iteration (as many launches after the last
    // round trip as an iteration has).
    const size_t i1 = l.At(c.round_trips[trips[last]].end_ns);
    const size_t tail = std::min(i1 + loop.body, l.t.size() - 1);
    loop.regions.push_back({loop.tid, t0, l.t[tail]});
    out->push_back(std::move(loop));
    a = last;
  }
}

// The loop's backward on another thread of the step: a run of launches that
// repeats with a period of 1/2 to 4 times the forward iteration's launches,
// about as many times as the loop iterates (E - 1 to E + 1; at least 85% of
// the tokens equal one period later). All periods but one go.
bool BackwardRun(const Launches& l, size_t from, size_t to, const RoundTripLoop& loop,
                 std::vector<char>* claimed, Finding::Span* removed, Finding::Span* region) {
  const size_t e = loop.trips.size();
  // Prefix sums over [from, to): launches already claimed by a run, and per
  // period, launches equal to the one a period later.
  std::vector<size_t> taken(to - from + 1, 0), same(to - from + 1, 0);
  for (size_t k = from; k < to; ++k) taken[k - from + 1] = taken[k - from] + (*claimed)[k];
  size_t best_i = 0, best_p = 0, best_r = 0;
  for (size_t p = std::max<size_t>(3, loop.body / 2); p <= 4 * loop.body && p < to - from; ++p) {
    for (size_t k = from; k < to; ++k)
      same[k - from + 1] = same[k - from] + (k + p < to && l.tok[k] == l.tok[k + p]);
    for (size_t i = from; i + p < to; ++i) {
      for (size_t r = e + 1; r >= std::max<size_t>(2, e - 1); --r) {
        const size_t span = (r - 1) * p, end = i + r * p;
        if (end > to || taken[end - from] != taken[i - from]) continue;
        if ((same[i + span - from] - same[i - from]) * 20 < span * 17) continue;
        if (r * p > best_r * best_p) best_i = i, best_p = p, best_r = r;
        break;
      }
    }
  }
  if (best_r == 0) return false;
  const size_t end = best_i + best_r * best_p;
  for (size_t k = best_i; k < end; ++k) (*claimed)[k] = 1;
  removed->start_ns = l.t[best_i + best_p];
  removed->end_ns = end < l.t.size() ? l.t[end] : l.t.back() + 1;
  region->start_ns = l.t[best_i];
  region->end_ns = removed->end_ns;
  return true;
}

}  // namespace

std::vector<RoundTripLoop> FindRoundTripLoops(const RuleContext& c) {
  // The data-dependent round trips by thread, step and site, in time order.
  std::map<std::tuple<uint32_t, int, std::string>, std::vector<int32_t>> groups;
  for (size_t i = 0; i < c.round_trips.size(); ++i) {
    const RoundTrip& t = c.round_trips[i];
    if (t.data_dependent)
      groups[{t.tid, t.step, t.op + "\x01" + t.line}].push_back(static_cast<int32_t>(i));
  }
  if (groups.empty()) return {};
  const std::map<uint32_t, Launches> launches = LaunchesByThread(c.m);
  std::vector<RoundTripLoop> loops;
  for (const auto& [key, v] : groups) {
    auto l = launches.find(std::get<0>(key));
    if (l != launches.end()) ForwardLoops(c, l->second, v, &loops);
  }
  // The backward of each loop: on the step's other launching threads.
  std::map<std::pair<uint32_t, int>, std::vector<char>> claimed;
  for (RoundTripLoop& loop : loops) {
    const Step& s = c.steps.steps[loop.step];
    for (const auto& [tid, l] : launches) {
      if (tid == loop.tid) continue;
      const size_t from = l.At(s.range_start_ns), to = l.At(s.range_end_ns);
      if (to <= from) continue;
      std::vector<char>& cl = claimed[{tid, loop.step}];
      cl.resize(l.tok.size(), 0);
      Finding::Span removed{tid, 0, 0}, region{tid, 0, 0};
      if (!BackwardRun(l, from, to, loop, &cl, &removed, &region)) continue;
      loop.removed.push_back(removed);
      loop.regions.push_back(region);
      ++loop.backward_runs;
      break;
    }
  }
  return loops;
}

}  // namespace stepscope
