// RuleContext (rule.h): the analyzed windows, steps and ranges as the rules
// read them.
#include <algorithm>
#include <cstdio>
#include <set>

#include "analysis/rules/rule.h"

namespace stepscope {

bool RuleContext::InWindows(int64_t t) const {
  auto it = std::partition_point(windows.begin(), windows.end(),
                                 [&](const Interval& w) { return w.end < t; });
  return it != windows.end() && it->start <= t;
}

int RuleContext::StepAtWindow(int64_t t) const {
  const auto& s = steps.steps;
  auto it = std::partition_point(s.begin(), s.end(), [&](const Step& x) { return x.end_ns < t; });
  if (it == s.end() || it->start_ns > t) return -1;
  return static_cast<int>(it - s.begin());
}

bool RuleContext::SpansSteps(uint32_t nvtx) const {
  const NvtxRecord& r = m.nvtx()[nvtx];
  const int64_t end = r.end_ns < r.start_ns ? INT64_MAX : r.end_ns;  // open: to the end
  int inside = 0;
  for (const Step& s : steps.steps) {
    if (s.range_start_ns >= r.start_ns && s.range_end_ns <= end && ++inside == 2) return true;
  }
  return false;
}

uint32_t RuleContext::WhereRange(uint32_t nvtx) const {
  // A range around two steps or more (a library's range left open for the
  // run, such as NCCL's ncclCommInitRankConfig, or a wrapper around the
  // loop) is not where a step's work is: its enclosing range that is, if any.
  while (nvtx != kNone && nvtx < m.nvtx().size() &&
         !(nvtx < is_step_range.size() && is_step_range[nvtx]) && SpansSteps(nvtx)) {
    nvtx = nvtx < m.nvtx_parent().size() ? m.nvtx_parent()[nvtx] : kNone;
  }
  return nvtx < m.nvtx().size() ? nvtx : kNone;
}

std::string RuleContext::RangeName(uint32_t nvtx) const {
  nvtx = WhereRange(nvtx);
  if (nvtx == kNone) return "no NVTX range";
  if (nvtx < is_step_range.size() && is_step_range[nvtx]) return "the step range";
  return "`" + m.String(m.nvtx()[nvtx].name) + "`";
}

std::string RuleContext::Rel(int64_t t) const {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "+%.6f s", (t - m.origin_ns()) / 1e9);
  return buf;
}

std::string RuleContext::StepsText(const std::vector<int>& idx) const {
  if (idx.empty() || steps.steps.empty()) return "";
  std::set<int> u(idx.begin(), idx.end());
  std::vector<int64_t> nums;
  for (int i : u) nums.push_back(steps.steps[i].number);
  std::sort(nums.begin(), nums.end());
  bool contiguous = true;
  for (size_t k = 1; k < nums.size(); ++k) contiguous &= nums[k] == nums[k - 1] + 1;
  if (nums.size() == 1) return "step " + std::to_string(nums[0]);
  if (contiguous)
    return "steps " + std::to_string(nums.front()) + "-" + std::to_string(nums.back());
  if (nums.size() <= 5) {
    std::string s = "steps ";
    for (size_t k = 0; k < nums.size(); ++k) s += (k ? ", " : "") + std::to_string(nums[k]);
    return s;
  }
  return std::to_string(nums.size()) + " of " + std::to_string(nsteps) + " steps (" +
         std::to_string(nums.front()) + "-" + std::to_string(nums.back()) + ")";
}

void RuleContext::Finish(Finding* f, bool significant) const {
  f->cost_pct = analyzed_ns > 0 ? 100.0 * f->cost_ns / analyzed_ns : 0.0;
  f->cost_per_step_ns = nsteps > 0 ? f->cost_ns / nsteps : 0;
  f->reported = significant;
}

void RuleContext::FinishAtThreshold(Finding* f, int64_t evidence_ns) const {
  Finish(f, true);
  const double pct = analyzed_ns > 0 ? 100.0 * evidence_ns / analyzed_ns : 0.0;
  f->reported = pct >= opt.min_cost_pct;
}

}  // namespace stepscope
