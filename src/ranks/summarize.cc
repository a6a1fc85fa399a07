#include "ranks/summarize.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/file_util.h"
#include "common/intervals.h"
#include "common/step_names.h"
#include "common/strings.h"

namespace stepscope {

bool IsNcclKernelName(std::string_view name) {
  return StartsWith(name, "ncclDevKernel_") || StartsWith(name, "ncclKernel_");
}

namespace {

int64_t Median(std::vector<int64_t>* v) {
  if (v->empty()) return 0;
  size_t mid = v->size() / 2;
  std::nth_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(mid), v->end());
  int64_t hi = (*v)[mid];
  if (v->size() % 2) return hi;
  int64_t lo = *std::max_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(mid));
  return lo + (hi - lo) / 2;
}

// One (name, step, duration) sample; grouped into NamedTimes at the end.
struct Sample {
  uint32_t name;  // index into the name table
  uint32_t step;  // index into RankSummary::steps
  int64_t dur;
};

std::vector<NamedTimes> GroupSamples(std::vector<Sample>* samples,
                                     const std::vector<std::string>& names, size_t nsteps) {
  std::sort(samples->begin(), samples->end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.name, a.step) < std::tie(b.name, b.step);
  });
  std::vector<NamedTimes> out;
  std::vector<int64_t> durs;
  size_t i = 0;
  while (i < samples->size()) {
    const uint32_t name = (*samples)[i].name;
    NamedTimes n;
    n.name = names[name];
    n.total_ns.assign(nsteps, 0);
    n.count.assign(nsteps, 0);
    n.median_ns.assign(nsteps, 0);
    while (i < samples->size() && (*samples)[i].name == name) {
      const uint32_t step = (*samples)[i].step;
      durs.clear();
      while (i < samples->size() && (*samples)[i].name == name && (*samples)[i].step == step) {
        durs.push_back((*samples)[i].dur);
        ++i;
      }
      for (int64_t d : durs) n.total_ns[step] += d;
      n.count[step] = static_cast<int64_t>(durs.size());
      n.median_ns[step] = Median(&durs);
    }
    out.push_back(std::move(n));
  }
  // Largest total first: the order people read them in.
  auto total = [](const NamedTimes& n) {
    int64_t t = 0;
    for (int64_t v : n.total_ns) t += v;
    return t;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const NamedTimes& a, const NamedTimes& b) { return total(a) > total(b); });
  return out;
}

int64_t MetaInt(const TraceReader& t, const char* key, int64_t fallback) {
  int64_t v = 0;
  return ParseInt64(t.Meta(key), &v) ? v : fallback;
}

// Sections come from the default NVTX domain and torch's user annotations;
// imported per-operator ranges (cpu_op, python_function) are not sections.
bool IsSectionDomain(const std::string& domain) {
  return domain.empty() || domain == "user_annotation";
}

constexpr size_t kMaxSections = 256;

}  // namespace

StatusOr<RankSummary> BuildSummary(const TraceReader& trace) {
  RankSummary s;
  s.trace = trace.path();
  s.rank = MetaInt(trace, "rank", -1);
  s.local_rank = MetaInt(trace, "local_rank", -1);
  s.world_size = MetaInt(trace, "world_size", -1);
  s.host = trace.Meta("host");
  s.pid = MetaInt(trace, "pid", 0);
  s.clock = trace.Meta("clock");
  s.clock_offset_ns = MetaInt(trace, "wall_clock_offset_ns", 0);

  ASSIGN_OR_RETURN(std::vector<KernelRecord> kernels, trace.Kernels());
  ASSIGN_OR_RETURN(std::vector<MemcpyRecord> memcpys, trace.Memcpys());
  ASSIGN_OR_RETURN(std::vector<MemsetRecord> memsets, trace.Memsets());
  ASSIGN_OR_RETURN(std::vector<ApiRecord> apis, trace.Apis());
  ASSIGN_OR_RETURN(std::vector<NvtxRecord> nvtx, trace.Nvtx());

  // --- Steps: the one definition (common/step_names.h), as `steps`; a rank
  // summary also needs the numbers to rise (steps are matched across ranks by
  // number), so a repeated or lower number is dropped.
  StepRangeFinder finder;
  for (const NvtxRecord& r : nvtx) {
    if (r.kind == NvtxKind::kMark || r.end_ns < r.start_ns) continue;
    NvtxStepRange x;
    x.start_ns = r.start_ns;
    x.end_ns = r.end_ns;
    x.tid = r.tid;
    finder.Add(trace.String(r.name), trace.String(r.domain), x);
  }
  StepNameKind kind = StepNameKind::kNone;
  const std::vector<NvtxStepRange> ranges = finder.Finish(&kind, nullptr);
  if (!ranges.empty()) {
    for (const NvtxStepRange& r : ranges) {
      if (!s.steps.empty() && r.number <= s.steps.back().step) continue;
      StepSummary st;
      st.step = r.number;
      st.start_ns = r.start_ns;
      st.end_ns = r.end_ns;
      s.steps.push_back(st);
    }
    s.step_source = kind == StepNameKind::kProfilerStep ? "profiler"
                    : kind == StepNameKind::kIteration  ? "iteration"
                                                        : "nvtx";
  } else {
    // No step markers: the whole trace is step 0.
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const KernelRecord& k : kernels)
      lo = std::min(lo, k.start_ns), hi = std::max(hi, k.end_ns);
    for (const ApiRecord& a : apis) lo = std::min(lo, a.start_ns), hi = std::max(hi, a.end_ns);
    if (lo <= hi) {
      StepSummary st;
      st.step = 0;
      st.start_ns = lo;
      st.end_ns = hi;
      s.steps.push_back(st);
    }
    s.step_source = "none";
  }
  const size_t nsteps = s.steps.size();
  // Index of the step whose host range holds t, or -1.
  auto step_at = [&](int64_t t) -> int {
    auto it = std::upper_bound(s.steps.begin(), s.steps.end(), t,
                               [](int64_t v, const StepSummary& st) { return v < st.start_ns; });
    if (it == s.steps.begin()) return -1;
    --it;
    return t <= it->end_ns ? static_cast<int>(it - s.steps.begin()) : -1;
  };

  // --- Launch times through the correlation id.
  std::unordered_map<uint32_t, int64_t> launch_at;
  launch_at.reserve(apis.size());
  for (const ApiRecord& a : apis) {
    if (a.correlation != 0) launch_at.emplace(a.correlation, a.start_ns);
  }
  auto launch_of = [&](uint32_t correlation, int64_t* t) {
    if (correlation == 0) return false;
    auto it = launch_at.find(correlation);
    if (it == launch_at.end()) return false;
    *t = it->second;
    return true;
  };

  // --- Kernels: step of each, names, critical stream.
  std::vector<int> kernel_step(kernels.size(), -1);
  std::vector<uint8_t> kernel_nccl(kernels.size(), 0);
  std::map<std::pair<uint32_t, uint32_t>, int64_t> compute_per_stream;
  std::vector<std::string> kernel_names;
  std::unordered_map<StringId, uint32_t> kernel_name_index;
  std::vector<Sample> kernel_samples;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelRecord& k = kernels[i];
    const std::string& name = trace.String(k.name);
    kernel_nccl[i] = IsNcclKernelName(name);
    int64_t dur = std::max<int64_t>(0, k.end_ns - k.start_ns);
    if (!kernel_nccl[i]) compute_per_stream[{k.device, k.stream}] += dur;
    int64_t t = 0;
    kernel_step[i] = step_at(launch_of(k.correlation, &t) ? t : k.start_ns);
    if (kernel_step[i] < 0) continue;
    auto [it, inserted] =
        kernel_name_index.emplace(k.name, static_cast<uint32_t>(kernel_names.size()));
    if (inserted) kernel_names.push_back(name);
    kernel_samples.push_back({it->second, static_cast<uint32_t>(kernel_step[i]), dur});
  }
  s.kernels = GroupSamples(&kernel_samples, kernel_names, nsteps);
  for (NamedTimes& n : s.kernels) n.nccl = IsNcclKernelName(n.name);
  if (!compute_per_stream.empty()) {
    auto best = std::max_element(compute_per_stream.begin(), compute_per_stream.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    s.critical_device = best->first.first;
    s.critical_stream = best->first.second;
  }

  // --- Per step: spans, compute/comm unions and their overlap, per device.
  {
    std::vector<std::vector<size_t>> per_step(nsteps);
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernel_step[i] >= 0) per_step[static_cast<size_t>(kernel_step[i])].push_back(i);
    }
    for (size_t st = 0; st < nsteps; ++st) {
      StepSummary& step = s.steps[st];
      std::map<uint32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> per_device;
      for (size_t i : per_step[st]) {
        const KernelRecord& k = kernels[i];
        Interval iv{k.start_ns, std::max(k.start_ns, k.end_ns)};
        auto& dev = per_device[k.device];
        (kernel_nccl[i] ? dev.second : dev.first).push_back(iv);
        if (step.kernels == 0 || iv.start < step.gpu_start_ns) step.gpu_start_ns = iv.start;
        if (step.kernels == 0 || iv.end > step.gpu_end_ns) step.gpu_end_ns = iv.end;
        ++step.kernels;
      }
      for (auto& [device, lists] : per_device) {
        step.compute_ns += MergeIntervals(&lists.first);
        step.comm_ns += MergeIntervals(&lists.second);
        step.overlap_ns += IntersectionLength(lists.second, lists.first);
      }
    }
  }

  // --- Host launch lateness on the critical stream (kernels, copies, memsets).
  {
    struct Op {
      int64_t start, end;
      uint32_t correlation;
    };
    std::vector<Op> ops;
    for (const KernelRecord& k : kernels) {
      if (k.device == s.critical_device && k.stream == s.critical_stream) {
        ops.push_back({k.start_ns, k.end_ns, k.correlation});
      }
    }
    for (const MemcpyRecord& m : memcpys) {
      if (m.device == s.critical_device && m.stream == s.critical_stream) {
        ops.push_back({m.start_ns, m.end_ns, m.correlation});
      }
    }
    for (const MemsetRecord& m : memsets) {
      if (m.device == s.critical_device && m.stream == s.critical_stream) {
        ops.push_back({m.start_ns, m.end_ns, m.correlation});
      }
    }
    std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
    int64_t prev_end = std::numeric_limits<int64_t>::min();
    for (const Op& op : ops) {
      int64_t launch = 0;
      if (prev_end != std::numeric_limits<int64_t>::min() && op.start > prev_end &&
          launch_of(op.correlation, &launch)) {
        int late = step_at(launch);
        if (late >= 0) {
          s.steps[static_cast<size_t>(late)].launch_late_ns +=
              std::max<int64_t>(0, std::min(launch, op.start) - prev_end);
        }
      }
      prev_end = std::max(prev_end, op.end);
    }
  }

  // --- NVTX sections (the step ranges themselves become the section "step").
  {
    std::vector<std::string> names;
    std::unordered_map<StringId, uint32_t> index;
    std::vector<Sample> samples;
    for (const NvtxRecord& r : nvtx) {
      if (r.kind == NvtxKind::kMark || r.end_ns < r.start_ns) continue;
      if (!IsSectionDomain(trace.String(r.domain))) continue;
      int st = step_at(r.start_ns);
      if (st < 0) continue;
      int64_t n = 0;
      const std::string& name = trace.String(r.name);
      if (ParseStepName(name, &n) != StepNameKind::kNone) continue;  // added below, once per step
      auto [it, inserted] = index.emplace(r.name, static_cast<uint32_t>(names.size()));
      if (inserted) names.push_back(name);
      samples.push_back({it->second, static_cast<uint32_t>(st), r.end_ns - r.start_ns});
    }
    if (s.step_source != "none") {
      const uint32_t step_name = static_cast<uint32_t>(names.size());
      names.push_back("step");
      for (size_t st = 0; st < nsteps; ++st) {
        samples.push_back({step_name, static_cast<uint32_t>(st), s.steps[st].host_ns()});
      }
    }
    s.sections = GroupSamples(&samples, names, nsteps);
    if (s.sections.size() > kMaxSections) s.sections.resize(kMaxSections);
  }

  // --- NCCL collectives, in start order, each with its compute-free time: the
  // part of the kernel during which no non-NCCL kernel of the same device ran
  // (any step's: the merged compute intervals of the whole trace).
  {
    std::map<uint32_t, std::vector<Interval>> device_compute;
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernel_nccl[i]) continue;
      const KernelRecord& k = kernels[i];
      device_compute[k.device].push_back({k.start_ns, std::max(k.start_ns, k.end_ns)});
    }
    for (auto& [device, list] : device_compute) MergeIntervals(&list);
    auto covered = [&](uint32_t device, int64_t lo, int64_t hi) {
      auto it = device_compute.find(device);
      if (it == device_compute.end()) return int64_t{0};
      const std::vector<Interval>& v = it->second;
      // First merged interval ending after lo; they are disjoint and sorted.
      auto j = std::upper_bound(v.begin(), v.end(), lo,
                                [](int64_t t, const Interval& x) { return t < x.end; });
      int64_t total = 0;
      for (; j != v.end() && j->start < hi; ++j)
        total += std::min(hi, j->end) - std::max(lo, j->start);
      return total;
    };
    std::map<std::pair<uint32_t, uint32_t>, int32_t> stream_index;
    std::map<std::tuple<uint32_t, uint32_t, std::string>, int64_t> next_seq;
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!kernel_nccl[i]) continue;
      const KernelRecord& k = kernels[i];
      CollectiveSummary c;
      const std::string& full = trace.String(k.name);
      c.name = full.substr(0, full.find('('));
      c.device = k.device;
      c.stream = k.stream;
      c.stream_index = stream_index
                           .emplace(std::make_pair(k.device, k.stream),
                                    static_cast<int32_t>(stream_index.size()))
                           .first->second;
      c.seq = next_seq[std::make_tuple(k.device, k.stream, c.name)]++;
      c.step = kernel_step[i] >= 0 ? s.steps[static_cast<size_t>(kernel_step[i])].step : kNoStep;
      c.start_ns = k.start_ns;
      c.end_ns = std::max(k.start_ns, k.end_ns);
      c.free_ns = (c.end_ns - c.start_ns) - covered(k.device, c.start_ns, c.end_ns);
      s.collectives.push_back(std::move(c));
    }
  }
  return s;
}

Status WriteSummary(const TraceReader& trace, const std::string& path) {
  ASSIGN_OR_RETURN(RankSummary s, BuildSummary(trace));
  return WriteFileAtomic(path, SummaryToJson(s));
}

}  // namespace stepscope
