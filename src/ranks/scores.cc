#include "ranks/scores.h"

#include <algorithm>

#include "common/stats.h"

namespace stepscope {

WindowStat MakeWindowStat(const NamedTimes& n, const std::vector<int>& steps) {
  WindowStat w;
  std::vector<double> medians;
  for (int i : steps) {
    const size_t s = static_cast<size_t>(i);
    if (s >= n.count.size() || n.count[s] <= 0) continue;
    medians.push_back(static_cast<double>(n.median_ns[s]));
    w.total_ns += static_cast<double>(n.total_ns[s]);
  }
  w.median_ns = Median(std::move(medians));
  return w;
}

namespace {

// Per name: the lowest median over ranks, NaN when some rank lacks the name.
std::vector<double> References(const std::vector<std::vector<WindowStat>>& stats) {
  if (stats.empty()) return {};
  std::vector<double> ref(stats[0].size(), kNaN);
  for (size_t k = 0; k < ref.size(); ++k) {
    double best = kNaN;
    for (const auto& rank : stats) {
      if (k >= rank.size() || !rank[k].present()) {
        best = kNaN;
        break;
      }
      if (std::isnan(best) || rank[k].median_ns < best) best = rank[k].median_ns;
    }
    ref[k] = best;
  }
  return ref;
}

double WeightedScore(const std::vector<WindowStat>& current, const std::vector<double>& ref) {
  double weighted = 0, weights = 0;
  for (size_t k = 0; k < current.size() && k < ref.size(); ++k) {
    if (std::isnan(ref[k]) || !current[k].present()) continue;
    weighted += ref[k] / current[k].median_ns * current[k].total_ns;
    weights += current[k].total_ns;
  }
  return weights > 0 ? weighted / weights : kNaN;
}

// Per name: the best (lowest) median over the windows of one rank.
std::vector<double> Best(const std::vector<std::vector<WindowStat>>& windows) {
  std::vector<double> best(windows.empty() ? 0 : windows.back().size(), kNaN);
  for (const auto& w : windows) {
    for (size_t k = 0; k < best.size() && k < w.size(); ++k) {
      if (w[k].present() && (std::isnan(best[k]) || w[k].median_ns < best[k]))
        best[k] = w[k].median_ns;
    }
  }
  return best;
}

}  // namespace

std::vector<double> RelativeGpuScores(const std::vector<std::vector<WindowStat>>& stats) {
  std::vector<double> ref = References(stats);
  std::vector<double> out;
  out.reserve(stats.size());
  for (const auto& rank : stats) out.push_back(WeightedScore(rank, ref));
  return out;
}

std::vector<std::vector<double>> RelativeSectionScores(
    const std::vector<std::vector<WindowStat>>& stats) {
  std::vector<double> ref = References(stats);
  std::vector<std::vector<double>> out;
  for (const auto& rank : stats) {
    std::vector<double> scores(ref.size(), kNaN);
    for (size_t k = 0; k < ref.size() && k < rank.size(); ++k) {
      if (!std::isnan(ref[k]) && rank[k].present()) scores[k] = ref[k] / rank[k].median_ns;
    }
    out.push_back(std::move(scores));
  }
  return out;
}

double IndividualGpuScore(const std::vector<std::vector<WindowStat>>& windows) {
  if (windows.empty()) return kNaN;
  return WeightedScore(windows.back(), Best(windows));
}

std::vector<double> IndividualSectionScores(const std::vector<std::vector<WindowStat>>& windows) {
  if (windows.empty()) return {};
  std::vector<double> best = Best(windows);
  const auto& cur = windows.back();
  std::vector<double> out(best.size(), kNaN);
  for (size_t k = 0; k < best.size(); ++k) {
    if (k < cur.size() && cur[k].present() && !std::isnan(best[k]))
      out[k] = best[k] / cur[k].median_ns;
  }
  return out;
}

}  // namespace stepscope
