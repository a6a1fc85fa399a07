#include "ranks/summarize.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/api_names.h"
#include "common/file_util.h"
#include "common/intervals.h"
#include "common/kernel_names.h"
#include "common/kernel_sequence.h"
#include "common/stats.h"
#include "common/step_names.h"
#include "common/strings.h"

namespace stepscope {

namespace {

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
      n.median_ns[step] = MedianNs(durs);
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
constexpr size_t kMaxPython = 64;

// The trace's records, read once, and each launch's API call.
struct Input {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<ApiRecord> apis;
  std::vector<NvtxRecord> nvtx;
  std::unordered_map<uint32_t, size_t> api_of;  // correlation -> index into apis
  const ApiRecord* Launch(uint32_t correlation) const {
    if (correlation == 0) return nullptr;
    auto it = api_of.find(correlation);
    return it == api_of.end() ? nullptr : &apis[it->second];
  }
};

// Steps of the one definition (common/step_names.h), as `steps`; a rank
// summary also needs the numbers to rise (steps are matched across ranks by
// number), so a repeated or lower number is dropped.
bool RangeSteps(const TraceReader& trace, const Input& in, RankSummary* s) {
  StepRangeFinder finder;
  for (const NvtxRecord& r : in.nvtx) {
    if (r.kind == NvtxKind::kMark || r.end_ns < r.start_ns) continue;
    NvtxStepRange x;
    x.start_ns = r.start_ns;
    x.end_ns = r.end_ns;
    x.tid = r.tid;
    finder.Add(trace.String(r.name), trace.String(r.domain), x);
  }
  StepNameKind kind = StepNameKind::kNone;
  const std::vector<NvtxStepRange> ranges = finder.Finish(&kind, nullptr);
  if (ranges.empty()) return false;
  for (const NvtxStepRange& r : ranges) {
    if (!s->steps.empty() && r.number <= s->steps.back().step) continue;
    StepSummary st;
    st.step = r.number;
    st.start_ns = r.start_ns;
    st.end_ns = r.end_ns;
    s->steps.push_back(st);
  }
  s->step_source = kind == StepNameKind::kProfilerStep ? "profiler"
                   : kind == StepNameKind::kIteration  ? "iteration"
                                                       : "nvtx";
  return true;
}

// True when every anchor kernel was launched inside one and the same forward
// range (common/kernel_sequence.h): the layers of one call, not steps.
bool InsideOneForward(const TraceReader& trace, const Input& in,
                      const std::vector<size_t>& kernel_of, const KernelSequence& seq) {
  std::vector<const NvtxRecord*> candidates;
  for (size_t a = 0; a < seq.anchors.size(); ++a) {
    const ApiRecord* api = in.Launch(in.kernels[kernel_of[seq.anchors[a]]].correlation);
    if (api == nullptr) return false;
    auto holds = [&](const NvtxRecord& r) {
      return r.tid == api->tid && r.start_ns <= api->start_ns &&
             (r.end_ns < r.start_ns || api->start_ns <= r.end_ns);
    };
    if (a == 0) {
      for (const NvtxRecord& r : in.nvtx) {
        if (r.kind != NvtxKind::kMark && holds(r) && IsForwardRangeName(trace.String(r.name)))
          candidates.push_back(&r);
      }
    } else {
      candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                      [&](const NvtxRecord* r) { return !holds(*r); }),
                       candidates.end());
    }
    if (candidates.empty()) return false;
  }
  return true;
}

// No step ranges: the repeating kernel sequence of the device with the most
// kernels (common/kernel_sequence.h), as `steps` finds it.
bool SequenceSteps(const TraceReader& trace, const Input& in, RankSummary* s) {
  std::map<uint32_t, int64_t> per_device;
  uint32_t bound = 0;
  for (const KernelRecord& k : in.kernels) {
    ++per_device[k.device];
    bound = std::max<uint32_t>(bound, static_cast<uint32_t>(k.name) + 1);
  }
  if (per_device.empty()) return false;
  const uint32_t dev =
      std::max_element(per_device.begin(), per_device.end(), [](const auto& x, const auto& y) {
        return x.second < y.second;
      })->first;
  std::vector<SequenceOp> ops;
  std::vector<size_t> kernel_of;  // index into in.kernels of each op (copies: SIZE_MAX)
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    const KernelRecord& k = in.kernels[i];
    if (k.device != dev) continue;
    ops.push_back({k.start_ns, k.end_ns, static_cast<uint32_t>(k.name), true});
    kernel_of.push_back(i);
  }
  for (const MemcpyRecord& m : in.memcpys) {
    if (m.device == dev)
      ops.push_back({m.start_ns, m.end_ns, 0, false}), kernel_of.push_back(SIZE_MAX);
  }
  for (const MemsetRecord& m : in.memsets) {
    if (m.device == dev)
      ops.push_back({m.start_ns, m.end_ns, 0, false}), kernel_of.push_back(SIZE_MAX);
  }
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return ops[x].start_ns < ops[y].start_ns; });
  std::vector<SequenceOp> sorted;
  std::vector<size_t> sorted_kernel;
  for (size_t i : order) sorted.push_back(ops[i]), sorted_kernel.push_back(kernel_of[i]);
  const KernelSequence seq = FindKernelSequence(sorted, bound);
  if (!seq.found || InsideOneForward(trace, in, sorted_kernel, seq)) return false;
  for (size_t a = 0; a < seq.ranges.size(); ++a) {
    StepSummary st;
    st.step = static_cast<int64_t>(a);
    st.start_ns = seq.ranges[a].first;
    st.end_ns = seq.ranges[a].second;
    s->steps.push_back(st);
  }
  s->step_source = "kernel-sequence";
  return true;
}

// No steps at all: the whole trace is step 0.
void WholeTraceStep(const Input& in, RankSummary* s) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const KernelRecord& k : in.kernels)
    lo = std::min(lo, k.start_ns), hi = std::max(hi, k.end_ns);
  for (const ApiRecord& a : in.apis) lo = std::min(lo, a.start_ns), hi = std::max(hi, a.end_ns);
  if (lo <= hi) {
    StepSummary st;
    st.step = 0;
    st.start_ns = lo;
    st.end_ns = hi;
    s->steps.push_back(st);
  }
  s->step_source = "none";
}

// Index of the step whose range holds t, or -1.
int StepAt(const RankSummary& s, int64_t t) {
  auto it = std::upper_bound(s.steps.begin(), s.steps.end(), t,
                             [](int64_t v, const StepSummary& st) { return v < st.start_ns; });
  if (it == s.steps.begin()) return -1;
  --it;
  return t <= it->end_ns ? static_cast<int>(it - s.steps.begin()) : -1;
}

// When GPU work counts in a step: its launch call's start (host step ranges)
// or, for kernel-sequence steps (GPU-timeline windows) and work without a
// launch call, its own start.
int64_t WhenOf(const Input& in, const RankSummary& s, uint32_t correlation, int64_t start) {
  if (s.step_source == "kernel-sequence") return start;
  const ApiRecord* api = in.Launch(correlation);
  return api ? api->start_ns : start;
}

int64_t MedianThreads(const std::vector<int64_t>& v) { return v.empty() ? -1 : MedianNs(v); }

// Kernels: the step of each, per-name samples, the critical stream.
std::vector<int> KernelSteps(const TraceReader& trace, const Input& in, RankSummary* s,
                             std::vector<uint8_t>* nccl) {
  std::vector<int> kernel_step(in.kernels.size(), -1);
  nccl->assign(in.kernels.size(), 0);
  std::map<std::pair<uint32_t, uint32_t>, int64_t> compute_per_stream;
  std::vector<std::string> names;
  std::unordered_map<StringId, uint32_t> name_index;
  std::vector<Sample> samples;
  struct Launch {
    uint32_t name, step;
    int64_t threads;  // grid x block
  };
  std::vector<Launch> launches;
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    const KernelRecord& k = in.kernels[i];
    const std::string& name = trace.String(k.name);
    (*nccl)[i] = IsNcclKernelName(name);
    const int64_t dur = std::max<int64_t>(0, k.end_ns - k.start_ns);
    if (!(*nccl)[i]) compute_per_stream[{k.device, k.stream}] += dur;
    kernel_step[i] = StepAt(*s, WhenOf(in, *s, k.correlation, k.start_ns));
    if (kernel_step[i] < 0) continue;
    auto [it, inserted] = name_index.emplace(k.name, static_cast<uint32_t>(names.size()));
    if (inserted) names.push_back(name);
    const int64_t t = int64_t{k.grid_x} * k.grid_y * k.grid_z * k.block_x * k.block_y * k.block_z;
    if (t > 0) launches.push_back({it->second, static_cast<uint32_t>(kernel_step[i]), t});
    samples.push_back({it->second, static_cast<uint32_t>(kernel_step[i]), dur});
  }
  s->kernels = GroupSamples(&samples, names, s->steps.size());
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < names.size(); ++i) by_name.emplace(names[i], i);
  // Per name, the median launch size over the trace and per step.
  std::sort(launches.begin(), launches.end(), [](const Launch& x, const Launch& y) {
    return std::tie(x.name, x.step) < std::tie(y.name, y.step);
  });
  std::vector<std::vector<int64_t>> all(names.size()),
      step_threads(names.size(), std::vector<int64_t>(s->steps.size(), 0));
  for (size_t i = 0; i < launches.size();) {
    size_t j = i;
    std::vector<int64_t> v;
    for (; j < launches.size() && launches[j].name == launches[i].name &&
           launches[j].step == launches[i].step;
         ++j)
      v.push_back(launches[j].threads);
    all[launches[i].name].insert(all[launches[i].name].end(), v.begin(), v.end());
    step_threads[launches[i].name][launches[i].step] = MedianNs(std::move(v));
    i = j;
  }
  for (NamedTimes& n : s->kernels) {
    n.nccl = IsNcclKernelName(n.name);
    n.threads = MedianThreads(all[by_name[n.name]]);
    n.step_threads = std::move(step_threads[by_name[n.name]]);
  }
  if (!compute_per_stream.empty()) {
    auto best = std::max_element(compute_per_stream.begin(), compute_per_stream.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    s->critical_device = best->first.first;
    s->critical_stream = best->first.second;
  }
  return kernel_step;
}

// Per step: spans, compute/comm unions and their overlap, per device.
void StepUnions(const Input& in, const std::vector<int>& kernel_step,
                const std::vector<uint8_t>& nccl, RankSummary* s) {
  std::vector<std::vector<size_t>> per_step(s->steps.size());
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    if (kernel_step[i] >= 0) per_step[static_cast<size_t>(kernel_step[i])].push_back(i);
  }
  for (size_t st = 0; st < s->steps.size(); ++st) {
    StepSummary& step = s->steps[st];
    std::map<uint32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> per_device;
    for (size_t i : per_step[st]) {
      const KernelRecord& k = in.kernels[i];
      Interval iv{k.start_ns, std::max(k.start_ns, k.end_ns)};
      auto& dev = per_device[k.device];
      (nccl[i] ? dev.second : dev.first).push_back(iv);
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
  // The GPU span covers the step's copies and memsets too, as `steps`' does
  // (the step window ends where the step's GPU work ends).
  auto widen = [&](uint32_t correlation, int64_t start, int64_t end) {
    const int st = StepAt(*s, WhenOf(in, *s, correlation, start));
    if (st < 0) return;
    StepSummary& step = s->steps[static_cast<size_t>(st)];
    const bool none = step.gpu_start_ns == 0 && step.gpu_end_ns == 0;
    if (none || start < step.gpu_start_ns) step.gpu_start_ns = start;
    if (none || end > step.gpu_end_ns) step.gpu_end_ns = std::max(start, end);
  };
  for (const MemcpyRecord& m : in.memcpys) widen(m.correlation, m.start_ns, m.end_ns);
  for (const MemsetRecord& m : in.memsets) widen(m.correlation, m.start_ns, m.end_ns);
}

// Host launch lateness on the critical stream (kernels, copies, memsets).
void LaunchLateness(const Input& in, RankSummary* s) {
  struct Op {
    int64_t start, end;
    uint32_t correlation;
  };
  std::vector<Op> ops;
  auto on_critical = [&](uint32_t device, uint32_t stream) {
    return device == s->critical_device && stream == s->critical_stream;
  };
  for (const KernelRecord& k : in.kernels) {
    if (on_critical(k.device, k.stream)) ops.push_back({k.start_ns, k.end_ns, k.correlation});
  }
  for (const MemcpyRecord& m : in.memcpys) {
    if (on_critical(m.device, m.stream)) ops.push_back({m.start_ns, m.end_ns, m.correlation});
  }
  for (const MemsetRecord& m : in.memsets) {
    if (on_critical(m.device, m.stream)) ops.push_back({m.start_ns, m.end_ns, m.correlation});
  }
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
  int64_t prev_end = std::numeric_limits<int64_t>::min();
  for (const Op& op : ops) {
    const ApiRecord* api = in.Launch(op.correlation);
    if (prev_end != std::numeric_limits<int64_t>::min() && op.start > prev_end && api) {
      const int late = StepAt(*s, WhenOf(in, *s, op.correlation, op.start));
      if (late >= 0) {
        s->steps[static_cast<size_t>(late)].launch_late_ns +=
            std::max<int64_t>(0, std::min(api->start_ns, op.start) - prev_end);
      }
    }
    prev_end = std::max(prev_end, op.end);
  }
}

// Step starts in (lo, hi]: a range around two steps or more is no section of
// a step (NCCL's ncclCommInitRankConfig left open all run, a wrapper around
// the loop), as it is never the 'where' of analyze (RuleContext::WhereRange).
int64_t StepStartsIn(const RankSummary& s, int64_t lo, int64_t hi) {
  auto first = std::upper_bound(s.steps.begin(), s.steps.end(), lo,
                                [](int64_t v, const StepSummary& st) { return v < st.start_ns; });
  auto last = std::upper_bound(s.steps.begin(), s.steps.end(), hi,
                               [](int64_t v, const StepSummary& st) { return v < st.start_ns; });
  return last - first;
}

// NVTX sections (the step ranges themselves become the section "step").
void Sections(const TraceReader& trace, const Input& in, RankSummary* s) {
  std::vector<std::string> names;
  std::unordered_map<StringId, uint32_t> index;
  std::vector<Sample> samples;
  for (const NvtxRecord& r : in.nvtx) {
    if (r.kind == NvtxKind::kMark || r.end_ns < r.start_ns) continue;
    if (!IsSectionDomain(trace.String(r.domain))) continue;
    const int st = StepAt(*s, r.start_ns);
    if (st < 0) continue;
    int64_t n = 0;
    const std::string& name = trace.String(r.name);
    if (ParseStepName(name, &n) != StepNameKind::kNone) continue;  // added below, once per step
    if (StepStartsIn(*s, r.start_ns, r.end_ns) >= 2) continue;
    auto [it, inserted] = index.emplace(r.name, static_cast<uint32_t>(names.size()));
    if (inserted) names.push_back(name);
    samples.push_back({it->second, static_cast<uint32_t>(st), r.end_ns - r.start_ns});
  }
  if (s->step_source != "none") {
    const uint32_t step_name = static_cast<uint32_t>(names.size());
    names.push_back("step");
    for (size_t st = 0; st < s->steps.size(); ++st) {
      samples.push_back({step_name, static_cast<uint32_t>(st), s->steps[st].host_ns()});
    }
  }
  s->sections = GroupSamples(&samples, names, s->steps.size());
  if (s->sections.size() > kMaxSections) s->sections.resize(kMaxSections);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Per launching thread, the sorted intervals of its blocking CUDA calls
// (common/api_names.h): CPU time sampled inside one is a wait for the GPU (the
// CUDA runtime spins before it yields), not the thread's own work.
std::unordered_map<uint32_t, std::vector<Interval>> BlockingCalls(
    const TraceReader& trace, const Input& in, const std::unordered_set<uint32_t>& threads) {
  std::unordered_map<uint32_t, bool> blocking_name;
  std::unordered_map<uint32_t, std::vector<Interval>> out;
  for (const ApiRecord& a : in.apis) {
    if (!threads.count(a.tid) || a.end_ns <= a.start_ns) continue;
    auto [it, fresh] = blocking_name.emplace(a.name, false);
    if (fresh) it->second = IsBlockingApiName(trace.String(a.name));
    if (it->second) out[a.tid].push_back({a.start_ns, a.end_ns});
  }
  for (auto& [tid, v] : out)
    std::sort(v.begin(), v.end(),
              [](const Interval& x, const Interval& y) { return x.start < y.start; });
  return out;
}

bool Inside(const std::vector<Interval>& sorted, int64_t t) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), t,
                             [](int64_t v, const Interval& x) { return v < x.start; });
  return it != sorted.begin() && std::prev(it)->end > t;
}

// The main thread (the process's own, tid = pid, when sampled; else the
// thread with the most CUDA calls): its CPU time per step outside blocking
// CUDA calls (where the Python work of a step runs; a waiting rank's other
// threads burn CPU in NCCL and the runtime, so they would blur the comparison)
// and per Python function. The run-queue time per step of every launching
// thread: the main thread and each other thread that makes at least
// kLaunchingShare of the CUDA calls (PyTorch's autograd thread launches the
// backward): contention delays whichever of them launches.
constexpr double kLaunchingShare = 0.05;

std::unordered_set<uint32_t> LaunchingThreads(const Input& in, uint32_t main_tid) {
  std::unordered_map<uint32_t, int64_t> calls;
  for (const ApiRecord& a : in.apis) ++calls[a.tid];
  std::unordered_set<uint32_t> out{main_tid};
  for (const auto& [tid, n] : calls) {
    if (static_cast<double>(n) >= kLaunchingShare * static_cast<double>(in.apis.size()))
      out.insert(tid);
  }
  return out;
}

void HostThread(const TraceReader& trace, const Input& in, RankSummary* s) {
  auto samples = trace.Samples();
  if (!samples.ok() || samples->empty()) return;
  bool pid_sampled = false;
  for (const SampleRecord& x : *samples) pid_sampled |= x.tid == static_cast<uint32_t>(s->pid);
  uint32_t tid = static_cast<uint32_t>(s->pid);
  if (!pid_sampled) {
    std::unordered_map<uint32_t, int64_t> calls;
    for (const ApiRecord& a : in.apis) ++calls[a.tid];
    if (calls.empty()) return;
    tid = std::max_element(calls.begin(), calls.end(), [](const auto& x, const auto& y) {
            return x.second < y.second;
          })->first;
  }
  s->main_tid = tid;
  auto frames = trace.Frames();
  auto callsites = trace.Callsites();
  std::unordered_map<uint32_t, const FrameRecord*> frame_of;
  std::unordered_map<uint32_t, const CallsiteRecord*> callsite_of;
  if (frames.ok() && callsites.ok()) {
    for (const FrameRecord& f : *frames) frame_of.emplace(f.id, &f);
    for (const CallsiteRecord& c : *callsites) callsite_of.emplace(c.id, &c);
  }
  auto function = [&](uint32_t callsite) -> std::string {
    auto c = callsite_of.find(callsite);
    if (c == callsite_of.end()) return "";
    auto f = frame_of.find(c->second->frame);
    if (f == frame_of.end()) return "";
    return trace.String(f->second->function);
  };
  std::unordered_map<uint32_t, uint32_t> name_of_callsite;
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t> name_index;
  std::vector<Sample> py;
  for (StepSummary& st : s->steps) st.host_cpu_ns = 0, st.host_ready_ns = 0;
  const std::unordered_set<uint32_t> launching = LaunchingThreads(in, tid);
  const auto blocking = BlockingCalls(trace, in, launching);
  std::unordered_map<uint32_t, const SampleRecord*> prev_of;  // per launching thread
  for (const SampleRecord& x : *samples) {
    if (!launching.count(x.tid)) continue;
    const SampleRecord*& prev = prev_of[x.tid];
    const int st = StepAt(*s, x.ts_ns);
    if (st >= 0 && x.cpu_ns >= 0) {
      StepSummary& step = s->steps[static_cast<size_t>(st)];
      auto calls = blocking.find(x.tid);
      if (x.tid == tid && (calls == blocking.end() || !Inside(calls->second, x.ts_ns)))
        step.host_cpu_ns += x.cpu_ns;
      if (prev && prev->state == ThreadState::kRunning && x.state == ThreadState::kRunning)
        step.host_ready_ns += std::max<int64_t>(0, (x.ts_ns - prev->ts_ns) - x.cpu_ns);
      if (x.tid == tid && x.callsite != 0 && x.state == ThreadState::kRunning) {
        auto [it, fresh] = name_of_callsite.emplace(x.callsite, 0);
        if (fresh) {
          auto c = callsite_of.find(x.callsite);
          std::string name = function(x.callsite);
          if (c != callsite_of.end() && !name.empty()) {
            const std::string caller = function(c->second->parent);
            auto f = frame_of.find(c->second->frame);
            const std::string file =
                f == frame_of.end() ? "" : BaseName(trace.String(f->second->file));
            name = (caller.empty() ? "" : caller + " > ") + name +
                   (file.empty() ? "" : " (" + file + ")");
          }
          if (name.empty()) name = "(no Python frame)";
          auto [n, added] = name_index.emplace(name, static_cast<uint32_t>(names.size()));
          if (added) names.push_back(name);
          it->second = n->second;
        }
        py.push_back({it->second, static_cast<uint32_t>(st), x.cpu_ns});
      }
    }
    prev = &x;
  }
  s->python = GroupSamples(&py, names, s->steps.size());
  if (s->python.size() > kMaxPython) s->python.resize(kMaxPython);
}

// NCCL collectives, in start order, each with its compute-free time: the part
// of the kernel during which no non-NCCL kernel of the same device ran (any
// step's: the merged compute intervals of the whole trace).
void Collectives(const TraceReader& trace, const Input& in, const std::vector<int>& kernel_step,
                 const std::vector<uint8_t>& nccl, RankSummary* s) {
  std::map<uint32_t, std::vector<Interval>> device_compute;
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    if (nccl[i]) continue;
    const KernelRecord& k = in.kernels[i];
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
  for (size_t i = 0; i < in.kernels.size(); ++i) {
    if (!nccl[i]) continue;
    const KernelRecord& k = in.kernels[i];
    CollectiveSummary c;
    const std::string& full = trace.String(k.name);
    c.name = full.substr(0, full.find('('));
    c.device = k.device;
    c.stream = k.stream;
    c.stream_index =
        stream_index
            .emplace(std::make_pair(k.device, k.stream), static_cast<int32_t>(stream_index.size()))
            .first->second;
    c.seq = next_seq[std::make_tuple(k.device, k.stream, c.name)]++;
    c.step = kernel_step[i] >= 0 ? s->steps[static_cast<size_t>(kernel_step[i])].step : kNoStep;
    c.start_ns = k.start_ns;
    c.end_ns = std::max(k.start_ns, k.end_ns);
    c.free_ns = (c.end_ns - c.start_ns) - covered(k.device, c.start_ns, c.end_ns);
    s->collectives.push_back(std::move(c));
  }
}

// Times a trace cannot hold, the readers' one rule (common/intervals.h);
// returns the number of records changed. Open NVTX ranges (end -1) stay open.
int64_t ClampTimes(Input* in) {
  int64_t changed = 0;
  for (auto& k : in->kernels) changed += ClampRecordTimes(&k.start_ns, &k.end_ns);
  for (auto& c : in->memcpys) changed += ClampRecordTimes(&c.start_ns, &c.end_ns);
  for (auto& c : in->memsets) changed += ClampRecordTimes(&c.start_ns, &c.end_ns);
  for (auto& a : in->apis) changed += ClampRecordTimes(&a.start_ns, &a.end_ns);
  for (auto& r : in->nvtx) {
    changed +=
        r.end_ns == -1 ? ClampInstant(&r.start_ns) : ClampRecordTimes(&r.start_ns, &r.end_ns);
  }
  if (changed > 0) {  // back to start order, as read
    auto by_start = [](auto* v) {
      std::stable_sort(v->begin(), v->end(),
                       [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    };
    by_start(&in->kernels), by_start(&in->memcpys), by_start(&in->memsets);
    by_start(&in->apis), by_start(&in->nvtx);
  }
  return changed;
}

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

  Input in;
  ASSIGN_OR_RETURN(in.kernels, trace.Kernels());
  ASSIGN_OR_RETURN(in.memcpys, trace.Memcpys());
  ASSIGN_OR_RETURN(in.memsets, trace.Memsets());
  ASSIGN_OR_RETURN(in.apis, trace.Apis());
  ASSIGN_OR_RETURN(in.nvtx, trace.Nvtx());
  WarnClampedTimes(trace.path(), ClampTimes(&in));
  in.api_of.reserve(in.apis.size());
  for (size_t i = 0; i < in.apis.size(); ++i) {
    if (in.apis[i].correlation != 0) in.api_of.emplace(in.apis[i].correlation, i);
  }
  if (!RangeSteps(trace, in, &s) && !SequenceSteps(trace, in, &s)) WholeTraceStep(in, &s);
  std::vector<uint8_t> nccl;
  const std::vector<int> kernel_step = KernelSteps(trace, in, &s, &nccl);
  StepUnions(in, kernel_step, nccl, &s);
  LaunchLateness(in, &s);
  Sections(trace, in, &s);
  HostThread(trace, in, &s);
  Collectives(trace, in, kernel_step, nccl, &s);
  return s;
}

Status WriteSummary(const TraceReader& trace, const std::string& path) {
  ASSIGN_OR_RETURN(RankSummary s, BuildSummary(trace));
  return WriteFileAtomic(path, SummaryToJson(s));
}

}  // namespace stepscope
