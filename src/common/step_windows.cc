#include "common/step_windows.h"

#include <algorithm>

#include "common/stats.h"

namespace stepscope {

std::vector<StepWindow> StepWindows(const std::vector<StepExtent>& steps) {
  std::vector<StepWindow> w(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    const StepExtent& s = steps[k];
    if (k == 0) {
      w[k].start_ns = s.has_gpu ? std::min(s.range_start_ns, s.gpu_first_ns) : s.range_start_ns;
    } else {
      w[k].start_ns = w[k - 1].end_ns;
    }
    const int64_t end = s.has_gpu ? s.gpu_last_ns : s.range_end_ns;
    w[k].end_ns = std::max(w[k].start_ns, end);
    w[k].complete = s.complete;
  }
  // A window of zero length (the step's GPU work ended before the previous
  // step's did) is no steady-state sample: not steady, not in the median.
  std::vector<int64_t> durations;
  for (const StepWindow& x : w) {
    if (x.complete && x.duration() > 0) durations.push_back(x.duration());
  }
  const double median = Median(durations);
  size_t steady = durations.size();
  for (StepWindow& x : w) {
    if (!x.complete || x.duration() <= 0) continue;
    if (steady <= 1 || x.duration() * 4 <= median * 5) break;  // > 1.25x the median
    x.warmup = true;
    --steady;
  }
  return w;
}

std::vector<int64_t> SteadyDurations(const std::vector<StepWindow>& windows) {
  std::vector<int64_t> out;
  for (const StepWindow& x : windows) {
    if (x.steady()) out.push_back(x.duration());
  }
  return out;
}

}  // namespace stepscope
