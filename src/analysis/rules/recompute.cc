// The recompute rule: activation checkpointing re-runs the forward of the
// checkpointed blocks in the backward pass (docs/rules.md).
//
// Detection needs no NVTX range. In PyTorch the forward is launched by the
// main thread (the thread that launches a step's first kernel) and the
// backward by the autograd thread; a recomputed block is a run of kernels the
// autograd thread launches that repeats a stretch of the forward's kernel
// sequence of the same step. Each kernel is keyed by (name, grid, block); the
// autograd thread's sequence is matched against the main thread's greedily,
// longest match first, and a match of at least kMinRun kernels is a recompute
// run. Each run is paired with one stretch of the forward (the checkpointed
// block's forward): the latest occurrence of the same sequence not yet paired
// (the backward recomputes the blocks in reverse order).
//
// What checkpointing costs, and what the fix (no checkpointing) removes:
//   * the recomputed kernels (GPU time);
//   * the autograd thread's CPU time across each run, from the end of the call
//     before the run's first launch to the end of its last launch (the Python
//     of the re-run forward, the hook that triggered it);
//   * in the forward, the checkpoint wrapper's entry and exit: the CPU gaps just
//     before the first and after the last launch of each paired stretch, in
//     excess of the median gap inside the stretches;
//   * in the backward, each recompute's exit: the autograd thread's gap from
//     the run's last launch to its next call (ending the re-run, handing the
//     recomputed tensors to the unpack hook), in excess of the same median.
//     Without checkpointing the thread goes straight on to the block's
//     gradient kernels (measured on an H200: 160-220 us per block with
//     checkpointing, about 30 us without);
//   * the checkpoint's saved-tensor hooks (non-reentrant checkpointing runs a
//     Python pack hook for every tensor saved in the forward and an unpack hook
//     for every one read in the backward), spread over every launch of the
//     checkpointed blocks. With host samples (profile's default), a sample is
//     checkpoint overhead when its innermost frame of torch/utils/checkpoint.py
//     is not calling back into the model (no module call or user frame below
//     it) and not recomputing; the hooks' share of the samples inside the
//     paired forward stretches (main thread) and inside the backward outside
//     the recompute runs and their exits (autograd thread) is taken off those windows' CPU
//     time between calls. The C++ side of each hook call has no Python frame:
//     with native samples (profile's --native-hz) the hooks' time is the native
//     samples under PyTorch's saved-tensor hook functions times the sample
//     period, plus the Python samples' share of the checkpoint's own work
//     outside its hook functions (MeasureHooks). Without samples (an imported
//     trace) this part is not priced.
// The replay prices them together (RemoveRecompute, the rule's fix below).
//
// Reentrant checkpointing (torch.utils.checkpoint's CheckpointFunction, told
// from the non-reentrant kind by the Python frames of the host samples) runs
// the checkpointed forward under no_grad and saves no tensors through hooks:
// without checkpointing that forward records autograd graph instead, which
// costs about what the wrapper's entry/exit did (measured without a tracer,
// bench/checkpoint_hook_cost.py: reentrant forward vs plain -82..+173 us per
// block or layer, train_gpt and a Hugging Face Llama, H100 and H200), so the
// forward's part (wrapper entry/exit, hooks) is not priced there.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/rules/rule.h"
#include "common/stats.h"
#include "common/strings.h"

namespace stepscope {
namespace {

constexpr size_t kMinRun = 4;
constexpr size_t kMinKinds = 3;  // distinct kernel names in a run
// Candidates per kernel key tried as a match start (bounds the matching on a
// trace with thousands of launches of one elementwise kernel per step).
constexpr size_t kMaxCandidates = 256;

struct KernelKey {
  StringId name;
  int32_t grid[3];
  int32_t block[3];
  bool operator==(const KernelKey& o) const {
    return name == o.name && std::equal(grid, grid + 3, o.grid) &&
           std::equal(block, block + 3, o.block);
  }
};
struct KeyHash {
  size_t operator()(const KernelKey& k) const {
    size_t h = k.name;
    for (int32_t v : k.grid) h = h * 1000003u ^ static_cast<uint32_t>(v);
    for (int32_t v : k.block) h = h * 1000003u ^ static_cast<uint32_t>(v);
    return h;
  }
};

struct Launch {
  int64_t t;    // the launching call's start
  uint32_t op;  // gpu_ops index
  uint32_t api;
  KernelKey key;
};

// Position of api row `a` in its thread's call list.
size_t PosOnThread(const TraceModel& m, const std::vector<uint32_t>& calls, uint32_t a) {
  auto it = std::lower_bound(calls.begin(), calls.end(), a, [&](uint32_t x, uint32_t y) {
    const int64_t sx = m.apis()[x].start_ns, sy = m.apis()[y].start_ns;
    return sx != sy ? sx < sy : x < y;
  });
  while (it != calls.end() && *it != a) ++it;
  return static_cast<size_t>(it - calls.begin());
}

// Whether a sampled stack is the checkpoint's own work (hooks, the wrapper's
// set-up): its innermost torch/utils/checkpoint.py frame does not call into
// the checkpointed function below it, and nothing on it recomputes.
bool CheckpointOverhead(const TraceModel& m, uint32_t callsite) {
  const std::vector<const FrameRecord*> st = m.Stack(callsite);  // root first
  size_t inner = SIZE_MAX;
  for (size_t i = 0; i < st.size(); ++i) {
    if (st[i]->kind != static_cast<uint8_t>(FrameKind::kPython)) continue;
    if (!EndsWith(m.String(st[i]->file), "torch/utils/checkpoint.py")) continue;
    inner = i;
    if (m.String(st[i]->function).find("recomput") != std::string::npos) return false;
  }
  if (inner == SIZE_MAX) return false;
  for (size_t i = inner + 1; i < st.size(); ++i) {
    if (st[i]->kind != static_cast<uint8_t>(FrameKind::kPython)) continue;
    const std::string& file = m.String(st[i]->file);
    if (file.empty() || file[0] == '<') continue;  // interpreter shims
    // A module call, the autograd engine (reentrant checkpointing's backward),
    // or a file outside torch and the standard library: the model's own work.
    // (The grad-mode context managers a hook enters are the hook's own work.)
    if (EndsWith(file, "torch/autograd/grad_mode.py")) continue;
    if (EndsWith(file, "torch/nn/modules/module.py") ||
        file.find("torch/autograd/") != std::string::npos)
      return false;
    const bool torch = file.find("/torch/") != std::string::npos;
    const bool stdlib = file.find("/lib/python3") != std::string::npos &&
                        file.find("-packages/") == std::string::npos;
    if (!torch && !stdlib) return false;
  }
  return true;
}

// Whether a Python stack's checkpoint overhead is inside one of the
// checkpoint's saved-tensor hooks (pack_hook / unpack_hook, whose C++ side
// the native samples see whole).
bool InHookFunction(const TraceModel& m, uint32_t callsite) {
  for (const FrameRecord* f : m.Stack(callsite)) {
    if (f->kind != static_cast<uint8_t>(FrameKind::kPython)) continue;
    if (!EndsWith(m.String(f->file), "torch/utils/checkpoint.py")) continue;
    if (EndsWith(m.String(f->function), "pack_hook")) return true;  // pack_hook, unpack_hook
  }
  return false;
}

// Whether a native stack is inside PyTorch's saved-tensor hook machinery: a
// tensor saved for the backward through a Python pack hook, or read back
// through its unpack hook (the hook's Python included), or the look-up of
// the hooks in force.
bool NativeHookStack(const TraceModel& m, uint32_t callsite) {
  static constexpr std::string_view kHookFunctions[] = {
      "torch::autograd::PySavedVariableHooks::",
      "torch::autograd::PyDefaultSavedVariableHooks::",
      "torch::autograd::SavedVariable::set_hooks_and_pack_data(",
      "torch::autograd::SavedVariable::get_default_hooks(",
      "at::SavedTensorDefaultHooks::get_hooks(",
  };
  for (const FrameRecord* f : m.Stack(callsite)) {
    if (f->kind != static_cast<uint8_t>(FrameKind::kNative)) continue;
    const std::string& fn = m.String(f->function);
    for (std::string_view h : kHookFunctions)
      if (StartsWith(fn, h)) return true;
  }
  return false;
}

// The checkpoint hooks' share of a thread's CPU time between calls inside
// `windows` (sorted, disjoint), leaving out `excluded` (the recompute runs;
// sorted, disjoint). With native samples of the thread the hooks' time is
// what those show under PyTorch's saved-tensor hooks (their C++ side and the
// Python hook inside), plus the Python samples' share of the checkpoint's
// other own work (outside its hook functions); without, the Python samples'
// share of all of it.
struct HookShare {
  int64_t samples = 0, hook = 0;        // Python samples; of them checkpoint overhead
  int64_t native = 0, native_hook = 0;  // native samples; of them under the hooks
  int64_t window_ns = 0, gap_ns = 0;
  int64_t hook_ns = 0;
  double factor = 1.0;  // what the gaps keep
};
constexpr int64_t kMinSamples = 20;

HookShare MeasureHooks(const TraceModel& m, uint32_t tid,
                       const std::vector<std::pair<int64_t, int64_t>>& windows,
                       const std::vector<std::pair<int64_t, int64_t>>& excluded,
                       std::unordered_map<uint32_t, bool>* cache,
                       std::unordered_map<uint32_t, bool>* native_cache) {
  HookShare h;
  const bool native = m.native_sample_period_ns() > 0;
  int64_t py_nonhook = 0;  // Python samples of checkpoint overhead outside the hook functions
  // `excluded` is sorted and disjoint: the first span that ends after `a`.
  auto first_after = [&](int64_t a) {
    return std::upper_bound(
        excluded.begin(), excluded.end(), a,
        [](int64_t t, const std::pair<int64_t, int64_t>& x) { return t < x.second; });
  };
  auto is_excluded = [&](int64_t a, int64_t b) {
    auto it = first_after(a);
    return it != excluded.end() && it->first < b;
  };
  auto excluded_ns = [&](int64_t a, int64_t b) {
    int64_t n = 0;
    for (auto it = first_after(a); it != excluded.end() && it->first < b; ++it)
      n += std::max<int64_t>(0, std::min(b, it->second) - std::max(a, it->first));
    return n;
  };
  const auto& s = m.samples();
  auto lo = std::lower_bound(s.begin(), s.end(), tid,
                             [](const SampleRecord& r, uint32_t t) { return r.tid < t; });
  auto hi = std::upper_bound(lo, s.end(), tid,
                             [](uint32_t t, const SampleRecord& r) { return t < r.tid; });
  const std::vector<uint32_t>& calls = m.ApisOfThread(tid);
  for (const auto& [w0, w1] : windows) {
    h.window_ns += (w1 - w0) - excluded_ns(w0, w1);
    auto it =
        std::lower_bound(lo, hi, w0, [](const SampleRecord& r, int64_t t) { return r.ts_ns < t; });
    for (; it != hi && it->ts_ns < w1; ++it) {
      if (is_excluded(it->ts_ns, it->ts_ns + 1)) continue;
      ++h.samples;
      if (it->callsite == 0) continue;
      auto [c, fresh] = cache->try_emplace(it->callsite, false);
      if (fresh) c->second = CheckpointOverhead(m, it->callsite);
      h.hook += c->second;
      if (c->second && native && !InHookFunction(m, it->callsite)) ++py_nonhook;
    }
    if (native) {
      const auto& ns = m.native_samples();
      auto nlo = std::lower_bound(ns.begin(), ns.end(), std::make_pair(tid, w0),
                                  [](const NativeSampleRecord& r, std::pair<uint32_t, int64_t> k) {
                                    return r.tid != k.first ? r.tid < k.first : r.ts_ns < k.second;
                                  });
      for (; nlo != ns.end() && nlo->tid == tid && nlo->ts_ns < w1; ++nlo) {
        if (is_excluded(nlo->ts_ns, nlo->ts_ns + 1)) continue;
        ++h.native;
        if (nlo->callsite == 0) continue;
        auto [c, fresh] = native_cache->try_emplace(nlo->callsite, false);
        if (fresh) c->second = NativeHookStack(m, nlo->callsite);
        h.native_hook += c->second;
      }
    }
    // Gaps between consecutive calls, both inside the window.
    auto k = std::lower_bound(calls.begin(), calls.end(), w0,
                              [&](uint32_t a, int64_t t) { return m.apis()[a].start_ns < t; });
    for (; k != calls.end() && k + 1 != calls.end(); ++k) {
      const int64_t a = m.apis()[*k].end_ns, b = m.apis()[*(k + 1)].start_ns;
      if (b > w1) break;
      if (b > a && !is_excluded(a, b)) h.gap_ns += b - a;
    }
  }
  if (h.samples >= kMinSamples && h.gap_ns > 0) {
    double hook_ns = static_cast<double>(h.hook) / h.samples * h.window_ns;
    if (h.native >= kMinSamples) {
      hook_ns = static_cast<double>(py_nonhook) / h.samples * h.window_ns +
                static_cast<double>(h.native_hook) * m.native_sample_period_ns();
    } else {
      h.native = h.native_hook = 0;  // too few to go by
    }
    h.hook_ns = static_cast<int64_t>(hook_ns);
    h.factor = std::clamp(1.0 - hook_ns / h.gap_ns, 0.0, 1.0);
  }
  return h;
}

// Whether the program checkpoints the reentrant way: the Python frames of
// torch/utils/checkpoint.py its host samples and stacks hold are
// CheckpointFunction's and none of the non-reentrant kind's (its generator and
// hooks). No such frames (an imported trace, no samples): false, and the
// forward's part is priced as for the non-reentrant kind.
bool CheckpointsReentrant(const TraceModel& m) {
  bool reentrant = false;
  for (const FrameRecord& f : m.frames()) {
    if (f.kind != static_cast<uint8_t>(FrameKind::kPython)) continue;
    if (!EndsWith(m.String(f.file), "torch/utils/checkpoint.py")) continue;
    const std::string& fn = m.String(f.function);
    if (fn.find("_checkpoint_without_reentrant") != std::string::npos ||
        fn.find("_checkpoint_hook") != std::string::npos)
      return false;
    if (fn.rfind("CheckpointFunction.", 0) == 0) reentrant = true;
  }
  return reentrant;
}

// The fix's numbers beyond the recomputed ops (Finding::ops) and the
// backward's recompute runs (Finding::host_spans).
struct CheckpointCosts : FindingData {
  // The forward's checkpoint boundary gaps and the recomputes' exits, each cut
  // to boundary_residual_ns by the fix (the median launch gap).
  std::vector<Finding::Span> boundary_spans;
  int64_t boundary_residual_ns = 0;
  // Windows of a thread whose CPU time between calls the fix scales by
  // `factor` (the checkpoint hooks' share of it, from the host samples and,
  // where the trace has them, the native samples).
  std::vector<whatif::ScaledHostSpan> scaled_spans;
};

using Windows = std::vector<std::pair<int64_t, int64_t>>;

struct Boundary {
  Finding::Span span;
  int64_t gap;
  bool backward;  // a recompute's exit (else the wrapper in the forward)
};

// What the matching found over the steady steps.
struct Scan {
  Finding f;  // ops: the recomputed kernels; host_spans: the backward's runs
  int64_t gpu = 0, host = 0, runs = 0, kernels = 0, steps_with = 0;
  std::vector<int> steps;
  std::vector<int64_t> inner_gaps;  // the main thread's gaps inside paired stretches
  std::set<std::pair<uint32_t, int64_t>> seen_boundary;
  std::vector<Boundary> boundaries;
  // Where the checkpoint hooks run: the paired forward stretches (main
  // thread) and each backward thread's launches in a step.
  std::map<uint32_t, Windows> hook_windows;
  bool reentrant = false;
};

// Kernel launches of each steady step of the device, by step.
std::map<int, std::vector<Launch>> LaunchesByStep(const RuleContext& c) {
  const TraceModel& m = c.m;
  std::map<int, std::vector<Launch>> by_step;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kKernel || o.api == kNone || o.device != c.device) continue;
    const int s = c.op_step[i];
    if (s < 0 || !c.steps.steps[s].steady()) continue;
    const KernelRecord& k = m.kernels()[o.index];
    by_step[s].push_back(
        {m.apis()[o.api].start_ns,
         i,
         o.api,
         {k.name, {k.grid_x, k.grid_y, k.grid_z}, {k.block_x, k.block_y, k.block_z}}});
  }
  return by_step;
}

// One steady step: the backward threads' launches matched against the
// forward's (the main thread's).
class StepScan {
 public:
  StepScan(const TraceModel& m, std::vector<Launch>* launches, Scan* scan)
      : m_(m), launches_(*launches), scan_(*scan) {
    std::sort(launches->begin(), launches->end(),
              [](const Launch& a, const Launch& b) { return a.t < b.t; });
    main_ = m.apis()[launches_[0].api].tid;
    for (const Launch& l : launches_) {
      const uint32_t tid = m.apis()[l.api].tid;
      (tid == main_ ? fwd_ : other_[tid]).push_back(&l);
      if (tid != main_) other_t_.push_back(l.t);
    }
    for (size_t j = 0; j < fwd_.size(); ++j) at_[fwd_[j]->key].push_back(j);
    paired_.assign(fwd_.size(), 0);
  }

  // Returns whether the step recomputes anything.
  bool Run() {
    bool any = false;
    for (const auto& [tid, seq] : other_) {
      scan_.hook_windows[tid].push_back(
          {m_.apis()[seq.front()->api].start_ns, m_.apis()[seq.back()->api].end_ns});
      for (size_t i = 0; i < seq.size();) {
        const size_t best = LongestMatch(seq, i);
        // A run of one or two kernel kinds (a chain of adds in the backward
        // that happens to repeat the forward's) is not a re-run forward.
        std::set<StringId> kinds;
        for (size_t l = 0; l < best && kinds.size() < kMinKinds; ++l)
          kinds.insert(seq[i + l]->key.name);
        if (best < kMinRun || kinds.size() < kMinKinds) {
          ++i;
          continue;
        }
        any = true;
        RecordRun(tid, seq, i, best);
        i += best;
      }
    }
    return any;
  }

 private:
  // The longest match of seq[i...] against the forward, from the first
  // kMaxCandidates occurrences of its first kernel.
  size_t LongestMatch(const std::vector<const Launch*>& seq, size_t i) const {
    auto it = at_.find(seq[i]->key);
    size_t best = 0;
    if (it == at_.end()) return 0;
    const auto& cand = it->second;
    for (size_t n = 0; n < cand.size() && n < kMaxCandidates; ++n) {
      const size_t j = cand[n];
      size_t l = 0;
      while (i + l < seq.size() && j + l < fwd_.size() && seq[i + l]->key == fwd_[j + l]->key) ++l;
      best = std::max(best, l);
    }
    return best;
  }

  // The run's forward stretch: the latest unpaired occurrence; SIZE_MAX: none.
  size_t LatestUnpaired(const std::vector<const Launch*>& seq, size_t i, size_t best) const {
    const auto& cand = at_.at(seq[i]->key);
    for (auto n = cand.rbegin(); n != cand.rend(); ++n) {
      const size_t j = *n;
      if (j + best > fwd_.size()) continue;
      bool ok = true;
      for (size_t l = 0; l < best && ok; ++l)
        ok = !paired_[j + l] && seq[i + l]->key == fwd_[j + l]->key;
      if (ok) return j;
    }
    return SIZE_MAX;
  }

  void RecordRun(uint32_t tid, const std::vector<const Launch*>& seq, size_t i, size_t best) {
    const size_t pj = LatestUnpaired(seq, i, best);
    ++scan_.runs;
    scan_.kernels += static_cast<int64_t>(best);
    for (size_t l = 0; l < best; ++l) {
      const GpuOp& o = m_.gpu_ops()[seq[i + l]->op];
      scan_.gpu += o.end_ns - o.start_ns;
      scan_.f.ops.push_back(seq[i + l]->op);
    }
    RecordBackward(tid, seq[i]->api, seq[i + best - 1]->api);
    if (pj != SIZE_MAX) RecordForward(pj, best);
  }

  // The backward thread's time across the run, from its first launch's
  // previous call to its last launch, and the recompute's exit.
  void RecordBackward(uint32_t tid, uint32_t first_api, uint32_t last_api) {
    const std::vector<uint32_t>& calls = m_.ApisOfThread(tid);
    const size_t p0 = PosOnThread(m_, calls, first_api);
    const size_t p1 = PosOnThread(m_, calls, last_api);
    if (p0 >= calls.size() || p1 >= calls.size()) return;
    // From the end of the call before, when that call is in this step
    // (else the thread was idle since the previous step: from the launch).
    const bool prev_in_step = p0 > 0 && m_.apis()[calls[p0 - 1]].start_ns >= launches_[0].t;
    const int64_t from =
        prev_in_step ? m_.apis()[calls[p0 - 1]].end_ns : m_.apis()[calls[p0]].start_ns;
    const int64_t to = m_.apis()[calls[p1]].end_ns;
    scan_.host += std::max<int64_t>(0, to - from);
    scan_.f.host_spans.push_back({tid, from, to});
    // The recompute's exit: from its last launch to the thread's next
    // call (stopping the re-run, handing the recomputed tensors to the
    // unpack hook), when that call is still in this step.
    if (p1 + 1 < calls.size()) {
      const int64_t b = m_.apis()[calls[p1 + 1]].start_ns;
      if (b <= launches_.back().t && b > to && scan_.seen_boundary.insert({tid, to}).second) {
        scan_.boundaries.push_back({{tid, to, b}, b - to, true});
      }
    }
  }

  // The paired forward stretch: the hooks' window, its inner gaps, and the
  // checkpoint wrapper's entry and exit gaps.
  void RecordForward(size_t pj, size_t best) {
    for (size_t l = 0; l < best; ++l) paired_[pj + l] = 1;
    const std::vector<uint32_t>& main_calls = m_.ApisOfThread(main_);
    const size_t q0 = PosOnThread(m_, main_calls, fwd_[pj]->api);
    const size_t q1 = PosOnThread(m_, main_calls, fwd_[pj + best - 1]->api);
    if (q0 >= main_calls.size() || q1 >= main_calls.size()) return;
    if (!scan_.reentrant)
      scan_.hook_windows[main_].push_back(
          {m_.apis()[main_calls[q0]].start_ns, m_.apis()[main_calls[q1]].end_ns});
    auto gap = [&](size_t q) {
      return m_.apis()[main_calls[q]].start_ns - m_.apis()[main_calls[q - 1]].end_ns;
    };
    for (size_t q = q0 + 1; q <= q1; ++q) scan_.inner_gaps.push_back(gap(q));
    for (size_t q : {q0, q1 + 1}) {
      if (scan_.reentrant || q == 0 || q >= main_calls.size()) continue;
      const int64_t a = m_.apis()[main_calls[q - 1]].end_ns;
      const int64_t b = m_.apis()[main_calls[q]].start_ns;
      // Not a hand-over: no other thread launched in the gap (the main
      // thread waiting in backward() is not the wrapper's time).
      auto o = std::upper_bound(other_t_.begin(), other_t_.end(), a);
      if (o != other_t_.end() && *o < b) continue;
      if (!scan_.seen_boundary.insert({main_, a}).second) continue;
      scan_.boundaries.push_back({{main_, a, b}, gap(q), false});
    }
  }

  const TraceModel& m_;
  const std::vector<Launch>& launches_;
  Scan& scan_;
  uint32_t main_ = 0;
  std::vector<const Launch*> fwd_;
  std::map<uint32_t, std::vector<const Launch*>> other_;
  std::vector<int64_t> other_t_;  // launch times of the other threads, sorted
  std::unordered_map<KernelKey, std::vector<size_t>, KeyHash> at_;
  std::vector<char> paired_;
};

void MergeWindows(Windows* v) {
  std::sort(v->begin(), v->end());
  Windows out;
  for (const auto& iv : *v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  *v = std::move(out);
}

// The hooks' share of each thread's time, from the host samples: the scaled
// spans of the fix, and the text ("thread 12 31% (...)"). *native_used: the
// native samples priced the hooks' C++ side.
std::string ScaleByHooks(const TraceModel& m, Scan* scan, CheckpointCosts* costs,
                         bool* native_used) {
  std::string hooks;
  std::map<uint32_t, Windows> excluded;
  // The recompute runs and the gaps cut above are priced already.
  for (const Finding::Span& sp : scan->f.host_spans)
    excluded[sp.tid].push_back({sp.start_ns, sp.end_ns});
  for (const Finding::Span& sp : costs->boundary_spans)
    excluded[sp.tid].push_back({sp.start_ns, sp.end_ns});
  for (auto& [tid, v] : excluded) MergeWindows(&v);
  std::unordered_map<uint32_t, bool> cache, native_cache;
  for (auto& [tid, merged] : scan->hook_windows) {
    MergeWindows(&merged);
    const HookShare h = MeasureHooks(m, tid, merged, excluded[tid], &cache, &native_cache);
    if (h.samples < kMinSamples) continue;
    *native_used |= h.native > 0;
    hooks += std::string(hooks.empty() ? "" : ", ") + "thread " + std::to_string(tid) + " " +
             FormatFixed(100.0 * (1.0 - h.factor), 0) + "% (" +
             (h.native > 0 ? std::to_string(h.native_hook) + " of " + std::to_string(h.native) +
                                 " native samples under the saved-tensor hooks, "
                           : std::string()) +
             std::to_string(h.hook) + " of " + std::to_string(h.samples) + " samples)";
    if (h.factor >= 1.0) continue;
    for (const auto& [w0, w1] : merged) costs->scaled_spans.push_back({tid, w0, w1, h.factor});
  }
  return hooks;
}

std::string Detail(const Scan& s, int64_t excess, int64_t excess_bwd, int64_t median_gap,
                   const std::string& hooks, bool native_used) {
  const int64_t n = std::max<int64_t>(s.steps_with, 1);
  return "per step: " + FormatFixed(1.0 * s.runs / n, 0) +
         " recomputed stretches of the forward, " + FormatFixed(1.0 * s.kernels / n, 0) +
         " kernels, " + FormatDuration(s.gpu / n) + " GPU time, " + FormatDuration(s.host / n) +
         " of the backward thread's time launching them; " +
         (s.reentrant
              ? std::string("reentrant checkpointing (its no_grad forward costs about what the "
                            "forward's autograd recording will: not priced)")
              : "the checkpoint wrapper's entry/exit in the forward " +
                    FormatDuration(excess / n)) +
         " and the recomputes' exits in the backward " + FormatDuration(excess_bwd / n) +
         " above the median launch gap (" + FormatDuration(median_gap) + ")" +
         (hooks.empty() ? std::string()
                        : "; the checkpoint hooks' share of the CPU time between launches "
                          "(host samples): " +
                              hooks) +
         (native_used
              ? std::string("; the saved-tensor hooks' C++ side priced from the native samples")
              : std::string("; a lower bound: what checkpointing adds to each op of the "
                            "checkpointed blocks (the C++ side of the saved-tensor hooks; a "
                            "reentrant backward's nested pass) leaves no mark of its own in a "
                            "trace without native samples (profile's --native-hz, on by default, "
                            "prices the hooks; docs/rules.md)"));
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  std::map<int, std::vector<Launch>> by_step = LaunchesByStep(c);
  Scan scan;
  scan.reentrant = CheckpointsReentrant(m);
  for (auto& [s, launches] : by_step) {
    if (StepScan(m, &launches, &scan).Run()) {
      ++scan.steps_with;
      scan.steps.push_back(s);
    }
  }
  if (scan.runs == 0) return;
  Finding& f = scan.f;
  auto costs = std::make_shared<CheckpointCosts>();
  int64_t median_gap = 0;
  std::vector<int64_t>& inner = scan.inner_gaps;
  if (!inner.empty()) median_gap = std::max<int64_t>(0, LowerMedian(&inner));
  // A recompute's exit that runs into the next recompute run (two runs back
  // to back) is that run's time already.
  std::set<std::pair<uint32_t, int64_t>> run_starts;
  for (const Finding::Span& sp : f.host_spans) run_starts.insert({sp.tid, sp.start_ns});
  int64_t excess = 0, excess_bwd = 0;
  for (const Boundary& b : scan.boundaries) {
    if (b.gap <= median_gap) continue;
    if (b.backward && run_starts.count({b.span.tid, b.span.start_ns})) continue;
    (b.backward ? excess_bwd : excess) += b.gap - median_gap;
    costs->boundary_spans.push_back(b.span);
  }
  costs->boundary_residual_ns = median_gap;
  std::string hooks;
  bool native_used = false;
  if (!m.samples().empty()) hooks = ScaleByHooks(m, &scan, costs.get(), &native_used);
  const int64_t n = std::max<int64_t>(scan.steps_with, 1);
  f.rule = "recompute";
  f.title = "Activation checkpointing recomputes " +
            FormatFixed(std::max(scan.gpu, scan.host) / n / 1e6, 1) +
            " ms of forward work per step";
  f.where = c.StepsText(scan.steps) + "; device " + std::to_string(c.device);
  f.detail = Detail(scan, excess, excess_bwd, median_gap, hooks, native_used);
  f.fix =
      "Turn activation checkpointing off where memory allows (`stepscope plan --recompute none` "
      "says whether the step fits); else recompute selectively (only the cheap ops: "
      "torch.utils.checkpoint with a selective policy, attention-only) or checkpoint fewer "
      "layers. Checkpointing trades memory for this time.";
  f.count = scan.runs;
  f.cost_ns = scan.gpu + scan.host + excess + excess_bwd;  // replaced by the replayed saving
  f.data = std::move(costs);
  c.Finish(&f, 2 * scan.steps_with >= static_cast<int64_t>(by_step.size()));
  out->push_back(f);
}

Fix NoRecompute(const PricingContext& p, Finding* f) {
  static const CheckpointCosts kEmpty;
  const auto* d = dynamic_cast<const CheckpointCosts*>(f->data.get());
  if (!d) d = &kEmpty;
  const std::vector<uint32_t> ops = OpNodes(p.g, f->ops);
  const std::vector<whatif::HostSpan> segments = HostSpansOf(f->host_spans);
  const std::vector<whatif::HostSpan> boundaries = HostSpansOf(d->boundary_spans);
  const std::vector<whatif::ScaledHostSpan> scaled = d->scaled_spans;
  const int64_t residual = d->boundary_residual_ns;
  std::set<uint32_t> hook_threads;
  for (const whatif::ScaledHostSpan& s : scaled) hook_threads.insert(s.tid);
  return {[=](whatif::Graph* x) {
            return whatif::RemoveRecompute(x, ops, segments, boundaries, residual, scaled);
          },
          "without recomputation (" + std::to_string(ops.size()) + " kernels, " +
              std::to_string(segments.size()) + " backward segments' CPU time, " +
              std::to_string(boundaries.size()) + " checkpoint entry/exit gaps cut to " +
              FormatFixed(residual / 1e3, 0) + " us" +
              (scaled.empty() ? std::string()
                              : ", the checkpoint hooks' sampled share of the CPU time on " +
                                    std::to_string(hook_threads.size()) +
                                    (hook_threads.size() == 1 ? " thread" : " threads")) +
              ")"};
}

}  // namespace

extern const Rule kRecomputeRule{
    .id = "recompute",
    .summary =
        "activation checkpointing recomputes the forward in the backward (GPU and host time)",
    .detect = Detect,
    .fix = NoRecompute,
};

}  // namespace stepscope
