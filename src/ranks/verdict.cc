// The verdict: which rank straggles, from which step, and why.
//
// In synchronous training every rank's step takes as long as the slowest
// rank's, so step times alone cannot name the straggler; the waits inside
// collectives can. Per step, the rank the others waited for longest (the sum
// over the step's collectives of the median exposed wait it caused: time the
// others' GPUs ran only the collective, collectives.cc) "blocks" that
// step when that sum reaches min_wait (default: the larger of 0.5 ms and 10%
// of the median step) and what it alone holds the step back (the sum of the
// next-to-last arrival's wait) is at least half of it: with three or more ranks,
// ranks that take turns arriving last, or two late ranks, hold little each; with
// two ranks it is the same sum. A rank straggles from step S when it blocks S and at
// least 80% of the steps with collectives from S on (at least five of them,
// or a fifth of the steps when there are fewer than 25, and at least two:
// kMinOnsetSteps).
//
// The cause: what the rank's own timeline explains of the wait it causes,
// per straggling step against the other ranks' median (medians over those
// steps; docs/ranks.md, "The verdict"). Its kernel time is split per step and
// non-NCCL kernel name, with
//   c = its instances, m = their median duration (0 when c = 0),
//   C = the other ranks' median instance count (a rank without it counts 0),
//   M = the median of the other ranks' median durations, over those that ran
//       it (0 when none did):
//   same   = min(c, C) x (m - M)    the same kernels taking longer on it:
//            "larger kernels" when its median launch (grid x block threads)
//            is over 5% larger than the others', else "slower kernels";
//   extra  = (c - C) x m  if c > C  instances the others do not run;
//            (c - C) x M  if c <= C work the others do that it does not (<= 0),
// so same + extra = c x m - C x M per name. Its host side: launch lateness on
// the critical stream (late launches), of which its DataLoader.__next__ time
// (data loading) and then its main thread's extra CPU time beyond that plus
// its extra run-queue time (host CPU) are the known parts. The parts:
//   data loading = min(loader excess, late)
//   host CPU     = min(cpu excess beyond the loader + ready excess, late - data loading)
//   late launches = late - data loading - host CPU   (a sleep, a lock, I/O)
//   GPU work     = extra + larger kernels
//   slower GPU   = slower kernels
//   communication = caused - kernel time - late      (its collectives are late)
// each counted when positive; the cause is the largest (ties: this order).
//
// Without collectives (no NCCL kernels) the NVRx scores decide: a rank whose
// per-step relative GPU score (cause slower GPU: the score compares the
// kernels every rank runs) or step-time score (cause late launches) stays
// below the threshold by the same 80% rule straggles "by scores".
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common/collective_wait.h"
#include "common/stats.h"
#include "common/step_names.h"
#include "common/strings.h"
#include "ranks/ranks_internal.h"

namespace stepscope {

const char* CauseName(Cause c) {
  switch (c) {
    case Cause::kDataLoading:
      return "data loading";
    case Cause::kHostCpu:
      return "host CPU";
    case Cause::kLateLaunches:
      return "late launches";
    case Cause::kGpuWork:
      return "GPU work";
    case Cause::kSlowerGpu:
      return "slower GPU";
    case Cause::kCommunication:
      return "communication";
    case Cause::kNone:
      break;
  }
  return "none";
}

const char* CauseDetailName(CauseDetail d) {
  switch (d) {
    case CauseDetail::kExtraKernels:
      return "extra kernels";
    case CauseDetail::kLargerKernels:
      return "larger kernels";
    case CauseDetail::kPythonWork:
      return "Python work";
    case CauseDetail::kCpuContention:
      return "CPU contention";
    case CauseDetail::kNone:
      break;
  }
  return "";
}

namespace {

constexpr double kOnsetFraction = 0.8;
// An onset needs this many flagged steps (a fifth of the steps when there
// are fewer than 25, at least two): runs of 3 and 4 late steps at the end of
// balanced phases were named stragglers in traced 2-rank jobs on an H200 host
// (2026-11-28, docs/ranks.md), when two flagged steps sufficed.
constexpr int kMinOnsetSteps = 5;
constexpr size_t kEvidence = 3;
// A kernel launched with over 5% more threads than on the other ranks does more work.
constexpr double kLargerLaunch = 1.05;

// The onset rule over a sequence of step positions: the first i with
// flagged[i] such that flagged holds for >= 80% of [i, n) (and at least
// max(min(2, n), min(kMinOnsetSteps, n / 5)) times). Returns -1 when none.
int Onset(const std::vector<bool>& flagged, int64_t* count, int64_t* seen) {
  const int n = static_cast<int>(flagged.size());
  std::vector<int> suffix(static_cast<size_t>(n) + 1, 0);
  for (int i = n - 1; i >= 0; --i)
    suffix[static_cast<size_t>(i)] =
        suffix[static_cast<size_t>(i) + 1] + (flagged[static_cast<size_t>(i)] ? 1 : 0);
  const int need = std::max(std::min(2, n), std::min(kMinOnsetSteps, n / 5));
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
    if (!others.empty()) excess.push_back(mine - Median(others));
  }
  double m = Median(std::move(excess));
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

// The names of rank r's `list` (sections, Python functions) with the
// largest median per-step excess over the others; names no other rank has go
// to `only_here`.
std::vector<std::pair<std::string, double>> TopExcess(const RanksAnalysis& a, size_t r,
                                                      const std::vector<size_t>& ps,
                                                      std::vector<NamedTimes> RankSummary::*list_of,
                                                      std::vector<std::string>* only_here) {
  std::vector<std::unordered_map<std::string, size_t>> index(a.ranks.size());
  for (size_t o = 0; o < a.ranks.size(); ++o) {
    const auto& list = a.summaries[o].*list_of;
    for (size_t i = 0; i < list.size(); ++i) index[o].emplace(list[i].name, i);
  }
  std::vector<std::pair<std::string, double>> out;
  std::vector<double> excess, others;
  for (const NamedTimes& n : a.summaries[r].*list_of) {
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
            TotalAt(a.summaries[o].*list_of, index[o], n.name, a.step_index[o][p])));
      }
      if (others.empty()) continue;
      excess.push_back(static_cast<double>(n.total_ns[static_cast<size_t>(mine_idx)]) -
                       Median(others));
    }
    if (!elsewhere && a.ranks.size() > 1 && only_here) only_here->push_back(n.name);
    double m = Median(excess);
    if (!std::isnan(m) && m > 0) out.emplace_back(n.name, m);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (out.size() > kEvidence) out.resize(kEvidence);
  return out;
}

// Rank r's launch size of kernel `n` over the step positions `ps`: the median
// of its per-step medians where it ran (version 4), else the whole trace's.
double LaunchSize(const RanksAnalysis& a, size_t r, const NamedTimes& n,
                  const std::vector<size_t>& ps) {
  if (n.step_threads.empty()) return n.threads > 0 ? static_cast<double>(n.threads) : kNaN;
  std::vector<double> v;
  for (size_t p : ps) {
    const int i = a.step_index[r][p];
    if (i >= 0 && n.step_threads[static_cast<size_t>(i)] > 0)
      v.push_back(static_cast<double>(n.step_threads[static_cast<size_t>(i)]));
  }
  return Median(std::move(v));
}

// True when rank r launches `name` with over 5% more threads (grid x block)
// over the steps `ps` than the median of the other ranks that run it.
bool LaunchedLarger(const RanksAnalysis& a, size_t r,
                    const std::vector<std::unordered_map<std::string, size_t>>& index,
                    const std::string& name, const std::vector<size_t>& ps) {
  auto mine = index[r].find(name);
  if (mine == index[r].end()) return false;
  const double t = LaunchSize(a, r, a.summaries[r].kernels[mine->second], ps);
  std::vector<double> others;
  for (size_t o = 0; o < a.ranks.size(); ++o) {
    auto it = index[o].find(name);
    if (o == r || it == index[o].end()) continue;
    const double x = LaunchSize(a, o, a.summaries[o].kernels[it->second], ps);
    if (!std::isnan(x)) others.push_back(x);
  }
  return !std::isnan(t) && !others.empty() && t > kLargerLaunch * Median(others);
}

// Per name: its parts per step (the file's top comment defines them).
struct NameParts {
  std::vector<double> same, extra, extra_n, matched_n, mine_d, others_d;
};

// Splits rank r's kernel-time excess over the steps `ps` into slower
// kernels, larger kernels and extra kernels (the file's top comment defines
// them); fills s->slower_ns, s->larger_ns, s->extra_ns and, largest first, the
// kernels with positive parts.
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
  std::vector<double> step_slower(ps.size(), 0), step_larger(ps.size(), 0),
      step_extra(ps.size(), 0);
  std::vector<bool> used(ps.size(), false);
  std::vector<double> counts, durations;
  NameParts np;
  for (const std::string& name : names) {
    bool elsewhere = false;
    for (size_t o = 0; o < nranks; ++o) elsewhere |= o != r && index[o].count(name) > 0;
    const bool larger = LaunchedLarger(a, r, index, name, ps);
    const auto mine_it = index[r].find(name);
    const NamedTimes* mine =
        mine_it == index[r].end() ? nullptr : &a.summaries[r].kernels[mine_it->second];
    np = NameParts();
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
      const double big_c = Median(counts);
      const double big_m = durations.empty() ? 0 : Median(durations);
      const double matched = std::min(c, big_c);
      np.same.push_back(matched * (m - big_m));
      np.extra.push_back((c - big_c) * (c > big_c ? m : big_m));
      np.extra_n.push_back(c - big_c);
      np.matched_n.push_back(matched);
      np.mine_d.push_back(m);
      np.others_d.push_back(big_m);
      (larger ? step_larger : step_slower)[i] += np.same.back();
      step_extra[i] += np.extra.back();
    }
    if (np.same.empty()) continue;
    const double same = Median(np.same), ex = Median(np.extra);
    if (ex > 0) {
      s->extra_kernels.push_back(
          {name, ex, Median(np.extra_n), Median(np.mine_d), Median(np.others_d), !elsewhere});
    }
    if (same > 0) {
      (larger ? s->larger_kernels : s->slower_kernels)
          .push_back({name, same, Median(np.matched_n), Median(np.mine_d), Median(np.others_d),
                      !elsewhere});
    }
  }
  std::vector<double> sl, lg, ex;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (used[i])
      sl.push_back(step_slower[i]), lg.push_back(step_larger[i]), ex.push_back(step_extra[i]);
  }
  s->slower_ns = sl.empty() ? 0 : Median(sl);
  s->larger_ns = lg.empty() ? 0 : Median(lg);
  s->extra_ns = ex.empty() ? 0 : Median(ex);
  for (auto* list : {&s->extra_kernels, &s->slower_kernels, &s->larger_kernels}) {
    std::stable_sort(list->begin(), list->end(),
                     [](const KernelExcess& x, const KernelExcess& y) { return x.ns > y.ns; });
  }
}

// Median over steps `ps` of (rank r's value - the others' median) of a
// per-step value that a summary may lack (-1: unknown); NaN when unknown.
template <typename F>
double KnownExcess(const RanksAnalysis& a, size_t r, const std::vector<size_t>& ps, F field) {
  for (size_t o = 0; o < a.ranks.size(); ++o) {
    for (const StepSummary& st : a.summaries[o].steps) {
      if (field(st) < 0) return kNaN;
    }
  }
  return MedianExcess(a, r, ps, field);
}

// Rank r's DataLoader.__next__ time per step, its excess over the others'
// median, both medians over `ps` (NaN when no rank has the range).
void LoaderTime(const RanksAnalysis& a, size_t r, const std::vector<size_t>& ps, Straggler* s) {
  std::vector<double> mine, others, excess, row;
  bool any = false;
  for (size_t p : ps) {
    row.clear();
    double m = kNaN;
    for (size_t o = 0; o < a.ranks.size(); ++o) {
      const int idx = a.step_index[o][p];
      if (idx < 0) continue;
      double v = 0;
      for (const NamedTimes& n : a.summaries[o].sections) {
        if (n.name == kLoaderRangeName)
          v = static_cast<double>(n.total_ns[static_cast<size_t>(idx)]), any = true;
      }
      if (o == r) {
        m = v;
      } else {
        row.push_back(v);
      }
    }
    if (std::isnan(m) || row.empty()) continue;
    mine.push_back(m), others.push_back(Median(row)), excess.push_back(m - Median(row));
  }
  if (!any || excess.empty()) return;
  s->loader_ns = Median(excess);
  s->loader_mine_ns = Median(mine);
  s->loader_others_ns = Median(others);
}

// The price: the job's step now (the others' median step) and if rank r
// matched the median rank (that step less what it alone held it back, `held`).
void Price(const RanksAnalysis& a, size_t r, const std::vector<size_t>& ps, Straggler* s) {
  // Matched: it arrives with the next-to-last rank, so each collective it was last at starts
  // that rank's wait earlier (held); a rank that is not the only late one saves less.
  std::vector<double> now, fixed, step;
  for (size_t p : ps) {
    step.clear();
    for (size_t o = 0; o < a.ranks.size(); ++o) {
      const int idx = a.step_index[o][p];
      if (o == r || idx < 0) continue;
      step.push_back(static_cast<double>(a.windows[o][static_cast<size_t>(idx)].duration()));
    }
    if (step.empty()) continue;
    now.push_back(Median(step));
    fixed.push_back(std::max(0.0, Median(step) - static_cast<double>(a.held[r][p])));
  }
  s->step_ns = Median(now);
  s->step_if_matched_ns = Median(fixed);
}

// The parts and the cause (the file's top comment).
void Classify(Straggler* s) {
  const double late = std::max(0.0, s->host_excess_ns);
  const double loader = std::isnan(s->loader_ns) ? 0 : std::max(0.0, s->loader_ns);
  s->part_loading_ns = std::min(loader, late);
  const double cpu_more =
      std::isnan(s->host_cpu_ns) ? 0 : std::max(0.0, s->host_cpu_ns - std::max(0.0, loader));
  const double ready = std::isnan(s->host_ready_ns) ? 0 : std::max(0.0, s->host_ready_ns);
  s->part_cpu_ns = std::min(cpu_more + ready, late - s->part_loading_ns);
  s->part_late_ns = late - s->part_loading_ns - s->part_cpu_ns;
  s->part_gpu_ns = std::max(0.0, s->extra_ns) + std::max(0.0, s->larger_ns);
  const double slower = std::max(0.0, s->slower_ns);
  if (!s->by_scores)
    s->comm_ns = std::max(0.0, s->caused_ns - std::max(0.0, s->compute_excess_ns) - late);
  const std::pair<Cause, double> parts[] = {{Cause::kDataLoading, s->part_loading_ns},
                                            {Cause::kHostCpu, s->part_cpu_ns},
                                            {Cause::kLateLaunches, s->part_late_ns},
                                            {Cause::kGpuWork, s->part_gpu_ns},
                                            {Cause::kSlowerGpu, slower},
                                            {Cause::kCommunication, s->comm_ns}};
  if (!s->by_scores) {
    s->cause = Cause::kCommunication;
    double best = -1;
    for (const auto& [cause, ns] : parts) {
      if (ns > best) best = ns, s->cause = cause;
    }
  }
  s->detail = CauseDetail::kNone;
  if (s->cause == Cause::kGpuWork) {
    s->detail =
        s->extra_ns >= s->larger_ns ? CauseDetail::kExtraKernels : CauseDetail::kLargerKernels;
  } else if (s->cause == Cause::kHostCpu) {
    s->detail = ready > cpu_more ? CauseDetail::kCpuContention : CauseDetail::kPythonWork;
  }
}

void Explain(RanksAnalysis* a, Straggler* s, const std::vector<size_t>& ps) {
  const size_t r = static_cast<size_t>(s->rank_index);
  s->compute_excess_ns =
      MedianExcess(*a, r, ps, [](const StepSummary& st) { return st.compute_ns; });
  s->host_excess_ns =
      MedianExcess(*a, r, ps, [](const StepSummary& st) { return st.launch_late_ns; });
  s->host_cpu_ns = KnownExcess(*a, r, ps, [](const StepSummary& st) { return st.host_cpu_ns; });
  s->host_ready_ns = KnownExcess(*a, r, ps, [](const StepSummary& st) { return st.host_ready_ns; });
  LoaderTime(*a, r, ps, s);
  SplitKernelExcess(*a, r, ps, s);
  if (!s->by_scores) {
    std::vector<double> caused;
    for (size_t p : ps) caused.push_back(static_cast<double>(a->caused[r][p]));
    s->caused_ns = Median(caused);
    std::vector<double> held;
    for (size_t p : ps) held.push_back(static_cast<double>(a->held[r][p]));
    s->held_ns = Median(held);
  }
  Classify(s);
  Price(*a, r, ps, s);
  s->sections = TopExcess(*a, r, ps, &RankSummary::sections, &s->only_here);
  s->python = TopExcess(*a, r, ps, &RankSummary::python, nullptr);
  // Evidence must matter: at least a tenth of the largest number explained.
  const double floor =
      0.1 * std::max({s->caused_ns, std::fabs(s->compute_excess_ns), std::fabs(s->host_excess_ns),
                      std::fabs(s->slower_ns), std::fabs(s->extra_ns), std::fabs(s->larger_ns)});
  auto trim = [&](auto* list, auto value) {
    list->erase(
        std::remove_if(list->begin(), list->end(), [&](const auto& e) { return value(e) < floor; }),
        list->end());
    if (list->size() > kEvidence) list->resize(kEvidence);
  };
  trim(&s->extra_kernels, [](const KernelExcess& e) { return e.ns; });
  trim(&s->slower_kernels, [](const KernelExcess& e) { return e.ns; });
  trim(&s->larger_kernels, [](const KernelExcess& e) { return e.ns; });
  trim(&s->sections, [](const std::pair<std::string, double>& e) { return e.second; });
  trim(&s->python, [](const std::pair<std::string, double>& e) { return e.second; });
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

// A rank the others waited for in most steps (the onset rule on the longest waits) that
// does not straggle because it alone held those steps back less than half of that wait (the
// medians over them): say so, with both numbers, rather than say nothing.
void NoteTakingTurns(RanksAnalysis* a, const std::vector<size_t>& ps,
                     const std::vector<int>& longest, const std::vector<int>& blocking) {
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    std::vector<bool> flagged(ps.size()), blocks(ps.size());
    for (size_t i = 0; i < ps.size(); ++i) {
      flagged[i] = longest[i] == static_cast<int>(r);
      blocks[i] = blocking[i] == static_cast<int>(r);
    }
    int64_t count = 0, seen = 0, unused = 0;
    const int onset = Onset(flagged, &count, &seen);
    if (onset < 0 || Onset(blocks, &unused, &unused) >= 0) continue;
    std::vector<double> caused, held;
    for (size_t i = static_cast<size_t>(onset); i < ps.size(); ++i) {
      if (!flagged[i]) continue;
      caused.push_back(static_cast<double>(a->caused[r][ps[i]]));
      held.push_back(static_cast<double>(a->held[r][ps[i]]));
    }
    if (2 * Median(held) >= Median(caused)) continue;  // too few steps, not this
    // Who arrived next to last at its last arrivals in those steps, most often.
    std::unordered_set<int64_t> steps;
    for (size_t i = static_cast<size_t>(onset); i < ps.size(); ++i) {
      if (flagged[i]) steps.insert(a->steps[ps[i]]);
    }
    std::vector<int> next(a->ranks.size(), 0);
    int lasts = 0;
    for (const MatchedCollective& mc : a->collectives) {
      if (mc.last != static_cast<int>(r) || mc.next_last < 0 || !steps.count(mc.step)) continue;
      ++lasts;
      ++next[static_cast<size_t>(mc.next_last)];
    }
    const auto most = std::max_element(next.begin(), next.end());
    const std::string who =
        lasts == 0 ? ""
                   : " (most often rank " +
                         std::to_string(a->ranks[static_cast<size_t>(most - next.begin())].rank) +
                         ", at " + std::to_string(*most) + " of " + std::to_string(lasts) + ")";
    const RankResult& rr = a->ranks[r];
    a->not_alone.push_back(static_cast<int>(r));
    a->notes.push_back(
        "rank " + std::to_string(rr.rank) + " is not a straggler though the others waited for it " +
        FormatFixed(Median(caused) / 1e6, 2) + " ms per step from step " +
        std::to_string(a->steps[ps[static_cast<size_t>(onset)]]) + " (" + std::to_string(count) +
        " of " + std::to_string(seen) + " steps; last into " + std::to_string(rr.last_arrivals) +
        " of " + std::to_string(rr.collectives) +
        " collectives): the rank that arrived next to last" + who + " waited only " +
        FormatFixed(Median(held) / 1e6, 2) +
        " ms per step for it, under half of that: it alone held the steps back little (ranks "
        "taking turns at arriving last, as in a host-bound job, or more than one late rank)");
  }
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
    double med = Median(steps);
    a->min_wait_ns = MinStragglerWaitNs(std::isnan(med) ? 0 : med);
  }

  std::vector<size_t> ps;  // step positions with collectives
  for (size_t p = 0; p < steps_with_collectives.size(); ++p) {
    if (steps_with_collectives[p]) ps.push_back(p);
  }
  if (!ps.empty()) {
    // The rank the others waited for longest in each step, and whether it alone held the step.
    std::vector<int> longest(ps.size(), -1), blocking(ps.size(), -1);
    for (size_t i = 0; i < ps.size(); ++i) {
      int64_t best = -1;
      for (size_t r = 0; r < nranks; ++r) {
        const int64_t c = a->caused[r][ps[i]];
        if (c >= a->min_wait_ns && c > best) best = c, longest[i] = static_cast<int>(r);
      }
      const int l = longest[i];
      if (l >= 0 && 2 * a->held[static_cast<size_t>(l)][ps[i]] >= best) blocking[i] = l;
    }
    NoteTakingTurns(a, ps, longest, blocking);
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
  for (size_t p = 0; p < a->steps.size(); ++p) {
    if (a->selected[p]) all.push_back(p);
  }
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
      s.cause = gpu ? Cause::kSlowerGpu : Cause::kLateLaunches;
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
