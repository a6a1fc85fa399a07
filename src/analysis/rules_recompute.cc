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
// The replay (whatif/, RemoveRecompute) prices them together.
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

#include "analysis/rules.h"
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

}  // namespace

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

void RecomputeRule(const RuleContext& c, std::vector<Finding>* out) {
  const TraceModel& m = c.m;
  // Kernel launches of each steady step, by launch time.
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
  Finding f;
  int64_t gpu = 0, host = 0, runs = 0, kernels = 0, steps_with = 0;
  std::vector<int> steps;
  std::vector<int64_t> inner_gaps;
  std::set<std::pair<uint32_t, int64_t>> seen_boundary;
  struct Boundary {
    Finding::Span span;
    int64_t gap;
    bool backward;  // a recompute's exit (else the wrapper in the forward)
  };
  std::vector<Boundary> boundaries;
  // Where the checkpoint hooks run: the paired forward stretches (main
  // thread) and each backward thread's launches in a step.
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> hook_windows;
  const bool reentrant = CheckpointsReentrant(m);
  for (auto& [s, launches] : by_step) {
    std::sort(launches.begin(), launches.end(),
              [](const Launch& a, const Launch& b) { return a.t < b.t; });
    const uint32_t main = m.apis()[launches[0].api].tid;
    std::vector<const Launch*> fwd;
    std::map<uint32_t, std::vector<const Launch*>> other;
    for (const Launch& l : launches) {
      const uint32_t tid = m.apis()[l.api].tid;
      (tid == main ? fwd : other[tid]).push_back(&l);
    }
    std::vector<int64_t> other_t;  // launch times of the other threads, sorted
    for (const Launch& l : launches) {
      if (m.apis()[l.api].tid != main) other_t.push_back(l.t);
    }
    std::unordered_map<KernelKey, std::vector<size_t>, KeyHash> at;
    for (size_t j = 0; j < fwd.size(); ++j) at[fwd[j]->key].push_back(j);
    std::vector<char> paired(fwd.size(), 0);
    const std::vector<uint32_t>& main_calls = m.ApisOfThread(main);
    bool any = false;
    for (const auto& [tid, seq] : other) {
      const std::vector<uint32_t>& calls = m.ApisOfThread(tid);
      hook_windows[tid].push_back(
          {m.apis()[seq.front()->api].start_ns, m.apis()[seq.back()->api].end_ns});
      for (size_t i = 0; i < seq.size();) {
        auto it = at.find(seq[i]->key);
        size_t best = 0;
        if (it != at.end()) {
          const auto& cand = it->second;
          for (size_t n = 0; n < cand.size() && n < kMaxCandidates; ++n) {
            const size_t j = cand[n];
            size_t l = 0;
            while (i + l < seq.size() && j + l < fwd.size() && seq[i + l]->key == fwd[j + l]->key)
              ++l;
            best = std::max(best, l);
          }
        }
        // A run of one or two kernel kinds (a chain of adds in the backward
        // that happens to repeat the forward's) is not a re-run forward.
        std::set<StringId> kinds;
        for (size_t l = 0; l < best && kinds.size() < kMinKinds; ++l)
          kinds.insert(seq[i + l]->key.name);
        if (best < kMinRun || kinds.size() < kMinKinds) {
          ++i;
          continue;
        }
        // The run's forward stretch: the latest unpaired occurrence.
        size_t pj = SIZE_MAX;
        for (auto n = it->second.rbegin(); n != it->second.rend(); ++n) {
          const size_t j = *n;
          if (j + best > fwd.size()) continue;
          bool ok = true;
          for (size_t l = 0; l < best && ok; ++l)
            ok = !paired[j + l] && seq[i + l]->key == fwd[j + l]->key;
          if (ok) {
            pj = j;
            break;
          }
        }
        any = true;
        ++runs;
        kernels += static_cast<int64_t>(best);
        for (size_t l = 0; l < best; ++l) {
          const GpuOp& o = m.gpu_ops()[seq[i + l]->op];
          gpu += o.end_ns - o.start_ns;
          f.ops.push_back(seq[i + l]->op);
        }
        // The autograd thread's time across the run.
        const size_t p0 = PosOnThread(m, calls, seq[i]->api);
        const size_t p1 = PosOnThread(m, calls, seq[i + best - 1]->api);
        if (p0 < calls.size() && p1 < calls.size()) {
          // From the end of the call before, when that call is in this step
          // (else the thread was idle since the previous step: from the launch).
          const bool prev_in_step = p0 > 0 && m.apis()[calls[p0 - 1]].start_ns >= launches[0].t;
          const int64_t from =
              prev_in_step ? m.apis()[calls[p0 - 1]].end_ns : m.apis()[calls[p0]].start_ns;
          const int64_t to = m.apis()[calls[p1]].end_ns;
          host += std::max<int64_t>(0, to - from);
          f.host_spans.push_back({tid, from, to});
          // The recompute's exit: from its last launch to the thread's next
          // call (stopping the re-run, handing the recomputed tensors to the
          // unpack hook), when that call is still in this step.
          if (p1 + 1 < calls.size()) {
            const int64_t b = m.apis()[calls[p1 + 1]].start_ns;
            if (b <= launches.back().t && b > to && seen_boundary.insert({tid, to}).second) {
              boundaries.push_back({{tid, to, b}, b - to, true});
            }
          }
        }
        if (pj != SIZE_MAX) {
          for (size_t l = 0; l < best; ++l) paired[pj + l] = 1;
          const size_t q0 = PosOnThread(m, main_calls, fwd[pj]->api);
          const size_t q1 = PosOnThread(m, main_calls, fwd[pj + best - 1]->api);
          if (q0 < main_calls.size() && q1 < main_calls.size()) {
            if (!reentrant)
              hook_windows[main].push_back(
                  {m.apis()[main_calls[q0]].start_ns, m.apis()[main_calls[q1]].end_ns});
            auto gap = [&](size_t q) {
              return m.apis()[main_calls[q]].start_ns - m.apis()[main_calls[q - 1]].end_ns;
            };
            for (size_t q = q0 + 1; q <= q1; ++q) inner_gaps.push_back(gap(q));
            for (size_t q : {q0, q1 + 1}) {
              if (reentrant || q == 0 || q >= main_calls.size()) continue;
              const int64_t a = m.apis()[main_calls[q - 1]].end_ns;
              const int64_t b = m.apis()[main_calls[q]].start_ns;
              // Not a hand-over: no other thread launched in the gap (the main
              // thread waiting in backward() is not the wrapper's time).
              auto o = std::upper_bound(other_t.begin(), other_t.end(), a);
              if (o != other_t.end() && *o < b) continue;
              if (!seen_boundary.insert({main, a}).second) continue;
              boundaries.push_back({{main, a, b}, gap(q), false});
            }
          }
        }
        i += best;
      }
    }
    if (any) {
      ++steps_with;
      steps.push_back(s);
    }
  }
  if (runs == 0) return;
  int64_t median_gap = 0;
  if (!inner_gaps.empty()) {
    std::nth_element(inner_gaps.begin(), inner_gaps.begin() + (inner_gaps.size() - 1) / 2,
                     inner_gaps.end());
    median_gap = std::max<int64_t>(0, inner_gaps[(inner_gaps.size() - 1) / 2]);
  }
  // A recompute's exit that runs into the next recompute run (two runs back
  // to back) is that run's time already.
  std::set<std::pair<uint32_t, int64_t>> run_starts;
  for (const Finding::Span& sp : f.host_spans) run_starts.insert({sp.tid, sp.start_ns});
  int64_t excess = 0, excess_bwd = 0;
  for (const Boundary& b : boundaries) {
    if (b.gap <= median_gap) continue;
    if (b.backward && run_starts.count({b.span.tid, b.span.start_ns})) continue;
    (b.backward ? excess_bwd : excess) += b.gap - median_gap;
    f.boundary_spans.push_back(b.span);
  }
  f.boundary_residual_ns = median_gap;
  // The hooks' share of each thread's time, from the host samples.
  std::string hooks;
  bool native_used = false;
  if (!m.samples().empty()) {
    std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> excluded;
    // The recompute runs and the gaps cut above are priced already.
    for (const Finding::Span& sp : f.host_spans)
      excluded[sp.tid].push_back({sp.start_ns, sp.end_ns});
    for (const Finding::Span& sp : f.boundary_spans)
      excluded[sp.tid].push_back({sp.start_ns, sp.end_ns});
    auto merge = [](std::vector<std::pair<int64_t, int64_t>>* v) {
      std::sort(v->begin(), v->end());
      std::vector<std::pair<int64_t, int64_t>> out;
      for (const auto& iv : *v) {
        if (!out.empty() && iv.first <= out.back().second)
          out.back().second = std::max(out.back().second, iv.second);
        else
          out.push_back(iv);
      }
      *v = std::move(out);
    };
    for (auto& [tid, v] : excluded) merge(&v);
    std::unordered_map<uint32_t, bool> cache, native_cache;
    for (auto& [tid, merged] : hook_windows) {
      merge(&merged);
      const HookShare h = MeasureHooks(m, tid, merged, excluded[tid], &cache, &native_cache);
      if (h.samples < kMinSamples) continue;
      native_used |= h.native > 0;
      hooks += std::string(hooks.empty() ? "" : ", ") + "thread " + std::to_string(tid) + " " +
               FormatFixed(100.0 * (1.0 - h.factor), 0) + "% (" +
               (h.native > 0 ? std::to_string(h.native_hook) + " of " + std::to_string(h.native) +
                                   " native samples under the saved-tensor hooks, "
                             : std::string()) +
               std::to_string(h.hook) + " of " + std::to_string(h.samples) + " samples)";
      if (h.factor >= 1.0) continue;
      for (const auto& [w0, w1] : merged) f.scaled_spans.push_back({tid, w0, w1, h.factor});
    }
  }
  const int64_t n = std::max<int64_t>(steps_with, 1);
  f.rule = "recompute";
  f.title = "Activation checkpointing recomputes " + FormatFixed(std::max(gpu, host) / n / 1e6, 1) +
            " ms of forward work per step";
  f.where = c.StepsText(steps) + "; device " + std::to_string(c.device);
  f.detail =
      "per step: " + FormatFixed(1.0 * runs / n, 0) + " recomputed stretches of the forward, " +
      FormatFixed(1.0 * kernels / n, 0) + " kernels, " + FormatDuration(gpu / n) + " GPU time, " +
      FormatDuration(host / n) + " of the backward thread's time launching them; " +
      (reentrant
           ? std::string("reentrant checkpointing (its no_grad forward costs about what the "
                         "forward's autograd recording will: not priced)")
           : "the checkpoint wrapper's entry/exit in the forward " + FormatDuration(excess / n)) +
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
                         "reentrant backward's nested pass) leaves no mark of its own in a trace "
                         "without native samples (profile's --native-hz, on by default, prices the "
                         "hooks; docs/rules.md)"));
  f.fix =
      "Turn activation checkpointing off where memory allows (`stepscope plan --recompute none` "
      "says whether the step fits); else recompute selectively (only the cheap ops: "
      "torch.utils.checkpoint with a selective policy, attention-only) or checkpoint fewer "
      "layers. Checkpointing trades memory for this time.";
  f.count = runs;
  f.cost_ns = gpu + host + excess + excess_bwd;  // replaced by the replayed saving
  c.Finish(&f, 2 * steps_with >= static_cast<int64_t>(by_step.size()));
  out->push_back(f);
}

}  // namespace stepscope
