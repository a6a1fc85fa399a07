// The rules that own GPU idle gaps: data_loading, host_sync, launch_bound,
// host_wait (see the ownership table in rules.h).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "analysis/rules.h"
#include "common/intervals.h"
#include "common/strings.h"

namespace stepscope {
namespace {

constexpr int kMinLaunchBoundStretch = 16;  // kernels in a row

// Accumulates gaps into one finding; keeps the costliest examples.
struct Group {
  Finding f;
  std::vector<int> steps;
  void Add(const RuleContext& c, const GpuGap& g, uint32_t host_range) {
    f.cost_ns += g.length();
    ++f.count;
    const int s = c.StepAtWindow(g.end_ns);
    if (s >= 0) steps.push_back(s);
    FindingExample e{s >= 0 ? c.steps.steps[s].number : -1, g.start_ns, g.end_ns,
                     host_range == kNone ? "" : c.m.String(c.m.nvtx()[host_range].name),
                     g.length()};
    f.examples.push_back(e);
    std::sort(
        f.examples.begin(), f.examples.end(),
        [](const FindingExample& a, const FindingExample& b) { return a.cost_ns > b.cost_ns; });
    if (f.examples.size() > 3) f.examples.resize(3);
  }
};

std::string Ms(int64_t ns) { return FormatDuration(ns); }

// Launch-bound stretches on the device: runs of consecutive kernels each
// shorter than the time between its launch and the previous op's launch.
// Returns, per op index, the stretch id (or -1).
std::vector<int32_t> LaunchBoundStretches(const RuleContext& c, std::vector<int64_t>* stretch_len) {
  const auto& ops = c.m.gpu_ops();
  std::vector<int32_t> id(ops.size(), -1);
  std::vector<size_t> run;
  int64_t prev_launch = -1;
  auto close_run = [&] {
    if (static_cast<int>(run.size()) >= kMinLaunchBoundStretch) {
      const int32_t sid = static_cast<int32_t>(stretch_len->size());
      for (size_t i : run) id[i] = sid;
      stretch_len->push_back(static_cast<int64_t>(run.size()));
    }
    run.clear();
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const GpuOp& o = ops[i];
    if (o.device != c.device) continue;
    if (o.api == kNone) {
      close_run();
      prev_launch = -1;
      continue;
    }
    const int64_t launch = c.m.apis()[o.api].start_ns;
    const bool bound = o.kind == GpuOpKind::kKernel && prev_launch >= 0 &&
                       o.end_ns - o.start_ns < launch - prev_launch;
    if (bound) {
      run.push_back(i);
    } else {
      close_run();
    }
    prev_launch = launch;
  }
  close_run();
  return id;
}

}  // namespace

bool IsDataLoadingRangeName(std::string_view name) {
  std::string lower(name.substr(0, 4096));
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // C++ operators (aten::batch_norm, c10d::broadcast_) are never data loading.
  if (lower.find("::") != std::string::npos) return false;
  for (const char* k : {"dataloader", "data_loader", "__next__", "_next_data", "prefetch"}) {
    if (lower.find(k) != std::string::npos) return true;
  }
  // Whole words only: "DistributedDataParallel.forward" is one word and a
  // forward; "convolution_backward_data" is a backward.
  std::vector<std::string_view> words;
  std::string_view v = lower;
  for (size_t i = 0; i < v.size();) {
    while (i < v.size() && !std::isalnum(static_cast<unsigned char>(v[i]))) ++i;
    size_t j = i;
    while (j < v.size() && std::isalnum(static_cast<unsigned char>(v[j]))) ++j;
    if (j > i) words.push_back(v.substr(i, j - i));
    i = j;
  }
  auto has = [&](std::initializer_list<std::string_view> ks) {
    for (std::string_view w : words) {
      for (std::string_view k : ks) {
        if (w == k) return true;
      }
    }
    return false;
  };
  if (has({"forward", "backward"})) return false;
  if (has({"data", "loader", "loading"})) return true;
  return has({"batch", "input", "inputs"}) &&
         has({"load", "get", "next", "fetch", "read", "prepare"});
}

void GapRules(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  const auto& ops = m.gpu_ops();
  std::vector<int64_t> stretch_len;
  const std::vector<int32_t> stretch =
      c.device >= 0 ? LaunchBoundStretches(c, &stretch_len) : std::vector<int32_t>();
  // Host extent of each stretch's launches (thread of its first launch).
  std::vector<Finding::Span> stretch_span(stretch_len.size(), {0, INT64_MAX, INT64_MIN});
  for (size_t i = 0; i < stretch.size(); ++i) {
    if (stretch[i] < 0 || ops[i].api == kNone) continue;
    const ApiRecord& a = m.apis()[ops[i].api];
    Finding::Span& sp = stretch_span[stretch[i]];
    if (a.start_ns < sp.start_ns) {
      sp.start_ns = a.start_ns;
      sp.tid = a.tid;
    }
    sp.end_ns = std::max(sp.end_ns, a.end_ns);
  }
  Group data;
  int64_t data_first = 0, host_between = 0, host_in_data = 0, undecided_data = 0;
  // stepscope profile's DataLoader ranges per thread (kLoaderRangeName around each batch's
  // next(), python/stepscope/_loader_ranges.py). A loading wait on a thread that has them
  // is priced by those calls, wherever they fall (below); the rest of the wait is the
  // host's other work between steps (a Trainer's bookkeeping), which stays. A program's
  // own data ranges are not used so: they may hold only part of the loading (train_gpt's
  // "data" range is the batch's copy to the GPU).
  std::map<uint32_t, std::vector<Interval>> loader;
  for (const NvtxRecord& r : m.nvtx()) {
    if (r.end_ns > r.start_ns && r.kind == NvtxKind::kPushPop &&
        m.String(r.name) == kLoaderRangeName)
      loader[r.tid].push_back({r.start_ns, r.end_ns});
  }
  for (auto& [tid, v] : loader) MergeIntervals(&v);  // a next() inside another's counts once
  int64_t data_wait_ns = 0;
  std::set<uint32_t> loader_tids;  // threads of the loading waits that have DataLoader ranges
  // Groups by key; std::map keeps the output order deterministic.
  std::map<std::string, Group> groups;
  std::map<std::string, std::vector<int32_t>> stretches_by_key;

  for (const GpuGap& g : c.gaps) {
    const GpuOp* next = g.next_op == kNone ? nullptr : &ops[g.next_op];
    const uint32_t launch_range = next && next->api != kNone ? m.api_range()[next->api] : kNone;
    const int step = c.StepAtWindow(g.end_ns);
    // A synchronization outside every step (torch.cuda.synchronize() between
    // warm-up and timed steps) is not a per-step cost: what the host did
    // after it returned decides, as for a host-wait gap.
    const int64_t block_t = g.blocking_api != kNone    ? m.apis()[g.blocking_api].start_ns
                            : g.blocking_sync != kNone ? m.syncs()[g.blocking_sync].start_ns
                                                       : -1;
    const bool sync_in_step = block_t >= 0 && c.steps.AtHostTime(block_t) >= 0;
    if (g.cause == GapCause::kSyncWait && (sync_in_step || c.steps.steps.empty())) {
      const uint32_t api = g.blocking_api;
      const uint8_t copy = api != kNone ? c.blocking_copy[api] : 0;
      const std::string call =
          api != kNone
              ? m.ApiName(api)
              : std::string("sync (") + SyncTypeName(m.syncs()[g.blocking_sync].type) + ")";
      const uint32_t range = api != kNone ? m.api_range()[api] : kNone;
      std::string key;
      if (copy == 1) {
        key = "sync_memcpy";
      } else if (copy == 2) {
        key = "pageable_memcpy";
      } else {
        key = "host_sync\x01" + call + "\x01" + c.RangeName(range);
      }
      Group& grp = groups[key];
      if (grp.f.rule.empty()) {
        grp.f.rule = key.substr(0, key.find('\x01'));
        if (copy == 0) {
          grp.f.title = "Host synchronization " + call + " in " + c.RangeName(range) +
                        ": the GPU idles until the host issues more work";
          grp.f.fix =
              "Take the synchronization out of the loop: avoid loss.item(), .cpu(), print(tensor), "
              "torch.cuda.synchronize() every step; accumulate metrics on the GPU and read them "
              "every N steps; copy results with non_blocking=True into pinned memory.";
        }
      }
      grp.Add(c, g, range);
      if (api != kNone) grp.f.apis.push_back(api);
      continue;
    }
    if (g.cause != GapCause::kHostWait && g.cause != GapCause::kSyncWait) continue;
    // What the host was doing while the GPU waited.
    const uint32_t tid = next && next->api != kNone ? m.apis()[next->api].tid : m.main_tid();
    const int64_t mid = g.start_ns + (std::max(g.launch_ns, g.start_ns) - g.start_ns) / 2;
    uint32_t host_range = m.RangeAt(tid, mid);
    if (host_range == kNone && tid != m.main_tid()) host_range = m.RangeAt(m.main_tid(), mid);
    // Step starts and "between steps" are evidence of a wait for the next
    // batch only when the steps are host-side ranges: kernel-sequence steps
    // (no step ranges) start where a repeating kernel does, which in a single
    // forward pass is a layer, not a batch.
    const bool host_steps = c.steps.method == "nvtx";
    const bool at_step_start = step >= 0 && c.steps.steps[step].first_op == g.next_op;
    const bool first_of_step = host_steps && at_step_start;
    const bool between_steps = host_steps && !c.steps.steps.empty() && c.steps.AtHostTime(mid) < 0;
    if (!host_steps && at_step_start) undecided_data += g.length();
    const bool in_data =
        (host_range != kNone && IsDataLoadingRangeName(m.String(m.nvtx()[host_range].name))) ||
        (launch_range != kNone && IsDataLoadingRangeName(m.String(m.nvtx()[launch_range].name)));
    if (first_of_step || between_steps || in_data) {
      data_first += g.length();
      if (between_steps) {
        host_between += g.length();
      } else if (in_data) {
        host_in_data += g.length();
      }
      data.Add(c, g, host_range);
      const int64_t w0 = g.start_ns, w1 = std::max(g.launch_ns, g.start_ns);
      data_wait_ns += w1 - w0;
      if (loader.count(tid)) {
        loader_tids.insert(tid);  // priced by its next() calls (below), wherever they fall
      } else {
        data.f.host_spans.push_back({tid, w0, w1});
      }
      continue;
    }
    if (g.next_op != kNone && stretch[g.next_op] >= 0) {
      const std::string key = "launch_bound\x01" + c.RangeName(launch_range);
      Group& grp = groups[key];
      if (grp.f.rule.empty()) {
        grp.f.rule = "launch_bound";
        grp.f.title = "Launch-bound kernels in " + c.RangeName(launch_range) +
                      ": kernels run shorter than the time between their launches";
        grp.f.fix =
            "Launch fewer, larger kernels: capture the step with CUDA graphs "
            "(torch.compile(mode=\"reduce-overhead\"), torch.cuda.CUDAGraph), fuse elementwise "
            "ops (torch.compile), or give each kernel more work (a larger batch).";
      }
      stretches_by_key[key].push_back(stretch[g.next_op]);
      grp.Add(c, g, host_range);
      continue;
    }
    const std::string key = "host_wait\x01" + c.RangeName(host_range);
    Group& grp = groups[key];
    if (grp.f.rule.empty()) {
      grp.f.rule = "host_wait";
      grp.f.title = "GPU idle waiting for the host in " + c.RangeName(host_range);
      grp.f.fix =
          "The host issues GPU work too slowly here: profile the Python side (py-spy, the CPU "
          "view of torch.profiler), move CPU work out of the loop or onto other threads, and "
          "remove per-step Python bookkeeping; CUDA graphs remove the launch overhead.";
    }
    grp.Add(c, g, host_range);
    grp.f.host_spans.push_back({tid, g.start_ns, std::max(g.launch_ns, g.start_ns)});
  }

  if (undecided_data > 0 && c.undecided) {
    c.undecided->push_back(
        "data_loading: " + Ms(undecided_data) +
        " of host-wait gaps at the starts of kernel-sequence steps: without step ranges (NVTX "
        "'step N' / ProfilerStep#N) or a data-loading range there is no evidence they waited for "
        "a batch; left to host_wait / launch_bound");
  }
  const double min_pct = c.opt.min_cost_pct;
  if (data.f.count > 0) {
    Finding& f = data.f;
    f.rule = "data_loading";
    f.title = "GPU idle waiting for the next batch at the start of steps (data loading)";
    const std::string host = host_between >= host_in_data
                                 ? "the host was between steps (outside every step range)"
                                 : "the host was in a data-loading NVTX range";
    f.where = "before the first launch of " + c.StepsText(data.steps) + " (device " +
              std::to_string(c.device) + "); " + host;
    f.detail = std::to_string(f.count) + " host-wait gaps: " + Ms(data_first) +
               " before the steps' first GPU work";
    if (!loader_tids.empty()) {
      // Every next() of those threads in the steps: what a prefetch hides. In a Hugging
      // Face Trainer it falls after the step's first GPU work (accelerate's
      // DataLoaderShard copies the batch it holds to the GPU, then fetches the next),
      // so it is priced wherever it is, the waits themselves left as they are.
      int64_t t0 = INT64_MAX, t1 = INT64_MIN;
      for (const Step& st : c.steps.steps) {
        t0 = std::min(t0, st.range_start_ns);
        t1 = std::max(t1, st.range_end_ns);
      }
      int64_t ns = 0;
      for (uint32_t tid : loader_tids) {
        for (const Interval& iv : loader[tid]) {
          if (iv.start < t0 || iv.start >= t1) continue;
          f.loader_spans.push_back({tid, iv.start, iv.end});
          ns += iv.end - iv.start;
        }
      }
      f.detail += "; the host spent " + Ms(data_wait_ns) + " in them, and " + Ms(ns) + " in " +
                  std::to_string(f.loader_spans.size()) + " " + std::string(kLoaderRangeName) +
                  " calls in these steps: getting the batches, what a prefetch hides (the rest "
                  "of the waits is other host work between steps and stays)";
    }
    f.fix =
        "Feed the GPU faster: DataLoader(num_workers>0, pin_memory=True, persistent_workers=True, "
        "prefetch_factor=2..4); move tokenisation/augmentation out of the training loop; prefetch "
        "the next batch to the GPU while the current step runs.";
    c.Finish(&f, true);
    f.reported = f.cost_pct >= min_pct;
    out->push_back(f);
  }
  for (auto& [key, grp] : groups) {
    Finding& f = grp.f;
    const std::string steps = c.StepsText(grp.steps);
    f.where = (steps.empty() ? "" : steps + ", ") + "device " + std::to_string(c.device);
    if (f.rule == "launch_bound") {
      int64_t kernels = 0;
      std::vector<int32_t> ids = stretches_by_key[key];
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (int32_t id : ids) kernels += stretch_len[id];
      // For the what-if pricing: the host time of each stretch's launches,
      // what a CUDA graph would capture.
      for (int32_t id : ids) f.host_spans.push_back(stretch_span[id]);
      f.detail = std::to_string(ids.size()) +
                 " stretches of >= " + std::to_string(kMinLaunchBoundStretch) + " kernels (" +
                 std::to_string(kernels) + " kernels) each shorter than its launch interval; " +
                 std::to_string(f.count) + " host-wait gaps in them, " + Ms(f.cost_ns);
    } else if (f.rule == "host_wait") {
      f.detail = std::to_string(f.count) +
                 " host-wait gaps (the next op was launched after the GPU went idle), " +
                 Ms(f.cost_ns);
    } else {
      // host_sync, and the sync-wait part of sync_memcpy / pageable_memcpy
      // (CopyRules completes those two).
      f.detail = std::to_string(f.count) + " gaps, " + Ms(f.cost_ns) +
                 " of GPU idle time after the host returned from the blocking call";
    }
    c.Finish(&f, true);
    f.reported = f.cost_pct >= min_pct;
    out->push_back(f);
  }
}

}  // namespace stepscope
