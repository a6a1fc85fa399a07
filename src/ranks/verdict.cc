// The verdict: which rank straggles, from which step, and why.
//
// In synchronous training every rank's step takes as long as the slowest
// rank's, so step times alone cannot name the straggler; the waits inside
// collectives can. Per step, the rank the others waited for longest (the sum
// over the step's collectives of the median exposed wait it caused: time the
// others' GPUs ran only the collective, collectives.cc) "blocks" that
// step when that sum reaches min_wait (default: the larger of 0.5 ms and 10%
// of the median step). A rank straggles from step S when it blocks S and at
// least 80% of the steps with collectives from S on (at least two when there
// are two).
//
// The cause splits the wait it caused per straggling step (medians over
// those steps) into what its own timeline explains:
//   compute = its non-NCCL kernel busy time - the other ranks' median,
//   host    = its launch lateness on the critical stream - the others' median,
//   communication = the rest (caused - compute - host, not below 0),
// and names the largest. Kernels and NVTX sections with the largest excess
// over the other ranks are the evidence.
//
// Without collectives (no NCCL kernels) the NVRx scores decide: a rank whose
// per-step relative GPU score (cause compute) or step-time score (cause host)
// stays below the threshold by the same 80% rule straggles "by scores".
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ranks/ranks_internal.h"

namespace stepscope {

const char* CauseName(Cause c) {
  switch (c) {
    case Cause::kCompute:
      return "compute";
    case Cause::kHost:
      return "host";
    case Cause::kCommunication:
      return "communication";
    case Cause::kNone:
      break;
  }
  return "none";
}

namespace {

constexpr double kOnsetFraction = 0.8;
constexpr int64_t kMinWaitFloorNs = 500000;
// 10%: on two H200s running the reference workload's DDP with no slow rank,
// one rank systematically arrived last by ~1.3 ms per 15.8 ms step (8%):
// that is jitter, not a straggler (docs/ranks.md).
constexpr double kMinWaitStepFraction = 0.10;
constexpr size_t kEvidence = 3;

// The onset rule over a sequence of step positions: the first i with
// flagged[i] such that flagged holds for >= 80% of [i, n) (and >= min(2, n)
// times). Returns -1 when none.
int Onset(const std::vector<bool>& flagged, int64_t* count, int64_t* seen) {
  const int n = static_cast<int>(flagged.size());
  std::vector<int> suffix(static_cast<size_t>(n) + 1, 0);
  for (int i = n - 1; i >= 0; --i)
    suffix[static_cast<size_t>(i)] =
        suffix[static_cast<size_t>(i) + 1] + (flagged[static_cast<size_t>(i)] ? 1 : 0);
  const int need = std::min(2, n);
  for (int i = 0; i < n; ++i) {
    if (!flagged[static_cast<size_t>(i)]) continue;
    const int c = suffix[static_cast<size_t>(i)];
    if (c >= need && c >= kOnsetFraction * (n - i)) {
      *count = c;
      *seen = n - i;
      return i;
    }
  }
  return -1;
}

// Value of `field` of rank r's step at position p, or NaN when it lacks it.
template <typename F>
double StepValue(const RanksAnalysis& a, size_t r, size_t p, F field) {
  int idx = a.step_index[r][p];
  if (idx < 0) return kNaN;
  return static_cast<double>(field(a.summaries[r].steps[static_cast<size_t>(idx)]));
}

// Median over steps `ps` of (rank r's value - median of the other ranks' values).
template <typename F>
double MedianExcess(const RanksAnalysis& a, size_t r, const std::vector<size_t>& ps, F field) {
  std::vector<double> excess, others;
  for (size_t p : ps) {
    double mine = StepValue(a, r, p, field);
    if (std::isnan(mine)) continue;
    others.clear();
    for (size_t o = 0; o < a.ranks.size(); ++o) {
      if (o == r) continue;
      double v = StepValue(a, o, p, field);
      if (!std::isnan(v)) others.push_back(v);
    }
    if (!others.empty()) excess.push_back(mine - MedianOf(others));
  }
  double m = MedianOf(std::move(excess));
  return std::isnan(m) ? 0 : m;
}

// Per-step total of `name` in `list` at summary step index idx (0 when absent).
int64_t TotalAt(const std::vector<NamedTimes>& list,
                const std::unordered_map<std::string, size_t>& idx_of, const std::string& name,
                int step) {
  auto it = idx_of.find(name);
  if (it == idx_of.end() || step < 0) return 0;
  return list[it->second].total_ns[static_cast<size_t>(step)];
}

// The names of rank r with the largest median per-step excess over the others.
std::vector<std::pair<std::string, double>> TopExcess(const RanksAnalysis& a, size_t r,
                                                      const std::vector<size_t>& ps, bool kernels,
                                                      std::vector<std::string>* only_here) {
  auto list_of = [&](size_t rank) -> const std::vector<NamedTimes>& {
    return kernels ? a.summaries[rank].kernels : a.summaries[rank].sections;
  };
  std::vector<std::unordered_map<std::string, size_t>> index(a.ranks.size());
  for (size_t o = 0; o < a.ranks.size(); ++o) {
    const auto& list = list_of(o);
    for (size_t i = 0; i < list.size(); ++i) index[o].emplace(list[i].name, i);
  }
  std::vector<std::pair<std::string, double>> out;
  std::vector<double> excess, others;
  for (const NamedTimes& n : list_of(r)) {
    if (n.nccl) continue;
    bool elsewhere = false;
    excess.clear();
    for (size_t p : ps) {
      const int mine_idx = a.step_index[r][p];
      if (mine_idx < 0) continue;
      others.clear();
      for (size_t o = 0; o < a.ranks.size(); ++o) {
        if (o == r || a.step_index[o][p] < 0) continue;
        if (index[o].count(n.name)) elsewhere = true;
        others.push_back(
            static_cast<double>(TotalAt(list_of(o), index[o], n.name, a.step_index[o][p])));
      }
      if (others.empty()) continue;
      excess.push_back(static_cast<double>(n.total_ns[static_cast<size_t>(mine_idx)]) -
                       MedianOf(others));
    }
    if (!elsewhere && only_here && a.ranks.size() > 1) only_here->push_back(n.name);
    double m = MedianOf(excess);
    if (!std::isnan(m) && m > 0) out.emplace_back(n.name, m);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (out.size() > kEvidence) out.resize(kEvidence);
  return out;
}

void Explain(RanksAnalysis* a, Straggler* s, const std::vector<size_t>& ps) {
  const size_t r = static_cast<size_t>(s->rank_index);
  s->compute_excess_ns =
      MedianExcess(*a, r, ps, [](const StepSummary& st) { return st.compute_ns; });
  s->host_excess_ns =
      MedianExcess(*a, r, ps, [](const StepSummary& st) { return st.launch_late_ns; });
  if (!s->by_scores) {
    std::vector<double> caused;
    for (size_t p : ps) caused.push_back(static_cast<double>(a->caused[r][p]));
    s->caused_ns = MedianOf(caused);
    s->comm_ns = std::max(
        0.0, s->caused_ns - std::max(0.0, s->compute_excess_ns) - std::max(0.0, s->host_excess_ns));
    const double c = std::max(0.0, s->compute_excess_ns), h = std::max(0.0, s->host_excess_ns);
    if (c >= h && c >= s->comm_ns) {
      s->cause = Cause::kCompute;
    } else if (h >= s->comm_ns) {
      s->cause = Cause::kHost;
    } else {
      s->cause = Cause::kCommunication;
    }
  }
  s->kernels = TopExcess(*a, r, ps, true, nullptr);
  s->sections = TopExcess(*a, r, ps, false, &s->only_here);
  // Evidence must matter: at least a tenth of the largest number explained.
  const double floor =
      0.1 * std::max({s->caused_ns, std::fabs(s->compute_excess_ns), std::fabs(s->host_excess_ns)});
  auto small = [&](const std::pair<std::string, double>& e) { return e.second < floor; };
  s->kernels.erase(std::remove_if(s->kernels.begin(), s->kernels.end(), small), s->kernels.end());
  s->sections.erase(std::remove_if(s->sections.begin(), s->sections.end(), small),
                    s->sections.end());
}

// Per step position: rank r's relative score of a per-step metric
// (best rank's value / r's value), flagged when below the threshold.
std::vector<std::vector<bool>> StepScoreFlags(const RanksAnalysis& a, const std::vector<size_t>& ps,
                                              bool gpu) {
  const size_t nranks = a.ranks.size();
  std::vector<std::vector<bool>> flags(nranks, std::vector<bool>(ps.size(), false));
  // GPU: one global id per non-NCCL kernel name.
  std::unordered_map<std::string, size_t> ids;
  if (gpu) {
    for (const RankSummary& s : a.summaries) {
      for (const NamedTimes& n : s.kernels) {
        if (!n.nccl) ids.emplace(n.name, ids.size());
      }
    }
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    const size_t p = ps[i];
    std::vector<size_t> present;
    std::vector<std::vector<WindowStat>> stats;
    for (size_t r = 0; r < nranks; ++r) {
      const int idx = a.step_index[r][p];
      if (idx < 0) continue;
      present.push_back(r);
      if (gpu) {
        std::vector<WindowStat> row(ids.size());
        for (const NamedTimes& n : a.summaries[r].kernels) {
          if (!n.nccl) row[ids[n.name]] = MakeWindowStat(n, {idx});
        }
        stats.push_back(std::move(row));
      } else {
        WindowStat w;
        w.median_ns = static_cast<double>(a.summaries[r].steps[static_cast<size_t>(idx)].host_ns());
        w.total_ns = w.median_ns;
        stats.push_back({w});
      }
    }
    if (present.size() < 2) continue;
    std::vector<double> scores;
    if (gpu) {
      scores = RelativeGpuScores(stats);
    } else {
      for (const auto& row : RelativeSectionScores(stats)) scores.push_back(row[0]);
    }
    for (size_t j = 0; j < present.size(); ++j) {
      flags[present[j]][i] = !std::isnan(scores[j]) && scores[j] < a.options.threshold;
    }
  }
  return flags;
}

}  // namespace

void FindStragglers(RanksAnalysis* a, const std::vector<bool>& steps_with_collectives) {
  const size_t nranks = a->ranks.size();
  // The wait that counts: explicit, or max(0.5 ms, 10% of the median step).
  if (a->options.min_wait_ns >= 0) {
    a->min_wait_ns = a->options.min_wait_ns;
  } else {
    std::vector<double> steps;
    for (const RankResult& r : a->ranks) {
      if (!std::isnan(r.step_ns)) steps.push_back(r.step_ns);
    }
    double med = MedianOf(steps);
    a->min_wait_ns = std::max<int64_t>(
        kMinWaitFloorNs, std::isnan(med) ? 0 : static_cast<int64_t>(med * kMinWaitStepFraction));
  }

  std::vector<size_t> ps;  // step positions with collectives
  for (size_t p = 0; p < steps_with_collectives.size(); ++p) {
    if (steps_with_collectives[p]) ps.push_back(p);
  }
  if (!ps.empty()) {
    std::vector<int> blocking(ps.size(), -1);
    for (size_t i = 0; i < ps.size(); ++i) {
      int64_t best = -1;
      for (size_t r = 0; r < nranks; ++r) {
        const int64_t c = a->caused[r][ps[i]];
        if (c >= a->min_wait_ns && c > best) best = c, blocking[i] = static_cast<int>(r);
      }
    }
    for (size_t r = 0; r < nranks; ++r) {
      std::vector<bool> flagged(ps.size());
      for (size_t i = 0; i < ps.size(); ++i) flagged[i] = blocking[i] == static_cast<int>(r);
      Straggler s;
      int onset = Onset(flagged, &s.steps_blocking, &s.steps_seen);
      if (onset < 0) continue;
      s.rank_index = static_cast<int>(r);
      s.from_step = a->steps[ps[static_cast<size_t>(onset)]];
      std::vector<size_t> mine;
      for (size_t i = static_cast<size_t>(onset); i < ps.size(); ++i) {
        if (flagged[i]) mine.push_back(ps[i]);
      }
      Explain(a, &s, mine);
      a->stragglers.push_back(std::move(s));
    }
    return;
  }

  // No collectives: decide by per-step scores over the steps shared by two or more ranks.
  std::vector<size_t> all;
  for (size_t p = 0; p < a->steps.size(); ++p) all.push_back(p);
  for (bool gpu : {true, false}) {
    auto flags = StepScoreFlags(*a, all, gpu);
    for (size_t r = 0; r < nranks; ++r) {
      bool already = false;
      for (const Straggler& s : a->stragglers) already |= s.rank_index == static_cast<int>(r);
      if (already) continue;
      Straggler s;
      int onset = Onset(flags[r], &s.steps_blocking, &s.steps_seen);
      if (onset < 0) continue;
      s.rank_index = static_cast<int>(r);
      s.by_scores = true;
      s.from_step = a->steps[all[static_cast<size_t>(onset)]];
      s.cause = gpu ? Cause::kCompute : Cause::kHost;
      std::vector<size_t> mine;
      for (size_t i = static_cast<size_t>(onset); i < all.size(); ++i) {
        if (flags[r][i]) mine.push_back(all[i]);
      }
      Explain(a, &s, mine);
      a->stragglers.push_back(std::move(s));
    }
  }
}

}  // namespace stepscope
