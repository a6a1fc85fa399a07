#include "ranks/ranks_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/stats.h"
#include "common/step_names.h"
#include "common/strings.h"

namespace stepscope {
namespace {

constexpr size_t kMaxWideRanks = 16;

Cell Ms(double ns) { return Cell(std::isnan(ns) ? kNaN : ns / 1e6, 2); }
Cell Score(double v) { return Cell(v, 2); }

// "0-3,5,7-8"
std::string CompactRanks(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string MsText(double ns) { return FormatFixed(ns / 1e6, 2) + " ms"; }
std::string SignedMs(double ns) { return (ns >= 0 ? "+" : "") + MsText(ns); }
// A kernel's duration: us below 1 ms.
std::string DurationText(double ns) {
  return ns < 1e6 ? FormatFixed(ns / 1e3, 1) + " us" : MsText(ns);
}
// An instance count that may be a median of two (x.5).
std::string CountText(double n) {
  return n == std::floor(n) ? std::to_string(static_cast<int64_t>(n)) : FormatFixed(n, 1);
}

// "kernel NAME x229 +77.64 ms (only on this rank)" or, for a kernel the
// others run too, "kernel NAME x2 more +4.00 ms".
std::string ExtraText(const KernelExcess& k) {
  return "kernel " + k.name + " x" + CountText(k.instances) + (k.only_here ? " " : " more ") +
         SignedMs(k.ns) + (k.only_here ? " (only on this rank)" : "");
}

// "kernel NAME +4.00 ms (x1, 6.00 ms vs 2.00 ms)"
std::string SlowerText(const KernelExcess& k) {
  return "kernel " + k.name + " " + SignedMs(k.ns) + " (x" + CountText(k.instances) + ", " +
         DurationText(k.mine_ns) + " vs " + DurationText(k.others_ns) + ")";
}

// The evidence in one line for the CSV/JSON verdict.
std::string EvidenceText(const Straggler& s) {
  std::vector<std::string> ev;
  if (!std::isnan(s.loader_ns) && s.loader_ns > 0)
    ev.push_back("data loading: '" + std::string(kLoaderRangeName) + "' " +
                 MsText(s.loader_mine_ns) + " vs " + MsText(s.loader_others_ns));
  for (const auto& [name, ns] : s.python) ev.push_back("Python: " + name + " " + SignedMs(ns));
  if (!std::isnan(s.host_ready_ns) && s.host_ready_ns > 0)
    ev.push_back("runnable without a CPU " + SignedMs(s.host_ready_ns));
  for (const KernelExcess& k : s.extra_kernels) ev.push_back("extra kernels: " + ExtraText(k));
  for (const KernelExcess& k : s.larger_kernels) ev.push_back("larger: " + SlowerText(k));
  for (const KernelExcess& k : s.slower_kernels) ev.push_back("slower: " + SlowerText(k));
  for (const auto& [name, ns] : s.sections) {
    if (name != "step") ev.push_back("longer: section '" + name + "' " + SignedMs(ns));
  }
  for (const std::string& n : s.only_here) ev.push_back("only on this rank: section '" + n + "'");
  return Join(ev, "; ");
}

const StepSummary* StepOf(const RanksAnalysis& a, size_t r, size_t p) {
  int i = a.step_index[r][p];
  return i < 0 ? nullptr : &a.summaries[r].steps[static_cast<size_t>(i)];
}

// Rank r's time for step p: its window (common/step_windows.h), as `steps`
// prints it; -1 where the rank has no such step.
int64_t StepNs(const RanksAnalysis& a, size_t r, size_t p) {
  int i = a.step_index[r][p];
  return i < 0 ? -1 : a.windows[r][static_cast<size_t>(i)].duration();
}

}  // namespace

Table StepsTable(const RanksAnalysis& a, bool wide) {
  if (wide && a.ranks.size() <= kMaxWideRanks) {
    Table t;
    t.AddColumn({"step", "step", true});
    for (const RankResult& r : a.ranks) {
      t.AddColumn(
          {"rank_" + std::to_string(r.rank) + "_ms", "rank " + std::to_string(r.rank), true});
    }
    t.AddColumn({"slowest", "slowest", true});
    for (size_t p = 0; p < a.steps.size(); ++p) {
      if (!a.selected[p]) continue;
      std::vector<Cell> row{Cell(a.steps[p])};
      int64_t worst = -1, worst_rank = -1;
      for (size_t r = 0; r < a.ranks.size(); ++r) {
        const int64_t ns = StepNs(a, r, p);
        row.push_back(ns >= 0 ? Ms(static_cast<double>(ns)) : Cell("-"));
        if (ns > worst) worst = ns, worst_rank = a.ranks[r].rank;
      }
      row.push_back(worst_rank >= 0 ? Cell(worst_rank) : Cell("-"));
      t.AddRow(std::move(row));
    }
    return t;
  }
  if (wide) {
    // Too many ranks for one column each: the spread per step.
    Table t({{"step", "step", true},
             {"ranks", "ranks", true},
             {"min_ms", "min ms", true},
             {"median_ms", "median ms", true},
             {"max_ms", "max ms", true},
             {"slowest", "slowest", true}});
    for (size_t p = 0; p < a.steps.size(); ++p) {
      if (!a.selected[p]) continue;
      std::vector<double> v;
      int64_t worst = -1, worst_rank = -1;
      for (size_t r = 0; r < a.ranks.size(); ++r) {
        const int64_t ns = StepNs(a, r, p);
        if (ns < 0) continue;
        v.push_back(static_cast<double>(ns));
        if (ns > worst) worst = ns, worst_rank = a.ranks[r].rank;
      }
      t.AddRow({Cell(a.steps[p]), Cell(static_cast<int64_t>(v.size())),
                Ms(*std::min_element(v.begin(), v.end())), Ms(Median(v)),
                Ms(*std::max_element(v.begin(), v.end())), Cell(worst_rank)});
    }
    return t;
  }
  Table t({{"step", "step", true},
           {"rank", "rank", true},
           {"step_ms", "step ms", true},
           {"gpu_ms", "gpu ms", true},
           {"compute_ms", "compute ms", true},
           {"comm_ms", "comm ms", true},
           {"overlap_ms", "overlap ms", true},
           {"launch_late_ms", "late ms", true},
           {"nccl_wait_ms", "wait ms", true},
           {"caused_wait_ms", "caused ms", true}});
  for (size_t p = 0; p < a.steps.size(); ++p) {
    if (!a.selected[p]) continue;
    for (size_t r = 0; r < a.ranks.size(); ++r) {
      const StepSummary* st = StepOf(a, r, p);
      if (!st) continue;
      t.AddRow({Cell(a.steps[p]), Cell(a.ranks[r].rank), Ms(static_cast<double>(StepNs(a, r, p))),
                Ms(static_cast<double>(st->gpu_ns())), Ms(static_cast<double>(st->compute_ns)),
                Ms(static_cast<double>(st->comm_ns)), Ms(static_cast<double>(st->overlap_ns)),
                Ms(static_cast<double>(st->launch_late_ns)),
                Ms(static_cast<double>(a.waited[r][p])), Ms(static_cast<double>(a.caused[r][p]))});
    }
  }
  return t;
}

Table RanksTable(const RanksAnalysis& a) {
  Table t({{"rank", "rank", true},
           {"host", "host", false},
           {"steps", "steps", true},
           {"step_ms", "step ms", true},
           {"compute_ms", "compute ms", true},
           {"comm_ms", "comm ms", true},
           {"overlap_pct", "overlap %", true},
           {"launch_late_ms", "late ms", true},
           {"nccl_wait_ms", "wait ms", true},
           {"caused_wait_ms", "caused ms", true},
           {"last_arrivals", "last in", true},
           {"gpu_rel", "gpu rel", true},
           {"gpu_ind", "gpu ind", true},
           {"worst_section", "worst section (rel)", false}});
  for (const RankResult& r : a.ranks) {
    // The section with the lowest relative score.
    std::string worst = "-";
    double worst_score = kNaN;
    for (size_t k = 0; k < r.section_rel.size() && k < a.sections.size(); ++k) {
      if (!std::isnan(r.section_rel[k]) &&
          (std::isnan(worst_score) || r.section_rel[k] < worst_score)) {
        worst_score = r.section_rel[k];
        worst = a.sections[k] + " " + FormatFixed(worst_score, 2);
      }
    }
    t.AddRow({Cell(r.rank), Cell(r.host.empty() ? "-" : r.host), Cell(r.steps), Ms(r.step_ns),
              Ms(r.compute_ns), Ms(r.comm_ns),
              Cell(std::isnan(r.overlap) ? kNaN : 100 * r.overlap, 1), Ms(r.late_ns),
              Ms(r.waited_ns), Ms(r.caused_ns),
              Cell(std::to_string(r.last_arrivals) + "/" + std::to_string(r.collectives)),
              Score(r.gpu_rel), Score(r.gpu_ind), Cell(worst)});
  }
  return t;
}

Table SectionsTable(const RanksAnalysis& a) {
  Table t({{"rank", "rank", true},
           {"section", "section", false},
           {"median_ms", "median ms", true},
           {"relative", "relative", true},
           {"individual", "individual", true}});
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    for (const NamedTimes& n : a.summaries[r].sections) {
      auto it = std::find(a.sections.begin(), a.sections.end(), n.name);
      const size_t k = static_cast<size_t>(it - a.sections.begin());
      std::vector<int> all;
      for (size_t i = 0; i < n.count.size(); ++i) all.push_back(static_cast<int>(i));
      t.AddRow({Cell(a.ranks[r].rank), Cell(n.name), Ms(MakeWindowStat(n, all).median_ns),
                Score(k < a.ranks[r].section_rel.size() ? a.ranks[r].section_rel[k] : kNaN),
                Score(k < a.ranks[r].section_ind.size() ? a.ranks[r].section_ind[k] : kNaN)});
    }
  }
  return t;
}

Table CollectivesTable(const RanksAnalysis& a) {
  Table t({{"step", "step", true},
           {"collective", "collective", false},
           {"stream", "stream", true},
           {"seq", "seq", true},
           {"ranks", "ranks", true},
           {"last_rank", "last", true},
           {"spread_ms", "spread ms", true},
           {"max_spin_ms", "max spin ms", true},
           {"max_wait_ms", "max wait ms", true},
           {"median_wait_ms", "median wait ms", true},
           {"held_ms", "held ms", true}});
  for (const MatchedCollective& c : a.collectives) {
    t.AddRow({c.step >= 0 ? Cell(c.step) : Cell("-"), Cell(c.name), Cell(c.stream_index),
              Cell(c.seq), Cell(c.ranks), Cell(a.ranks[static_cast<size_t>(c.last)].rank),
              Ms(static_cast<double>(c.spread_ns)), Ms(static_cast<double>(c.max_spin_ns)),
              Ms(static_cast<double>(c.max_wait_ns)), Ms(static_cast<double>(c.median_wait_ns)),
              Ms(static_cast<double>(c.held_ns))});
  }
  return t;
}

Table VerdictTable(const RanksAnalysis& a) {
  // The columns after communication_ms were added later (JSON readers of
  // the earlier ones keep working).
  Table t({{"rank", "rank", true},
           {"host", "host", false},
           {"from_step", "from step", true},
           {"cause", "cause", false},
           {"found_by", "found by", false},
           {"steps", "steps", false},
           {"others_wait_ms", "others wait ms", true},
           {"compute_excess_ms", "compute +ms", true},
           {"launch_late_excess_ms", "late +ms", true},
           {"communication_ms", "comm ms", true},
           {"cause_detail", "detail", false},
           {"slower_kernels_ms", "slower +ms", true},
           {"extra_work_ms", "extra +ms", true},
           {"evidence", "evidence", false},
           {"larger_kernels_ms", "larger +ms", true},
           {"data_loading_ms", "loader +ms", true},
           {"host_cpu_ms", "cpu +ms", true},
           {"cpu_wait_ms", "cpu wait +ms", true},
           {"step_ms", "step ms", true},
           {"step_if_matched_ms", "step if matched ms", true},
           {"held_ms", "held ms", true}});
  for (const Straggler& s : a.stragglers) {
    const RankResult& r = a.ranks[static_cast<size_t>(s.rank_index)];
    const std::string detail = CauseDetailName(s.detail);
    const std::string evidence = EvidenceText(s);
    t.AddRow({Cell(r.rank),
              Cell(r.host.empty() ? "-" : r.host),
              Cell(s.from_step),
              Cell(CauseName(s.cause)),
              Cell(s.by_scores ? "scores" : "collectives"),
              Cell(std::to_string(s.steps_blocking) + "/" + std::to_string(s.steps_seen)),
              s.by_scores ? Cell(kNaN) : Ms(s.caused_ns),
              Ms(s.compute_excess_ns),
              Ms(s.host_excess_ns),
              s.by_scores ? Cell(kNaN) : Ms(s.comm_ns),
              Cell(detail.empty() ? "-" : detail),
              Ms(s.slower_ns),
              Ms(s.extra_ns),
              Cell(evidence.empty() ? "-" : evidence),
              Ms(s.larger_ns),
              Ms(s.loader_ns),
              Ms(s.host_cpu_ns),
              Ms(s.host_ready_ns),
              Ms(s.step_ns),
              Ms(s.step_if_matched_ns),
              s.by_scores ? Cell(kNaN) : Ms(s.held_ns)});
  }
  return t;
}

Table ScoreFlagsTable(const RanksAnalysis& a) {
  Table t({{"rank", "rank", true}, {"score", "score", false}, {"value", "value", true}});
  for (const ScoreFlag& f : a.score_flags) {
    t.AddRow({Cell(a.ranks[static_cast<size_t>(f.rank_index)].rank), Cell(f.what), Score(f.score)});
  }
  return t;
}

std::string HeaderText(const RanksAnalysis& a) {
  std::map<std::string, std::vector<int64_t>> hosts;
  for (const RankResult& r : a.ranks) hosts[r.host].push_back(r.rank);
  std::string out = std::to_string(a.ranks.size()) + (a.ranks.size() == 1 ? " rank" : " ranks") +
                    " of world size " + std::to_string(a.world_size) + " on " +
                    std::to_string(hosts.size()) + (hosts.size() == 1 ? " host" : " hosts");
  if (hosts.size() <= 8) {
    std::vector<std::string> parts;
    for (const auto& [h, rs] : hosts)
      parts.push_back((h.empty() ? "(unnamed)" : h) + ": " + CompactRanks(rs));
    out += " (" + Join(parts, "; ") + ")";
  }
  out += "\n";
  if (!a.steps.empty()) {
    out += (a.steps.size() == 1 ? "step " + std::to_string(a.steps[0])
                                : "steps " + std::to_string(a.steps.front()) + "-" +
                                      std::to_string(a.steps.back())) +
           ", " + std::to_string(a.common_steps.size()) +
           (a.options.step_ranges.empty() ? "" : " selected (--steps)") + " on every rank; " +
           std::to_string(a.collectives.size()) + " NCCL collectives matched across ranks\n";
  }
  if (!a.missing_ranks.empty()) {
    out += "missing: rank" + std::string(a.missing_ranks.size() > 1 ? "s " : " ") +
           CompactRanks(a.missing_ranks) + " of world size " + std::to_string(a.world_size) +
           " (no trace or summary given); results cover the ranks present\n";
  }
  for (const std::string& n : a.notes) out += "note: " + n + "\n";
  return out;
}

namespace {
// When the verdict rests on collective waits, the NVRx scores can point at
// another rank: a rank that waits inside a collective runs its NCCL kernels
// longer, and kernel time is what the scores compare. Say so, so that the
// per-rank table, the threshold list and the verdict do not silently disagree.

// Two scores, with as many decimals as it takes to tell them apart (at most 4).
std::string ScorePair(double lower, double mine) {
  int places = 2;
  while (places < 4 && FormatFixed(lower, places) == FormatFixed(mine, places)) ++places;
  return FormatFixed(lower, places) + " vs " + FormatFixed(mine, places);
}

std::string ScoresDisagreeText(const RanksAnalysis& a, const Straggler& s) {
  if (s.by_scores) return "";
  const RankResult& me = a.ranks[static_cast<size_t>(s.rank_index)];
  int worst = -1;
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    const double v = a.ranks[i].gpu_rel;
    if (static_cast<int>(i) == s.rank_index || std::isnan(v)) continue;
    if (!std::isnan(me.gpu_rel) && v >= me.gpu_rel) continue;
    if (worst < 0 || v < a.ranks[static_cast<size_t>(worst)].gpu_rel) worst = static_cast<int>(i);
  }
  std::vector<int64_t> flagged;
  for (const ScoreFlag& f : a.score_flags) {
    if (f.rank_index != s.rank_index) flagged.push_back(a.ranks[f.rank_index].rank);
  }
  std::sort(flagged.begin(), flagged.end());
  flagged.erase(std::unique(flagged.begin(), flagged.end()), flagged.end());
  if (worst < 0 && flagged.empty()) return "";
  std::string who = worst >= 0 ? "rank " + std::to_string(a.ranks[worst].rank) +
                                     " has a lower "
                                     "relative GPU score (" +
                                     ScorePair(a.ranks[worst].gpu_rel, me.gpu_rel) + ")"
                               : "";
  if (!flagged.empty()) {
    who += (who.empty() ? "" : " and ") + std::string("the score threshold list flags rank") +
           (flagged.size() > 1 ? "s " : " ") + CompactRanks(flagged);
  }
  return "  Scores: " + who +
         " because a rank that waits inside NCCL collectives runs its "
         "collective kernels longer, and the NVRx scores compare kernel time; the verdict "
         "follows the measured waits (the 'wait ms' and 'caused ms' columns), not the scores.\n";
}
}  // namespace

namespace {
// "  Cause: ..." for a straggler; `stream` names its critical stream.
std::string CauseText(const Straggler& s, const std::string& stream) {
  switch (s.cause) {
    case Cause::kDataLoading:
      return "  Cause: data loading. Its '" + std::string(kLoaderRangeName) + "' takes " +
             MsText(s.loader_mine_ns) + " per step vs " + MsText(s.loader_others_ns) +
             " on the other ranks: it loads batches in its training loop while its GPU waits "
             "(its launches " +
             SignedMs(s.host_excess_ns) + " late on " + stream + ").\n";
    case Cause::kHostCpu:
      if (s.detail == CauseDetail::kCpuContention) {
        return "  Cause: host CPU, CPU contention. Its launching threads wait " +
               SignedMs(s.host_ready_ns) +
               " per step runnable without a CPU (other processes or threads on its CPUs), "
               "so its launches are " +
               SignedMs(s.host_excess_ns) + " late on " + stream + ".\n";
      }
      return "  Cause: host CPU, Python work. Its main thread uses " + SignedMs(s.host_cpu_ns) +
             " of CPU per step more than the other ranks', so its launches are " +
             SignedMs(s.host_excess_ns) + " late on " + stream + ".\n";
    case Cause::kLateLaunches:
      return "  Cause: late launches. Its GPU waits for kernel launches " +
             MsText(s.host_excess_ns) +
             " per step longer than the other ranks' (launch lateness on " + stream +
             (std::isnan(s.loader_ns) && std::isnan(s.host_cpu_ns)
                  ? "); the summaries record neither DataLoader ranges nor host CPU time to say "
                    "more.\n"
                  : "); neither data loading nor its CPU time explains it (a sleep, a lock, I/O, "
                    "a host sync).\n");
    case Cause::kGpuWork:
      if (s.detail == CauseDetail::kLargerKernels) {
        return "  Cause: GPU work, larger kernels. The kernels the other ranks also run are "
               "launched larger on it (more threads: a larger batch or shape) and take " +
               MsText(s.larger_ns) + " per step longer.\n";
      }
      return "  Cause: GPU work, extra kernels. Its program runs GPU work the other ranks do "
             "not: " +
             MsText(s.extra_ns) + " of kernel time per step.\n";
    case Cause::kSlowerGpu:
      return "  Cause: slower GPU. The kernels the other ranks also run, launched the same size, "
             "take " +
             MsText(s.slower_ns) +
             " per step longer on it (same work, slower GPU: clocks, temperature, a faulty "
             "GPU).\n";
    case Cause::kCommunication:
      return "  Cause: communication. Neither its kernels (" + SignedMs(s.compute_excess_ns) +
             ") nor its launches (" + SignedMs(s.host_excess_ns) +
             ") explain the wait; its collectives start late (another communicator, "
             "stream or network path).\n";
    case Cause::kNone:
      break;
  }
  return "";
}

// Each part per step against the other ranks' median, the cause's first.
std::string PartsText(const Straggler& s) {
  // Data loading and host CPU only where the summaries record them (a
  // DataLoader range, host samples).
  std::vector<std::pair<Cause, std::string>> parts;
  if (!std::isnan(s.loader_ns))
    parts.push_back({Cause::kDataLoading, "data loading " + MsText(s.part_loading_ns)});
  if (!std::isnan(s.host_cpu_ns))
    parts.push_back({Cause::kHostCpu, "host CPU " + MsText(s.part_cpu_ns)});
  const bool known = !std::isnan(s.loader_ns) || !std::isnan(s.host_cpu_ns);
  parts.insert(parts.end(),
               {{Cause::kLateLaunches,
                 (known ? "other late launches " : "late launches ") + MsText(s.part_late_ns)},
                {Cause::kGpuWork, "GPU work " + MsText(s.part_gpu_ns) + " (extra kernels " +
                                      SignedMs(s.extra_ns) + ", larger kernels " +
                                      SignedMs(s.larger_ns) + ")"},
                {Cause::kSlowerGpu, "slower kernels " + SignedMs(s.slower_ns)}});
  if (!s.by_scores)
    parts.push_back({Cause::kCommunication, "not explained (communication) " + MsText(s.comm_ns)});
  std::stable_partition(parts.begin(), parts.end(),
                        [&](const auto& x) { return x.first == s.cause; });
  std::vector<std::string> texts;
  for (const auto& part : parts) texts.push_back(part.second);
  return "  Per step, vs the other ranks' median: " + Join(texts, ", ") + "; kernel time in all " +
         SignedMs(s.compute_excess_ns) + ", launch lateness " + SignedMs(s.host_excess_ns) + ".\n";
}
}  // namespace

std::string VerdictText(const RanksAnalysis& a, const std::string& scores_where) {
  std::string out;
  if (a.stragglers.empty()) {
    if (!a.collectives.empty()) {
      std::vector<std::string> late;
      for (int i : a.not_alone)
        late.push_back(std::to_string(a.ranks[static_cast<size_t>(i)].rank));
      out += "Verdict: no straggler. ";
      if (!late.empty())
        out += "Rank " + Join(late, ", ") +
               " made the others wait in most steps, but not alone (the note above); no other ";
      else
        out += "No ";
      out += "rank made the others wait " + MsText(static_cast<double>(a.min_wait_ns)) +
             " or more per step in NCCL collectives (exposed: their GPUs otherwise idle) in "
             "most steps";
    } else {
      out +=
          "Verdict: no straggler. No NCCL collectives to match; no rank's per-step relative GPU or "
          "step score "
          "stayed below " +
          FormatFixed(a.options.threshold, 2);
    }
    out += a.score_flags.empty()
               ? ".\n"
               : "; some NVRx scores are below the threshold (" +
                     (scores_where.empty() ? std::string("--report scores lists them")
                                           : "listed " + scores_where) +
                     ").\n";
    return out;
  }
  for (const Straggler& s : a.stragglers) {
    const RankResult& r = a.ranks[static_cast<size_t>(s.rank_index)];
    const RankSummary& sum = a.summaries[static_cast<size_t>(s.rank_index)];
    out += "Verdict: rank " + std::to_string(r.rank) +
           (r.host.empty() ? "" : " (host " + r.host + ")") + " straggles from step " +
           std::to_string(s.from_step) + ": ";
    if (s.by_scores) {
      out += "its per-step relative " +
             std::string(s.cause == Cause::kSlowerGpu ? "GPU" : "step-time") + " score is below " +
             FormatFixed(a.options.threshold, 2) + " in " + std::to_string(s.steps_blocking) +
             " of " + std::to_string(s.steps_seen) +
             " steps (no NCCL collectives to measure waits).\n";
    } else {
      out += "the other ranks wait for it " + MsText(s.caused_ns) +
             " per step inside NCCL collectives with their GPUs otherwise idle (" +
             std::to_string(s.steps_blocking) + " of " + std::to_string(s.steps_seen) +
             " steps).\n";
    }
    out += CauseText(s, "device " + std::to_string(sum.critical_device) + " stream " +
                            std::to_string(sum.critical_stream));
    if (!s.by_scores && !std::isnan(s.step_ns)) {
      out += "  Cost: the other ranks wait " + MsText(s.caused_ns) + " per step for it" +
             (a.ranks.size() > 2 ? " and it alone holds the step back " + MsText(s.held_ns) +
                                       " (the next-to-last rank's wait)"
                                 : "") +
             "; if it matched the median rank the step would take " + MsText(s.step_if_matched_ns) +
             " instead of " + MsText(s.step_ns) + ".\n";
    }
    out += PartsText(s);
    if (!s.python.empty()) {
      std::vector<std::string> ev;
      for (const auto& [name, ns] : s.python) ev.push_back(name + " " + SignedMs(ns));
      out += "  Python functions using more CPU than on the other ranks (per step): " +
             Join(ev, "; ") + ".\n";
    }
    if (!s.extra_kernels.empty()) {
      std::vector<std::string> ev;
      for (const KernelExcess& k : s.extra_kernels) ev.push_back(ExtraText(k));
      out += "  Extra work (per step): " + Join(ev, "; ") + ".\n";
    }
    if (!s.larger_kernels.empty()) {
      std::vector<std::string> ev;
      for (const KernelExcess& k : s.larger_kernels) ev.push_back(SlowerText(k));
      out += "  Larger kernels (per step; launched larger; its median duration vs the others'): " +
             Join(ev, "; ") + ".\n";
    }
    if (!s.slower_kernels.empty()) {
      std::vector<std::string> ev;
      for (const KernelExcess& k : s.slower_kernels) ev.push_back(SlowerText(k));
      out += "  Slower kernels (per step; its median duration vs the others'): " + Join(ev, "; ") +
             ".\n";
    }
    std::vector<std::string> ev;
    for (const auto& [name, ns] : s.sections) {
      if (name != "step") ev.push_back("'" + name + "' " + SignedMs(ns));
    }
    if (!ev.empty())
      out += "  Sections longer than on the other ranks (per step): " + Join(ev, "; ") + ".\n";
    if (!s.only_here.empty()) {
      std::vector<std::string> q;
      for (const std::string& n : s.only_here) q.push_back("'" + n + "'");
      out += "  Only on this rank: section" + std::string(q.size() > 1 ? "s " : " ") +
             Join(q, ", ") + ".\n";
    }
    out += ScoresDisagreeText(a, s);
  }
  return out;
}

}  // namespace stepscope
