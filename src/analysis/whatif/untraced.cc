#include "analysis/whatif/untraced.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "analysis/model/trace_model.h"
#include "common/stats.h"
#include "common/step_names.h"

namespace stepscope {

std::optional<UntracedSteps> ParseUntracedSteps(std::string_view text) {
  constexpr size_t kMaxValues = 64;
  std::vector<int64_t> v;
  for (size_t pos = 0;;) {
    const size_t comma = text.find(',', pos);
    const std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    int64_t ns = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), ns);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || ns <= 0) {
      return std::nullopt;
    }
    v.push_back(ns);
    if (v.size() > kMaxValues) return std::nullopt;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (v.size() >= 3) v.erase(v.begin());
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double spread = static_cast<double>(*hi) / static_cast<double>(*lo);
  const int n = static_cast<int>(v.size());
  return UntracedSteps{MedianNs(std::move(v)), n, spread};
}

std::optional<UntracedSteps> MeasuredUntracedSteps(const TraceModel& m) {
  for (const NvtxRecord& r : m.nvtx()) {
    if (r.kind != NvtxKind::kMark) continue;
    const std::string_view name = m.String(r.name);
    if (name.substr(0, kUntracedStepsMark.size()) != kUntracedStepsMark) continue;
    return ParseUntracedSteps(name.substr(kUntracedStepsMark.size()));
  }
  return std::nullopt;
}

}  // namespace stepscope
