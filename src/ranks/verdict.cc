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
// those steps) into what its own timeline explains. Its kernel-time excess,
//   compute_excess = its non-NCCL kernel busy time - the other ranks' median,
// is split by kernel name into two different things. Per step and non-NCCL
// kernel name, with
//   c = its instances, m = their median duration (0 when c = 0),
//   C = the other ranks' median instance count (a rank without it counts 0),
//   M = the median of the other ranks' median durations, over those that ran
//       it (0 when none did):
//   slower = min(c, C) x (m - M)    the same kernels taking longer on it;
//   extra  = (c - C) x m  if c > C  instances the others do not run, at its
//                                   duration (all of them when C = 0);
//            (c - C) x M  if c <= C work the others do that it does not (<= 0),
// so slower + extra = c x m - C x M per name. Summed over names per step,
// then the median over the straggling steps: slower_ns and extra_ns. Their
// sum approximates compute_excess: c x m stands for the name's total (exact
// when its instances last alike), the busy time is a union (concurrent
// kernels count once) and the medians are taken separately.
//   slower kernels = slower_ns: a GPU-side cause (clocks, thermals, a bad
//                    GPU), the cause "compute";
//   extra work     = extra_ns: its program launches work the others do not
//                    (a host-side cause);
//   late launches  = its launch lateness on the critical stream - the
//                    others' median (host_excess_ns: the GPU waited for the
//                    host);
//   communication  = the rest, caused - compute_excess - late (each part
//                    counted when positive; not below 0).
// The cause is compute when slower kernels are at least extra work + late
// launches and the rest, else host (extra work or late launches, the larger)
// when those two together are at least the rest, else communication. Kernels
// with the largest extra work or slowdown and NVTX sections with the largest
// excess over the other ranks are the evidence.
//
// Without collectives (no NCCL kernels) the NVRx scores decide: a rank whose
// per-step relative GPU score (cause compute: the score compares the kernels
// every rank runs) or step-time score (cause host) stays below the threshold
// by the same 80% rule straggles "by scores".
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

const char* CauseDetailName(CauseDetail d) {
  switch (d) {
    case CauseDetail::kSlowerKernels:
      return "slower kernels";
    case CauseDetail::kExtraWork:
      return "extra work";
    case CauseDetail::kLateLaunches:
      return "late launches";
    case CauseDetail::kNone:
      break;
  }
  return "";
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

// The sections of rank r with the largest median per-step excess over the
// others; sections no other rank has go to `only_here`.
std::vector<std::pair<std::string, double>> TopSections(const RanksAnalysis& a, size_t r,
                                                        const std::vector<size_t>& ps,
                                                        std::vector<std::string>* only_here) {
  std::vector<std::unordered_map<std::string, size_t>> index(a.ranks.size());
  for (size_t o = 0; o < a.ranks.size(); ++o) {
    const auto& list = a.summaries[o].sections;
    for (size_t i = 0; i < list.size(); ++i) index[o].emplace(list[i].name, i);
  }
  std::vector<std::pair<std::string, double>> out;
  std::vector<double> excess, others;
  for (const NamedTimes& n : a.summaries[r].sections) {
    bool elsewhere = false;
    excess.clear();
    for (size_t p : ps) {
      const int mine_idx = a.step_index[r][p];
      if (mine_idx < 0) continue;
      others.clear();
      for (size_t o = 0; o < a.ranks.size(); ++o) {
        if (o == r || a.step_index[o][p] < 0) continue;
        if (index[o].count(n.name)) elsewhere = true;
        others.push_back(static_cast<double>(
            TotalAt(a.summaries[o].sections, index[o], n.name, a.step_index[o][p])));
      }
      if (others.empty()) continue;
      excess.push_back(static_cast<double>(n.total_ns[static_cast<size_t>(mine_idx)]) -
                       MedianOf(others));
    }
    if (!elsewhere && a.ranks.size() > 1) only_here->push_back(n.name);
    double m = MedianOf(excess);
    if (!std::isnan(m) && m > 0) out.emplace_back(n.name, m);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (out.size() > kEvidence) out.resize(kEvidence);
  return out;
}

// Splits rank r's kernel-time excess over the steps `ps` into slower kernels
// and extra work (the file's top comment defines both); fills s->slower_ns,
// s->extra_ns and, largest first, the kernels with positive parts.
void SplitKernelExcess(const RanksAnalysis& a, size_t r, const std::vector<size_t>& ps,
                       Straggler* s) {
  const size_t nranks = a.ranks.size();
  std::vector<std::unordered_map<std::string, size_t>> index(nranks);
  std::vector<std::string> names;  // rank r's first, then the ones only others run
  std::unordered_set<std::string> seen;
  for (size_t k = 0; k < nranks; ++k) {
    const size_t o = k == 0 ? r : (k <= r ? k - 1 : k);  // r, then the others in order
    const auto& list = a.summaries[o].kernels;
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].nccl) continue;
      index[o].emplace(list[i].name, i);
      if (seen.insert(list[i].name).second) names.push_back(list[i].name);
    }
  }
  std::vector<double> step_slower(ps.size(), 0), step_extra(ps.size(), 0);
  std::vector<bool> used(ps.size(), false);
  std::vector<double> counts, durations, slower, extra, extra_n, matched_n, mine_d, others_d;
  for (const std::string& name : names) {
    bool elsewhere = false;
    for (size_t o = 0; o < nranks; ++o) elsewhere |= o != r && index[o].count(name) > 0;
    const auto mine_it = index[r].find(name);
    const NamedTimes* mine =
        mine_it == index[r].end() ? nullptr : &a.summaries[r].kernels[mine_it->second];
    slower.clear(), extra.clear(), extra_n.clear(), matched_n.clear();
    mine_d.clear(), others_d.clear();
    for (size_t i = 0; i < ps.size(); ++i) {
      const int mine_idx = a.step_index[r][ps[i]];
      if (mine_idx < 0) continue;
      counts.clear(), durations.clear();
      for (size_t o = 0; o < nranks; ++o) {
        const int idx = a.step_index[o][ps[i]];
        if (o == r || idx < 0) continue;
        auto it = index[o].find(name);
        const NamedTimes* n = it == index[o].end() ? nullptr : &a.summaries[o].kernels[it->second];
        const int64_t c = n ? n->count[static_cast<size_t>(idx)] : 0;
        counts.push_back(static_cast<double>(c));
        if (c > 0) durations.push_back(static_cast<double>(n->median_ns[static_cast<size_t>(idx)]));
      }
      if (counts.empty()) continue;
      used[i] = true;
      const double c = mine ? static_cast<double>(mine->count[static_cast<size_t>(mine_idx)]) : 0;
      const double m =
          c > 0 ? static_cast<double>(mine->median_ns[static_cast<size_t>(mine_idx)]) : 0;
      const double big_c = MedianOf(counts);
      const double big_m = durations.empty() ? 0 : MedianOf(durations);
      const double matched = std::min(c, big_c);
      slower.push_back(matched * (m - big_m));
      extra.push_back((c - big_c) * (c > big_c ? m : big_m));
      extra_n.push_back(c - big_c);
      matched_n.push_back(matched);
      mine_d.push_back(m);
      others_d.push_back(big_m);
      step_slower[i] += slower.back();
      step_extra[i] += extra.back();
    }
    if (slower.empty()) continue;
    const double sl = MedianOf(slower), ex = MedianOf(extra);
    if (ex > 0) {
      s->extra_kernels.push_back(
          {name, ex, MedianOf(extra_n), MedianOf(mine_d), MedianOf(others_d), !elsewhere});
    }
    if (sl > 0) {
      s->slower_kernels.push_back(
          {name, sl, MedianOf(matched_n), MedianOf(mine_d), MedianOf(others_d), !elsewhere});
    }
  }
  std::vector<double> sl, ex;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (used[i]) sl.push_back(step_slower[i]), ex.push_back(step_extra[i]);
  }
  s->slower_ns = sl.empty() ? 0 : MedianOf(sl);
  s->extra_ns = ex.empty() ? 0 : MedianOf(ex);
  for (auto* list : {&s->extra_kernels, &s->slower_kernels}) {
    std::stable_sort(list->begin(), list->end(),
                     [](const KernelExcess& x, const KernelExcess& y) { return x.ns > y.ns; });
  }
}

void Explain(RanksAnalysis* a, Straggler* s, const std::vector<size_t>& ps) {
  const size_t r = static_cast<size_t>(s->rank_index);
  s->compute_excess_ns =
      MedianExcess(*a, r, ps, [](const StepSummary& st) { return st.compute_ns; });
  s->host_excess_ns =
      MedianExcess(*a, r, ps, [](const StepSummary& st) { return st.launch_late_ns; });
  SplitKernelExcess(*a, r, ps, s);
  const double slower = std::max(0.0, s->slower_ns), extra = std::max(0.0, s->extra_ns),
               late = std::max(0.0, s->host_excess_ns);
  const CauseDetail host_detail =
      extra >= late ? CauseDetail::kExtraWork : CauseDetail::kLateLaunches;
  if (!s->by_scores) {
    std::vector<double> caused;
    for (size_t p : ps) caused.push_back(static_cast<double>(a->caused[r][p]));
    s->caused_ns = MedianOf(caused);
    s->comm_ns = std::max(0.0, s->caused_ns - std::max(0.0, s->compute_excess_ns) - late);
    if (slower >= extra + late && slower >= s->comm_ns) {
      s->cause = Cause::kCompute;
    } else if (extra + late >= s->comm_ns) {
      s->cause = Cause::kHost;
    } else {
      s->cause = Cause::kCommunication;
    }
  }
  s->detail = s->cause == Cause::kCompute ? CauseDetail::kSlowerKernels
              : s->cause == Cause::kHost  ? host_detail
                                          : CauseDetail::kNone;
  s->sections = TopSections(*a, r, ps, &s->only_here);
  // Evidence must matter: at least a tenth of the largest number explained.
  const double floor =
      0.1 * std::max({s->caused_ns, std::fabs(s->compute_excess_ns), std::fabs(s->host_excess_ns),
                      std::fabs(s->slower_ns), std::fabs(s->extra_ns)});
  auto trim = [&](auto* list, auto value) {
    list->erase(
        std::remove_if(list->begin(), list->end(), [&](const auto& e) { return value(e) < floor; }),
        list->end());
    if (list->size() > kEvidence) list->resize(kEvidence);
  };
  trim(&s->extra_kernels, [](const KernelExcess& e) { return e.ns; });
  trim(&s->slower_kernels, [](const KernelExcess& e) { return e.ns; });
  trim(&s->sections, [](const std::pair<std::string, double>& e) { return e.second; });
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
