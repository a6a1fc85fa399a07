#include "ranks/ranks_analysis.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/stats.h"
#include "common/strings.h"
#include "ranks/ranks_internal.h"

namespace stepscope {
namespace {

// Residual host clock skew above this is reported (and corrected with --align collectives).
constexpr int64_t kSkewNoteNs = 100000;

std::string RangeText(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "no steps";
  return steps.size() == 1
             ? "step " + std::to_string(steps[0])
             : "steps " + std::to_string(steps.front()) + "-" + std::to_string(steps.back()) +
                   " (" + std::to_string(steps.size()) + ")";
}

// Ranks from the summaries; a summary without one gets the lowest free number.
// A trace with neither a rank nor any step or kernel is a launcher process
// (torchrun's agent initializes CUDA but runs nothing): it is left out.
Status NumberRanks(RanksAnalysis* a) {
  std::vector<RankSummary> kept;
  for (RankSummary& s : a->summaries) {
    if (s.rank < 0 && s.steps.empty() && s.kernels.empty()) {
      a->notes.push_back(s.trace +
                         " records no rank and no GPU work (a launcher process?); left out");
      continue;
    }
    kept.push_back(std::move(s));
  }
  a->summaries = std::move(kept);
  // Larger numbers are damage, not a job: refused before anything is sized
  // by them (the missing-rank list below).
  constexpr int64_t kMaxRanks = int64_t{1} << 20;
  for (const RankSummary& s : a->summaries) {
    if (s.rank >= kMaxRanks || s.world_size > kMaxRanks) {
      return InvalidInput(s.trace + ": rank " + std::to_string(s.rank) + ", world size " +
                          std::to_string(s.world_size) + ": out of range (at most " +
                          std::to_string(kMaxRanks) + " ranks); the trace's meta is damaged");
    }
  }
  std::map<int64_t, std::string> taken;
  for (const RankSummary& s : a->summaries) {
    if (s.rank < 0) continue;
    auto [it, inserted] = taken.emplace(s.rank, s.trace);
    if (!inserted) {
      return InvalidInput("rank " + std::to_string(s.rank) + " appears twice: " + it->second +
                          " and " + s.trace + "; pass one trace or summary per rank");
    }
  }
  int64_t next = 0;
  for (RankSummary& s : a->summaries) {
    if (s.rank >= 0) continue;
    while (taken.count(next)) ++next;
    s.rank = next;
    taken.emplace(next, s.trace);
    a->notes.push_back(s.trace + " records no rank; numbered rank " + std::to_string(next));
  }
  std::stable_sort(a->summaries.begin(), a->summaries.end(),
                   [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  a->world_size = 0;
  for (const RankSummary& s : a->summaries)
    a->world_size = std::max({a->world_size, s.world_size, s.rank + 1});
  for (int64_t r = 0; r < a->world_size; ++r) {
    if (!taken.count(r)) a->missing_ranks.push_back(r);
  }
  return OkStatus();
}

// Kernel-sequence steps are numbered from 0 on each rank, from wherever its
// detector found the first one; the collectives say which steps are the same:
// every rank runs the same collectives in the same order, so a collective
// (stream ordinal, name, sequence number) falls in the same step everywhere.
// Each such rank's steps are renumbered by the most common difference to the
// first rank's step of the same collectives.
void AlignSequenceSteps(RanksAnalysis* a) {
  if (a->summaries.size() < 2) return;
  const RankSummary& ref = a->summaries[0];
  std::map<std::tuple<int32_t, std::string, int64_t>, int64_t> ref_step;
  for (const CollectiveSummary& c : ref.collectives) {
    if (c.step != kNoStep) ref_step.emplace(std::make_tuple(c.stream_index, c.name, c.seq), c.step);
  }
  for (size_t r = 1; r < a->summaries.size(); ++r) {
    RankSummary& s = a->summaries[r];
    if (s.step_source != "kernel-sequence" && ref.step_source != "kernel-sequence") continue;
    std::map<int64_t, int64_t> votes;
    for (const CollectiveSummary& c : s.collectives) {
      auto it = ref_step.find(std::make_tuple(c.stream_index, c.name, c.seq));
      if (c.step != kNoStep && it != ref_step.end()) ++votes[it->second - c.step];
    }
    if (votes.empty()) continue;
    const int64_t shift =
        std::max_element(votes.begin(), votes.end(), [](const auto& x, const auto& y) {
          return x.second < y.second;
        })->first;
    if (shift == 0) continue;
    // Steps before the first rank's first (numbers below 0) are left out.
    size_t drop = 0;
    while (drop < s.steps.size() && s.steps[drop].step + shift < 0) ++drop;
    for (StepSummary& st : s.steps) st.step += shift;
    for (CollectiveSummary& c : s.collectives) {
      if (c.step != kNoStep) c.step = c.step + shift < 0 ? kNoStep : c.step + shift;
    }
    if (drop > 0) {
      s.steps.erase(s.steps.begin(), s.steps.begin() + static_cast<ptrdiff_t>(drop));
      for (auto* list : {&s.kernels, &s.sections, &s.python}) {
        for (NamedTimes& n : *list) {
          for (auto* v : {&n.total_ns, &n.count, &n.median_ns})
            v->erase(v->begin(), v->begin() + static_cast<ptrdiff_t>(drop));
        }
      }
    }
    a->notes.push_back("rank " + std::to_string(s.rank) + ": kernel-sequence steps renumbered by " +
                       (shift > 0 ? "+" : "") + std::to_string(shift) + " to match rank " +
                       std::to_string(ref.rank) + "'s (same collectives, same step)");
  }
}

void IndexSteps(RanksAnalysis* a) {
  std::set<int64_t> all;
  for (const RankSummary& s : a->summaries) {
    for (const StepSummary& st : s.steps) all.insert(st.step);
  }
  a->steps.assign(all.begin(), all.end());
  a->step_index.assign(a->summaries.size(), std::vector<int>(a->steps.size(), -1));
  for (size_t r = 0; r < a->summaries.size(); ++r) {
    const auto& steps = a->summaries[r].steps;
    for (size_t i = 0; i < steps.size(); ++i)
      a->step_index[r][static_cast<size_t>(StepPosition(*a, steps[i].step))] = static_cast<int>(i);
  }
  for (size_t p = 0; p < a->steps.size(); ++p) {
    bool everywhere = true;
    for (const auto& idx : a->step_index) everywhere &= idx[p] >= 0;
    if (everywhere) a->common_steps.push_back(a->steps[p]);
  }
  // Unequal step ranges: say which rank has what.
  std::map<std::vector<int64_t>, std::vector<int64_t>> by_range;
  for (const RankSummary& s : a->summaries) {
    std::vector<int64_t> mine;
    for (const StepSummary& st : s.steps) mine.push_back(st.step);
    by_range[mine].push_back(s.rank);
  }
  if (by_range.size() > 1) {
    std::string text = "ranks cover different steps:";
    for (const auto& [range, ranks] : by_range) {
      std::vector<std::string> rs;
      for (int64_t r : ranks) rs.push_back(std::to_string(r));
      text += " rank" + std::string(ranks.size() > 1 ? "s " : " ") + Join(rs, ",") + ": " +
              RangeText(range) + ";";
    }
    text += " scores use the " + std::to_string(a->common_steps.size()) + " steps every rank has";
    a->notes.push_back(text);
  }
}

// The windows of each rank's steps (common/step_windows.h).
void StepWindowsOf(RanksAnalysis* a) {
  a->windows.clear();
  for (const RankSummary& s : a->summaries) {
    std::vector<StepExtent> ext;
    ext.reserve(s.steps.size());
    for (const StepSummary& st : s.steps) {
      const bool gpu = st.gpu_end_ns > 0 || st.gpu_start_ns > 0;
      ext.push_back({st.start_ns, st.end_ns, gpu, st.gpu_start_ns, st.gpu_end_ns, true});
    }
    std::vector<StepWindow> w = StepWindows(ext);
    for (size_t i = 0; i < w.size(); ++i)
      w[i].selected = a->selected[static_cast<size_t>(StepPosition(*a, s.steps[i].step))];
    a->windows.push_back(std::move(w));
  }
}

// The median of `field` over rank r's steady steps.
template <typename F>
double MedianStep(const RanksAnalysis& a, size_t r, F field) {
  std::vector<double> v;
  const RankSummary& s = a.summaries[r];
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (a.windows[r][i].steady()) v.push_back(static_cast<double>(field(s.steps[i])));
  }
  return Median(std::move(v));
}

void RankStats(RanksAnalysis* a) {
  StepWindowsOf(a);
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    const RankSummary& s = a->summaries[r];
    RankResult& out = a->ranks[r];
    const std::vector<int64_t> steady = SteadyDurations(a->windows[r]);
    out.steps = static_cast<int64_t>(steady.size());
    out.step_ns = Median(steady);
    out.gpu_ns = MedianStep(*a, r, [](const StepSummary& st) { return st.gpu_ns(); });
    out.compute_ns = MedianStep(*a, r, [](const StepSummary& st) { return st.compute_ns; });
    out.comm_ns = MedianStep(*a, r, [](const StepSummary& st) { return st.comm_ns; });
    out.late_ns = MedianStep(*a, r, [](const StepSummary& st) { return st.launch_late_ns; });
    int64_t comm = 0, overlap = 0;
    for (const StepSummary& st : s.steps) comm += st.comm_ns, overlap += st.overlap_ns;
    out.overlap = comm > 0 ? static_cast<double>(overlap) / static_cast<double>(comm) : kNaN;
    std::vector<double> waited, caused;
    for (size_t p = 0; p < a->steps.size(); ++p) {
      if (a->step_index[r][p] < 0 || !a->selected[p]) continue;
      waited.push_back(static_cast<double>(a->waited[r][p]));
      caused.push_back(static_cast<double>(a->caused[r][p]));
    }
    out.waited_ns = Median(waited);
    out.caused_ns = Median(caused);
  }
}

// Window statistics of every rank for a list of names (kernels or sections).
// `steps_of(r)` gives the summary step indices of rank r's window.
template <typename StepsOf>
std::vector<std::vector<WindowStat>> Windows(const RanksAnalysis& a, bool kernels,
                                             const std::unordered_map<std::string, size_t>& ids,
                                             StepsOf steps_of) {
  std::vector<std::vector<WindowStat>> out;
  for (size_t r = 0; r < a.summaries.size(); ++r) {
    std::vector<WindowStat> row(ids.size());
    const std::vector<int> steps = steps_of(r);
    for (const NamedTimes& n : kernels ? a.summaries[r].kernels : a.summaries[r].sections) {
      auto it = ids.find(n.name);
      if (it != ids.end()) row[it->second] = MakeWindowStat(n, steps);
    }
    out.push_back(std::move(row));
  }
  return out;
}

void Scores(RanksAnalysis* a) {
  // Names: non-NCCL kernels and sections, in order of first appearance.
  std::unordered_map<std::string, size_t> kernel_ids, section_ids;
  for (const RankSummary& s : a->summaries) {
    for (const NamedTimes& n : s.kernels) {
      if (!n.nccl) kernel_ids.emplace(n.name, kernel_ids.size());
    }
    for (const NamedTimes& n : s.sections) {
      if (section_ids.emplace(n.name, section_ids.size()).second) a->sections.push_back(n.name);
    }
  }
  // Relative: over the common steps (each rank's own steps when there are none).
  auto window_of = [&](size_t r) {
    std::vector<int> idx;
    for (size_t p = 0; p < a->steps.size(); ++p) {
      const int i = a->step_index[r][p];
      if (i >= 0 && a->selected[p] &&
          (a->common_steps.empty() ||
           std::binary_search(a->common_steps.begin(), a->common_steps.end(), a->steps[p]))) {
        idx.push_back(i);
      }
    }
    return idx;
  };
  std::vector<double> gpu = RelativeGpuScores(Windows(*a, true, kernel_ids, window_of));
  auto sections = RelativeSectionScores(Windows(*a, false, section_ids, window_of));
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    a->ranks[r].gpu_rel = gpu[r];
    a->ranks[r].section_rel = sections[r];
  }
  // Individual: windows of W of the rank's own steps, counted back from its last step.
  const size_t w = static_cast<size_t>(std::max(1, a->options.window_steps));
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    std::vector<int> mine;  // the rank's selected steps (summary indices)
    for (size_t i = 0; i < a->summaries[r].steps.size(); ++i) {
      if (a->windows[r][i].selected) mine.push_back(static_cast<int>(i));
    }
    const size_t n = mine.size();
    std::vector<std::vector<WindowStat>> kernel_windows, section_windows;
    std::vector<std::vector<int>> windows;
    for (size_t end = n; end > 0; end = end > w ? end - w : 0) {
      windows.insert(
          windows.begin(),
          std::vector<int>(mine.begin() + static_cast<std::ptrdiff_t>(end > w ? end - w : 0),
                           mine.begin() + static_cast<std::ptrdiff_t>(end)));
    }
    for (const auto& idx : windows) {
      std::vector<WindowStat> krow(kernel_ids.size()), srow(section_ids.size());
      for (const NamedTimes& k : a->summaries[r].kernels) {
        auto it = kernel_ids.find(k.name);
        if (it != kernel_ids.end()) krow[it->second] = MakeWindowStat(k, idx);
      }
      for (const NamedTimes& s : a->summaries[r].sections)
        srow[section_ids[s.name]] = MakeWindowStat(s, idx);
      kernel_windows.push_back(std::move(krow));
      section_windows.push_back(std::move(srow));
    }
    a->ranks[r].gpu_ind = IndividualGpuScore(kernel_windows);
    a->ranks[r].section_ind = IndividualSectionScores(section_windows);
    a->ranks[r].section_ind.resize(a->sections.size(), kNaN);
  }
  // NVRx's identify_stragglers: every score below the threshold.
  const double t = a->options.threshold;
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    const RankResult& x = a->ranks[r];
    auto flag = [&](const std::string& what, double v) {
      if (!std::isnan(v) && v < t) a->score_flags.push_back({static_cast<int>(r), what, v});
    };
    flag("gpu relative", x.gpu_rel);
    flag("gpu individual", x.gpu_ind);
    for (size_t k = 0; k < a->sections.size(); ++k) {
      flag("section '" + a->sections[k] + "' relative",
           k < x.section_rel.size() ? x.section_rel[k] : kNaN);
      flag("section '" + a->sections[k] + "' individual", x.section_ind[k]);
    }
  }
}

// Notes on residual clock skew per host; with align_collectives, corrects it
// and reports what was applied. Returns true when offsets changed.
bool HandleSkew(RanksAnalysis* a, const std::vector<int64_t>& skew, bool correct) {
  std::map<std::string, std::vector<double>> by_host;
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    if (a->ranks[r].collectives > 0)
      by_host[a->ranks[r].host].push_back(static_cast<double>(skew[r]));
  }
  if (by_host.size() < 2 || a->ranks.empty()) return false;
  std::map<std::string, int64_t> host_skew;
  for (auto& [host, v] : by_host) host_skew[host] = static_cast<int64_t>(Median(v));
  const std::string& ref = a->ranks[0].host;
  const int64_t ref_skew = host_skew.count(ref) ? host_skew[ref] : 0;
  bool changed = false;
  for (const auto& [host, sk] : host_skew) {
    const int64_t rel = sk - ref_skew;
    if (host == ref || std::llabs(rel) < kSkewNoteNs) continue;
    const std::string h = host.empty() ? "(no host name)" : host;
    if (correct) {
      for (RankResult& r : a->ranks) {
        if (r.host == host) r.offset_ns -= rel;
      }
      a->notes.push_back("clock of host " + h + " corrected by " + FormatDuration(-rel) +
                         " (--align collectives: collective end times vs host " + ref + ")");
      changed = true;
    } else {
      a->notes.push_back(
          "clock of host " + h + " reads " + FormatDuration(std::llabs(rel)) +
          (rel > 0 ? " ahead of" : " behind") + " host " + ref +
          " (median difference of collective end times); who arrived last may be wrong "
          "across hosts: re-run with --align collectives");
    }
  }
  return changed;
}

// options.step_ranges: which entries of a->steps are analyzed. Fails when the
// selection holds none of the steps the ranks have.
Status SelectSteps(RanksAnalysis* a) {
  const auto& ranges = a->options.step_ranges;
  a->selected.assign(a->steps.size(), ranges.empty());
  if (ranges.empty()) return OkStatus();
  bool any = false;
  for (size_t p = 0; p < a->steps.size(); ++p) {
    for (const auto& [first, last] : ranges) {
      if (a->steps[p] >= first && a->steps[p] <= last) a->selected[p] = any = true;
    }
  }
  if (!any) {
    return InvalidInput("--steps selects none of the ranks' steps (" + RangeText(a->steps) +
                        "); see the step numbers with 'stepscope ranks --report steps'");
  }
  std::vector<int64_t> common;
  for (int64_t step : a->common_steps) {
    if (a->selected[static_cast<size_t>(StepPosition(*a, step))]) common.push_back(step);
  }
  a->common_steps = std::move(common);
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseStepRanges(std::string_view text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const std::string& part : Split(std::string(text), ',')) {
    const size_t dash = part.find('-', 1);
    int64_t first = 0, last = 0;
    const bool ok = dash == std::string::npos ? ParseInt64(part, &first) && (last = first, true)
                                              : ParseInt64(part.substr(0, dash), &first) &&
                                                    ParseInt64(part.substr(dash + 1), &last);
    if (!ok || last < first) {
      return InvalidInput("--steps '" + std::string(text) +
                          "': want step numbers and ranges such as 10-17,26-33 (see 'stepscope "
                          "ranks --report steps')");
    }
    out.emplace_back(first, last);
  }
  if (out.empty()) return InvalidInput("--steps is empty: want step numbers such as 10-17");
  return out;
}

StatusOr<RanksAnalysis> AnalyzeRanks(std::vector<RankSummary> summaries,
                                     const RanksOptions& options) {
  RanksAnalysis a;
  a.options = options;
  a.summaries = std::move(summaries);
  RETURN_IF_ERROR(NumberRanks(&a));
  for (const RankSummary& s : a.summaries) {
    RankResult r;
    r.rank = s.rank;
    r.host = s.host;
    r.trace = s.trace;
    r.offset_ns = s.clock_offset_ns;
    a.ranks.push_back(r);
  }
  AlignSequenceSteps(&a);
  IndexSteps(&a);
  RETURN_IF_ERROR(SelectSteps(&a));
  std::vector<bool> with_collectives;
  std::vector<int64_t> skew = MatchCollectives(&a, &with_collectives);
  if (HandleSkew(&a, skew, options.align_collectives))
    skew = MatchCollectives(&a, &with_collectives);
  for (size_t r = 0; r < a.ranks.size(); ++r) a.ranks[r].skew_ns = skew[r];
  RankStats(&a);
  Scores(&a);
  for (size_t p = 0; p < with_collectives.size(); ++p)
    with_collectives[p] = with_collectives[p] && a.selected[p];
  FindStragglers(&a, with_collectives);
  return a;
}

}  // namespace stepscope
