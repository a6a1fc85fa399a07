#include "analysis/memory/nvtx_context.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace stepscope::memory {

bool IsStepName(const std::string& name, int64_t* number) {
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  size_t i = 0;
  if (s.rfind("profilerstep", 0) == 0) {
    i = 12;
  } else if (s.rfind("step", 0) == 0) {
    i = 4;
  } else {
    return false;
  }
  if (i < s.size() && (s[i] == ' ' || s[i] == '_' || s[i] == '#' || s[i] == ':' || s[i] == '-'))
    ++i;
  if (i >= s.size() || s.size() - i > 18) return false;
  int64_t n = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    n = n * 10 + (s[i] - '0');
  }
  if (number) *number = n;
  return true;
}

NvtxContext::NvtxContext(const std::vector<NvtxRecord>& ranges,
                         const std::vector<std::string>& strings) {
  constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();
  for (const NvtxRecord& r : ranges) {
    if (r.kind == NvtxKind::kMark) continue;
    int64_t end = r.end_ns < r.start_ns ? kOpen : r.end_ns;
    int64_t step = 0;
    if (r.name < strings.size() && IsStepName(strings[r.name], &step)) {
      steps_.push_back({r.start_ns, end, step, r.tid});
    }
    if (r.kind == NvtxKind::kPushPop) by_thread_[r.tid].push_back({r.start_ns, end, r.name, -1});
  }
  std::stable_sort(steps_.begin(), steps_.end(),
                   [](const Step& a, const Step& b) { return a.start < b.start; });
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
