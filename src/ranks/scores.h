// Performance scores as the NVIDIA Resiliency Extension (NVRx) defines them.
//
// NVRx (nvidia_resiliency_ext.straggler, docs: straggler_det/usage_guide)
// scores each rank from 0 (worst) to 1 (best) as reference time / this
// rank's median time:
//  * relative: the reference is the best (lowest) median among all ranks;
//  * individual: the reference is the best median this rank ever had.
// Section scores are that ratio per section. The GPU score combines the
// per-kernel ratios into one number, a weighted arithmetic mean with each
// kernel's total time on this rank as its weight; kernels some rank did not
// run are skipped, and NCCL kernels are left out (their time is mostly
// waiting for other ranks). A rank straggles when a score is below the
// threshold (NVRx's default 0.75).
//
// stepscope's median of a window of steps is the median of the per-step
// medians the summary keeps (docs/ranks.md explains why); python/stepscope/
// straggler.py implements the same formulas for the live monitor.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/stats.h"  // Median
#include "ranks/rank_summary.h"

namespace stepscope {

inline constexpr double kDefaultScoreThreshold = 0.75;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One name's timing on one rank over a window: NaN median = not run there.
struct WindowStat {
  double median_ns = kNaN;
  double total_ns = 0;
  bool present() const { return !std::isnan(median_ns) && median_ns > 0; }
};

// stats[r][k]: rank r, name k. Returns one GPU score per rank (NaN when the
// rank shares no kernel with every other rank).
std::vector<double> RelativeGpuScores(const std::vector<std::vector<WindowStat>>& stats);
// stats[r][k] -> scores[r][k] = min_r' median / median (NaN if any rank lacks k).
std::vector<std::vector<double>> RelativeSectionScores(
    const std::vector<std::vector<WindowStat>>& stats);
// windows[w][k] for one rank, oldest first; the last window is "current".
// GPU: weighted by the current window's totals. NaN when nothing is current.
double IndividualGpuScore(const std::vector<std::vector<WindowStat>>& windows);
std::vector<double> IndividualSectionScores(const std::vector<std::vector<WindowStat>>& windows);

// The window statistic of `n` over the summary step indices `steps`
// (median of the per-step medians of the steps where it ran; total summed).
WindowStat MakeWindowStat(const NamedTimes& n, const std::vector<int>& steps);

}  // namespace stepscope
