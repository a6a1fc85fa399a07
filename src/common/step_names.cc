#include "common/step_names.h"

#include <algorithm>
#include <map>

namespace stepscope {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// 1-18 digits and nothing else -> the value.
bool Digits(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

StepNameKind ParseStepName(std::string_view name, int64_t* number) {
  int64_t n = 0;
  constexpr std::string_view kProfiler = "ProfilerStep#";
  if (name.substr(0, kProfiler.size()) == kProfiler) {
    if (!Digits(name.substr(kProfiler.size()), &n)) return StepNameKind::kNone;
    if (number) *number = n;
    return StepNameKind::kProfilerStep;
  }
  if (name.substr(0, kIterationPrefix.size()) == kIterationPrefix) {
    if (!Digits(name.substr(kIterationPrefix.size()), &n)) return StepNameKind::kNone;
    if (number) *number = n;
    return StepNameKind::kIteration;
  }
  size_t b = 0, e = name.size();
  while (b < e && IsSpace(name[b])) ++b;
  while (e > b && IsSpace(name[e - 1])) --e;
  std::string_view s = name.substr(b, e - b);
  if (s.size() < 5 || Lower(s[0]) != 's' || Lower(s[1]) != 't' || Lower(s[2]) != 'e' ||
      Lower(s[3]) != 'p') {
    return StepNameKind::kNone;
  }
  size_t i = 4;
  while (i < s.size() &&
         (s[i] == ' ' || s[i] == '_' || s[i] == '#' || s[i] == ':' || s[i] == '-')) {
    ++i;
  }
  if (!Digits(s.substr(i), &n)) return StepNameKind::kNone;
  if (number) *number = n;
  return StepNameKind::kStep;
}

const char* StepNamePattern(StepNameKind kind) {
  switch (kind) {
    case StepNameKind::kStep:
      return "step N";
    case StepNameKind::kProfilerStep:
      return "ProfilerStep#N";
    case StepNameKind::kIteration:
      return "iteration N";
    case StepNameKind::kNone:
      break;
  }
  return "";
}

void StepRangeFinder::Add(std::string_view name, std::string_view domain, const NvtxStepRange& r) {
  int64_t n = -1;
  const StepNameKind kind = ParseStepName(name, &n);
  if (kind == StepNameKind::kNone) return;
  NvtxStepRange x = r;
  x.number = n;
  if (domain == kGpuSideDomain) {
    ++drops_.gpu_side;
  } else if (!r.open && r.end_ns <= r.start_ns) {
    ++drops_.zero_length;
  } else {
    by_kind_[static_cast<int>(kind)].push_back(x);
  }
}

void StepRangeFinder::AddMatched(std::string_view domain, const NvtxStepRange& r) {
  if (domain == kGpuSideDomain) {
    ++drops_.gpu_side;
  } else if (!r.open && r.end_ns <= r.start_ns) {
    ++drops_.zero_length;
  } else {
    by_kind_[static_cast<int>(StepNameKind::kStep)].push_back(r);
  }
}

std::vector<NvtxStepRange> StepRangeFinder::Finish(StepNameKind* kind, StepRangeDrops* drops) {
  int k = 1;
  while (k + 1 < kStepNameKinds && by_kind_[k].empty()) ++k;
  std::vector<NvtxStepRange> v = std::move(by_kind_[k]);
  for (int lower = k + 1; lower < kStepNameKinds; ++lower) {
    drops_.other_kind += static_cast<int64_t>(by_kind_[lower].size());
  }
  std::stable_sort(v.begin(), v.end(), [](const NvtxStepRange& a, const NvtxStepRange& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;  // the enclosing range first
  });
  std::vector<NvtxStepRange> out;
  if (!v.empty()) {
    // The thread with the most step ranges; ties: the one whose first range is earliest.
    std::map<uint32_t, int64_t> per_tid;
    for (const NvtxStepRange& r : v) ++per_tid[r.tid];
    uint32_t tid = v.front().tid;
    for (const NvtxStepRange& r : v) {
      if (per_tid[r.tid] > per_tid[tid]) tid = r.tid;
    }
    for (const NvtxStepRange& r : v) {
      if (r.tid != tid) {
        ++drops_.other_thread;
      } else if (!out.empty() && (out.back().open || r.start_ns < out.back().end_ns)) {
        ++drops_.overlapping;
      } else {
        out.push_back(r);
      }
    }
  }
  if (kind) *kind = out.empty() ? StepNameKind::kNone : static_cast<StepNameKind>(k);
  if (drops) *drops = drops_;
  return out;
}

}  // namespace stepscope
