#include "analysis/model/steps.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "analysis/model/timeline.h"
#include "common/bounded_regex.h"
#include "common/kernel_sequence.h"
#include "common/step_names.h"
#include "common/step_windows.h"

namespace stepscope {
namespace {

// First digit run of a name, or -1.
int64_t NumberIn(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == s.size()) return -1;
  int64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) &&
         v < (INT64_MAX / 10 - 9)) {
    v = v * 10 + (s[i++] - '0');
  }
  return v;
}

// The step ranges by the one definition (common/step_names.h); with a
// --step-range regex, the ranges whose name matches it.
std::vector<NvtxStepRange> StepRanges(const TraceModel& m, const std::regex* re, StepNameKind* kind,
                                      StepRangeDrops* drops) {
  std::vector<int8_t> match(re ? m.strings().size() : 0, -1);
  StepRangeFinder finder;
  const auto& nvtx = m.nvtx();
  for (size_t i = 0; i < nvtx.size(); ++i) {
    const NvtxRecord& r = nvtx[i];
    if (r.kind == NvtxKind::kMark || r.name >= m.strings().size()) continue;
    NvtxStepRange x;
    x.start_ns = r.start_ns;
    x.end_ns = m.RangeEnd(static_cast<uint32_t>(i));
    x.open = m.IsOpen(static_cast<uint32_t>(i));
    x.tid = r.tid;
    x.index = static_cast<uint32_t>(i);
    const std::string& name = m.String(r.name);
    const std::string_view domain =
        r.domain < m.strings().size() ? std::string_view(m.String(r.domain)) : std::string_view();
    if (re == nullptr) {
      finder.Add(name, domain, x);
      continue;
    }
    if (match[r.name] < 0) {
      // Names longer than kMaxRegexSubject never match (common/bounded_regex.h).
      match[r.name] = BoundedRegexSearch(name, *re) ? 1 : 0;
    }
    if (match[r.name]) finder.AddMatched(domain, x);
  }
  return finder.Finish(kind, drops);
}

// The kernel-sequence fallback (common/kernel_sequence.h) on one device.
std::vector<Step> KernelSequenceSteps(const TraceModel& m, int device, std::string* anchor_name,
                                      uint32_t* inside_range) {
  // The device with the most kernels when none was chosen.
  int dev = device;
  if (dev < 0) {
    std::vector<int64_t> count;
    for (const GpuOp& o : m.gpu_ops()) {
      if (o.kind != GpuOpKind::kKernel) continue;
      if (o.device >= count.size()) count.resize(o.device + 1, 0);
      ++count[o.device];
    }
    if (count.empty()) return {};
    dev = static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
  }
  std::vector<SequenceOp> ops;
  std::vector<uint32_t> op_index;  // index into gpu_ops of each of `ops`
  for (size_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.device != static_cast<uint32_t>(dev)) continue;
    SequenceOp s;
    s.start_ns = o.start_ns;
    s.end_ns = o.end_ns;
    s.kernel = o.kind == GpuOpKind::kKernel;
    s.name = s.kernel ? m.kernels()[o.index].name : 0;
    ops.push_back(s);
    op_index.push_back(static_cast<uint32_t>(i));
  }
  const KernelSequence found = FindKernelSequence(ops, m.strings().size());
  if (!found.found) return {};
  *anchor_name = m.String(found.anchor);
  // Repetitions launched inside one and the same forward range (a model's
  // forward call: its layers) are parts of one call, not steps of a loop.
  std::vector<uint32_t> common;  // the first anchor's enclosing ranges, innermost first
  for (size_t a = 0; a < found.anchors.size(); ++a) {
    const GpuOp& o = m.gpu_ops()[op_index[found.anchors[a]]];
    std::vector<uint32_t> chain;
    for (uint32_t r = o.api != kNone ? m.api_range()[o.api] : kNone; r != kNone;
         r = m.nvtx_parent()[r]) {
      chain.push_back(r);
    }
    if (a == 0) {
      common = std::move(chain);
    } else {
      std::vector<uint32_t> keep;
      for (uint32_t r : common) {
        if (std::find(chain.begin(), chain.end(), r) != chain.end()) keep.push_back(r);
      }
      common = std::move(keep);
    }
    if (common.empty()) break;
  }
  // Only a forward call is evidence of layers: a "train" or "epoch" range
  // around a loop encloses steps.
  for (uint32_t r : common) {
    if (IsForwardRangeName(m.String(m.nvtx()[r].name))) {
      *inside_range = r;
      return {};
    }
  }
  std::vector<Step> steps;
  for (size_t a = 0; a < found.ranges.size(); ++a) {
    Step s;
    s.number = static_cast<int64_t>(a);
    s.name = "kernel sequence " + std::to_string(a);
    s.range_start_ns = found.ranges[a].first;
    s.range_end_ns = found.ranges[a].second;
    steps.push_back(std::move(s));
  }
  return steps;
}

}  // namespace

int StepSet::Find(int64_t number) const {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].number == number) return static_cast<int>(i);
  }
  return -1;
}

int StepSet::AtHostTime(int64_t t) const {
  auto pos = std::partition_point(steps.begin(), steps.end(),
                                  [&](const Step& s) { return s.range_start_ns <= t; });
  // Step ranges of one thread do not overlap; look back a little for others.
  for (int k = static_cast<int>(pos - steps.begin()) - 1, n = 0; k >= 0 && n < 4; --k, ++n) {
    if (steps[k].range_start_ns <= t && t < steps[k].range_end_ns) return k;
  }
  return -1;
}

std::vector<int32_t> OpSteps(const TraceModel& m, const StepSet& steps) {
  std::vector<int32_t> out(m.gpu_ops().size(), -1);
  if (steps.steps.empty()) return out;
  const bool by_gpu = steps.method == "kernel-sequence";
  for (size_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (by_gpu) {
      out[i] = steps.AtHostTime(o.start_ns);
    } else if (o.api != kNone) {
      out[i] = steps.AtHostTime(m.apis()[o.api].start_ns);
    }
  }
  return out;
}

StatusOr<StepSet> DetectSteps(const TraceModel& m, const StepOptions& options) {
  StepSet set;
  std::vector<NvtxStepRange> ranges;
  StepNameKind kind = StepNameKind::kNone;
  if (!options.range_regex.empty()) {
    std::regex re;
    try {
      re = std::regex(options.range_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidInput("--step-range '" + options.range_regex + "': bad regular expression (" +
                          e.what() + ")");
    }
    ranges = StepRanges(m, &re, &kind, &set.dropped);
    set.pattern = options.range_regex;
  } else {
    ranges = StepRanges(m, nullptr, &kind, &set.dropped);
    set.pattern = StepNamePattern(kind);
  }
  if (!ranges.empty()) {
    set.method = "nvtx";
    for (const NvtxStepRange& x : ranges) {
      const NvtxRecord& r = m.nvtx()[x.index];
      Step s;
      s.nvtx = x.index;
      s.tid = r.tid;
      s.name = m.String(r.name);
      s.number = x.number >= 0 ? x.number : NumberIn(s.name);
      s.range_start_ns = x.start_ns;
      s.range_end_ns = x.end_ns;
      s.complete = !x.open;
      set.steps.push_back(std::move(s));
    }
    for (size_t k = 0; k < set.steps.size(); ++k) {
      if (set.steps[k].number < 0) set.steps[k].number = static_cast<int64_t>(k);
    }
  } else if (options.range_regex.empty() && options.kernel_fallback) {
    std::string anchor;
    uint32_t inside = kNone;
    set.steps = KernelSequenceSteps(m, options.device, &anchor, &inside);
    if (!set.steps.empty()) {
      set.method = "kernel-sequence";
      set.pattern = anchor;
    } else {
      set.pattern.clear();
      if (inside != kNone) {
        set.note = "a kernel ('" + anchor.substr(0, 60) + "') repeats only inside one '" +
                   m.String(m.nvtx()[inside].name).substr(0, 60) +
                   "' range: parts of one call (layers), not steps";
      }
    }
  } else {
    set.pattern = options.range_regex;
  }
  if (set.steps.empty()) return set;

  // GPU work launched in each step.
  const std::vector<int32_t> op_step = OpSteps(m, set);
  for (size_t i = 0; i < op_step.size(); ++i) {
    if (op_step[i] < 0) continue;
    const GpuOp& o = m.gpu_ops()[i];
    if (options.device >= 0 && o.device != options.device) continue;
    Step& s = set.steps[op_step[i]];
    if (s.gpu_ops == 0 || o.start_ns < s.gpu_first_ns) s.gpu_first_ns = o.start_ns;
    s.gpu_last_ns = std::max(s.gpu_last_ns, o.end_ns);
    if (s.first_op == kNone ||
        (o.api != kNone && m.gpu_ops()[s.first_op].api != kNone &&
         m.apis()[o.api].start_ns < m.apis()[m.gpu_ops()[s.first_op].api].start_ns)) {
      s.first_op = static_cast<uint32_t>(i);
    }
    ++s.gpu_ops;
  }
  // Windows and warm-up: common/step_windows.h, the one definition.
  std::vector<StepExtent> extents;
  extents.reserve(set.steps.size());
  for (const Step& s : set.steps) {
    extents.push_back({s.range_start_ns, s.range_end_ns, s.gpu_ops > 0, s.gpu_first_ns,
                       s.gpu_last_ns, s.complete});
  }
  const std::vector<StepWindow> windows = StepWindows(extents);
  for (size_t k = 0; k < set.steps.size(); ++k) {
    set.steps[k].start_ns = windows[k].start_ns;
    set.steps[k].end_ns = windows[k].end_ns;
    set.steps[k].warmup = windows[k].warmup;
  }
  // Breakdown and top kernels per window.
  const FlatTimeline& timeline = m.Timeline(options.device);
  std::vector<int64_t> per_name(m.strings().size(), 0), per_count(m.strings().size(), 0);
  std::vector<StringId> touched;
  const auto& ops = m.gpu_ops();
  for (Step& s : set.steps) {
    s.breakdown = timeline.Window(s.start_ns, s.end_ns);
    auto it = std::partition_point(ops.begin(), ops.end(),
                                   [&](const GpuOp& o) { return o.start_ns < s.start_ns; });
    touched.clear();
    for (; it != ops.end() && it->start_ns < s.end_ns; ++it) {
      if (it->kind != GpuOpKind::kKernel) continue;
      if (options.device >= 0 && it->device != options.device) continue;
      const StringId n = m.kernels()[it->index].name;
      if (n >= per_name.size()) continue;
      if (per_count[n] == 0) touched.push_back(n);
      per_name[n] += it->end_ns - it->start_ns;
      ++per_count[n];
    }
    std::vector<StepKernel> all;
    all.reserve(touched.size());
    for (StringId n : touched) {
      all.push_back({n, per_name[n], per_count[n]});
      per_name[n] = 0;
      per_count[n] = 0;
    }
    std::sort(all.begin(), all.end(), [](const StepKernel& a, const StepKernel& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
    });
    if (all.size() > 5) all.resize(5);
    s.top_kernels = std::move(all);
  }
  std::vector<int64_t> durations = SteadyDurations(windows);
  set.stats = Summarize(&durations);
  return set;
}

}  // namespace stepscope
