#include "common/kernel_sequence.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace stepscope {

KernelSequence FindKernelSequence(const std::vector<SequenceOp>& ops, size_t name_bound) {
  KernelSequence out;
  std::vector<size_t> seq;  // indices into ops of the kernels
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kernel && ops[i].name < name_bound) seq.push_back(i);
  }
  struct NameStats {
    int64_t count = 0;
    int64_t first = -1, last = -1;
    int64_t min_gap = std::numeric_limits<int64_t>::max(), max_gap = 0;
  };
  std::vector<NameStats> st(name_bound);
  for (size_t k = 0; k < seq.size(); ++k) {
    NameStats& s = st[ops[seq[k]].name];
    const int64_t pos = static_cast<int64_t>(k);
    if (s.last >= 0) {
      s.min_gap = std::min(s.min_gap, pos - s.last);
      s.max_gap = std::max(s.max_gap, pos - s.last);
    } else {
      s.first = pos;
    }
    s.last = pos;
    ++s.count;
  }
  int64_t best = -1;
  for (size_t n = 0; n < st.size(); ++n) {
    const NameStats& s = st[n];
    if (s.count < 3 || s.max_gap * 10 > s.min_gap * 11) continue;  // spacing within 10%
    if (best < 0 || s.count > st[static_cast<size_t>(best)].count ||
        (s.count == st[static_cast<size_t>(best)].count &&
         s.first < st[static_cast<size_t>(best)].first)) {
      best = static_cast<int64_t>(n);
    }
  }
  if (best < 0) return out;
  out.found = true;
  out.anchor = static_cast<uint32_t>(best);
  std::vector<size_t> at;  // positions in seq
  for (size_t k = 0; k < seq.size(); ++k) {
    if (ops[seq[k]].name == out.anchor) at.push_back(k), out.anchors.push_back(seq[k]);
  }
  const size_t period = static_cast<size_t>(st[static_cast<size_t>(best)].max_gap);
  for (size_t a = 0; a < at.size(); ++a) {
    const SequenceOp& first = ops[seq[at[a]]];
    int64_t start = first.start_ns;
    // The copies/memsets right before the anchor kernel (the step's input
    // copy) belong to its step, not to the end of the previous one.
    for (size_t j = seq[at[a]]; j > 0;) {
      const SequenceOp& o = ops[--j];
      if (a > 0 && o.start_ns <= ops[seq[at[a - 1]]].start_ns) break;
      if (o.kernel) break;
      start = o.start_ns;
    }
    if (a > 0) out.ranges.back().second = std::min(out.ranges.back().second, start);
    int64_t end = 0;
    if (a + 1 < at.size()) {
      end = ops[seq[at[a + 1]]].start_ns;
    } else {
      end = first.end_ns;
      const size_t last_k = std::min(seq.size() - 1, at[a] + period - 1);
      for (size_t k = at[a]; k <= last_k; ++k) end = std::max(end, ops[seq[k]].end_ns);
    }
    out.ranges.emplace_back(start, end);
  }
  return out;
}

bool IsForwardRangeName(std::string_view name) {
  if (name.substr(0, 10) == "nn.Module:") return true;
  for (size_t i = name.find("orward"); i != std::string_view::npos;
       i = name.find("orward", i + 1)) {
    if (i == 0 || (name[i - 1] != 'f' && name[i - 1] != 'F')) continue;
    const size_t b = i - 1, e = i + 6;
    const bool left = b == 0 || !std::isalnum(static_cast<unsigned char>(name[b - 1]));
    const bool right = e == name.size() || !std::isalnum(static_cast<unsigned char>(name[e]));
    if (left && right) return true;
  }
  return false;
}

}  // namespace stepscope
