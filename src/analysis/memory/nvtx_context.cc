#include "analysis/memory/nvtx_context.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "common/step_names.h"

namespace stepscope::memory {

bool IsStepName(const std::string& name, int64_t* number) {
  return ParseStepName(name, number) != StepNameKind::kNone;
}

NvtxContext::NvtxContext(const std::vector<NvtxRecord>& ranges,
                         const std::vector<std::string>& strings) {
  constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();
  StepRangeFinder finder;
  for (const NvtxRecord& r : ranges) {
    if (r.kind == NvtxKind::kMark) continue;
    int64_t end = r.end_ns < r.start_ns ? kOpen : r.end_ns;
    if (r.name < strings.size()) {
      NvtxStepRange x;
      x.start_ns = r.start_ns;
      x.end_ns = end;
      x.open = end == kOpen;
      x.tid = r.tid;
      finder.Add(
          strings[r.name],
          r.domain < strings.size() ? std::string_view(strings[r.domain]) : std::string_view(), x);
    }
    if (r.kind == NvtxKind::kPushPop) by_thread_[r.tid].push_back({r.start_ns, end, r.name, -1});
  }
  // The steps by the one definition (common/step_names.h).
  for (const NvtxStepRange& x : finder.Finish(nullptr, nullptr)) {
    steps_.push_back({x.start_ns, x.end_ns, x.number, x.tid});
  }
  for (auto& [tid, v] : by_thread_) {
    // Outer ranges first when two start at the same time (longer first).
    std::stable_sort(v.begin(), v.end(), [](const Range& a, const Range& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<int32_t> stack;
    for (size_t i = 0; i < v.size(); ++i) {
      while (!stack.empty() && v[static_cast<size_t>(stack.back())].end <= v[i].start)
        stack.pop_back();
      v[i].parent = stack.empty() ? -1 : stack.back();
      stack.push_back(static_cast<int32_t>(i));
    }
  }
}

StringId NvtxContext::Innermost(uint32_t tid, int64_t t) const {
  auto it = by_thread_.find(tid);
  if (it == by_thread_.end()) return kNoString;
  const std::vector<Range>& v = it->second;
  auto ub = std::upper_bound(v.begin(), v.end(), t,
                             [](int64_t x, const Range& r) { return x < r.start; });
  int32_t i = static_cast<int32_t>(ub - v.begin()) - 1;
  while (i >= 0 && v[static_cast<size_t>(i)].end <= t) i = v[static_cast<size_t>(i)].parent;
  return i >= 0 ? v[static_cast<size_t>(i)].name : kNoString;
}

int64_t NvtxContext::StepAt(int64_t t, uint32_t* step_tid) const {
  auto ub = std::upper_bound(steps_.begin(), steps_.end(), t,
                             [](int64_t x, const Step& s) { return x < s.start; });
  // Steps rarely overlap; look back over a few in case they do.
  for (int k = 0; k < 8 && ub != steps_.begin(); ++k) {
    --ub;
    if (ub->end > t) {
      if (step_tid) *step_tid = ub->tid;
      return ub->number;
    }
  }
  return -1;
}

NvtxAt NvtxContext::At(uint32_t tid, int64_t t) const { return {Innermost(tid, t), StepAt(t)}; }

NvtxAt NvtxContext::AtStepThread(int64_t t) const {
  uint32_t tid = 0;
  NvtxAt at;
  at.step = StepAt(t, &tid);
  if (at.step >= 0) at.range = Innermost(tid, t);
  return at;
}

}  // namespace stepscope::memory
