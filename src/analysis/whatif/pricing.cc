// Prices every finding by replaying the analyzed steps with its fix applied
// (docs/whatif.md): the finding's cost is the simulated saving of the median
// step, its threshold applies to that saving. Also traces the critical path
// of the median step and adds the host_bound finding when the host holds it.
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>

#include "analysis/whatif/pricing.h"

#include "analysis/rules.h"
#include "analysis/whatif/transforms.h"
#include "common/strings.h"

namespace stepscope {
namespace {

using whatif::Graph;
using whatif::HostSpan;
using whatif::Prediction;
using whatif::WhatIfEngine;

std::vector<uint32_t> OpNodes(const Graph& g, const std::vector<uint32_t>& ops) {
  std::vector<uint32_t> v;
  for (uint32_t o : ops) {
    if (o < g.op_node.size() && g.op_node[o] != kNone) v.push_back(g.op_node[o]);
  }
  return v;
}

// The blocking calls a fix takes out of the loop: every blocking call in the
// NVTX ranges of the finding's calls (loss.item() is a device-to-host copy and
// a stream synchronization; avoiding it removes both), or, outside every
// range, the calls of the same name; in the analyzed windows.
std::vector<uint32_t> LikeCalls(const RuleContext& c, const Graph& g,
                                const std::vector<uint32_t>& apis) {
  std::set<uint32_t> ranges;
  std::set<StringId> names;
  for (uint32_t a : apis) {
    const uint32_t r = c.m.api_range()[a];
    if (r != kNone && !(r < c.is_step_range.size() && c.is_step_range[r])) {
      ranges.insert(c.m.nvtx()[r].name);
    } else {
      names.insert(c.m.apis()[a].name);
    }
  }
  std::vector<uint32_t> v;
  for (uint32_t a = 0; a < c.m.apis().size(); ++a) {
    const ApiRecord& r = c.m.apis()[a];
    if (g.call_node[a] == kNone) continue;  // outside the replayed steps
    const whatif::Node& n = g.nodes[g.call_node[a]];
    if (n.block == whatif::BlockKind::kNone || n.block == whatif::BlockKind::kQueueFull) continue;
    if (!c.InWindows(r.start_ns)) continue;
    const uint32_t range = c.m.api_range()[a];
    const bool in_range = range != kNone && ranges.count(c.m.nvtx()[range].name);
    if (in_range || names.count(r.name)) v.push_back(g.call_node[a]);
  }
  return v;
}

std::string Ms(int64_t ns) { return FormatFixed(ns / 1e6, 1); }

}  // namespace

std::vector<HostSpan> FindingHostSpans(const Finding& f) {
  std::vector<HostSpan> v;
  for (const Finding::Span& s : f.host_spans) v.push_back({s.tid, s.start_ns, s.end_ns});
  std::sort(v.begin(), v.end(), [](const HostSpan& a, const HostSpan& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.start_ns < b.start_ns;
  });
  v.erase(std::unique(v.begin(), v.end(),
                      [](const HostSpan& a, const HostSpan& b) {
                        return a.tid == b.tid && a.start_ns == b.start_ns && a.end_ns == b.end_ns;
                      }),
          v.end());
  return v;
}

whatif::Prediction PriceLargerBatch(const WhatIfEngine& e, const StepSet& steps,
                                    const std::vector<Finding>& findings, double n,
                                    size_t* bursts) {
  std::vector<int32_t> steady;
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    if (steps.steps[k].steady()) steady.push_back(static_cast<int32_t>(k));
  }
  std::vector<HostSpan> data;
  for (const Finding& f : findings) {
    if (f.rule == "um_faults") data = FindingHostSpans(f);
  }
  if (bursts) *bursts = data.size();
  return e.Price([&](Graph* x) { return whatif::ScaleBatch(x, steady, n, data); });
}

void PriceFindings(const RuleContext& c, Analysis* a) {
  if (!c.opt.price || a->device < 0 || c.steps.steps.empty()) return;
  auto built = WhatIfEngine::Build(c.m, c.steps, a->device, c.opt.untraced_step_ns);
  if (!built.ok()) {
    a->whatif_error = built.status().message();
    return;
  }
  const WhatIfEngine& e = *built;
  if (e.base().median <= 0) {
    a->whatif_error = "no steady step with GPU work after the first";
    return;
  }
  a->measured_step_ns = e.measured().median;
  a->simulated_step_ns = e.traced_base_median();
  if (c.opt.untraced_step_ns > 0) {
    a->untraced_step_ns = c.opt.untraced_step_ns;
    a->host_scale = e.host_scale();
    a->scaled_step_ns = e.base().median;
  }
  const Graph& g = e.graph();

  // Critical path of the median step.
  const int ms = e.MedianStep();
  const whatif::CriticalPath path = TraceCriticalPath(g, e.base_replay(), e.base(), ms);
  if (path.duration > 0) {
    a->host_bound = path.host_bound;
    std::string s = "step " + std::to_string(c.steps.steps[ms].number) + " (" + Ms(path.duration) +
                    " ms) is bound by ";
    std::map<uint32_t, std::vector<const whatif::PathPart*>> by_lane;
    for (const auto& p : path.parts) by_lane[p.lane].push_back(&p);
    for (size_t k = 0; k < path.lanes.size() && k < 3; ++k) {
      const auto& [lane, ns] = path.lanes[k];
      s += std::string(k ? "; " : "") + g.lanes[lane].Name(g.main_tid) + " " +
           FormatFixed(100.0 * ns / path.duration, 0) + "% (";
      const auto& parts = by_lane[lane];
      for (size_t j = 0; j < parts.size() && j < 3; ++j) {
        s += std::string(j ? ", " : "") + parts[j]->what + " " + Ms(parts[j]->ns);
      }
      s += ")";
    }
    a->critical_path = s;
  }

  auto apply = [&](Finding* f, const Prediction& p, const std::string& what) {
    f->step_before_ns = p.base_ns;
    f->step_after_ns = p.fixed_ns;
    f->whatif = what;
    f->cost_per_step_ns = std::max<int64_t>(0, p.saving_ns());
    f->cost_ns = f->cost_per_step_ns * std::max<int64_t>(c.nsteps, 1);
    f->cost_pct = p.base_ns > 0 ? 100.0 * f->cost_per_step_ns / p.base_ns : 0.0;
    // Reported when the rule's own evidence was significant and the fix saves
    // at least the threshold.
    f->reported = f->reported && f->cost_pct >= c.opt.min_cost_pct;
  };

  for (Finding& f : a->findings) {
    if (f.rule == "host_sync" || f.rule == "sync_memcpy") {
      const std::vector<uint32_t> calls = LikeCalls(c, g, f.apis);
      apply(&f, e.Price([&](Graph* x) { return whatif::RemoveWaits(x, calls); }),
            "the host does not wait in " + std::to_string(calls.size()) + " calls");
    } else if (f.rule == "data_loading") {
      // Waits of threads without DataLoader ranges go whole; the DataLoader.__next__
      // calls of the others go exactly. Each keeps a worker-fed batch's fetch.
      const auto waits = FindingHostSpans(f);
      std::vector<HostSpan> calls;
      for (const Finding::Span& s : f.loader_spans) calls.push_back({s.tid, s.start_ns, s.end_ns});
      const int64_t fetch = std::max<int64_t>(0, c.opt.worker_fetch_ns);
      std::string what;
      if (!waits.empty()) what = std::to_string(waits.size()) + " waits";
      if (!calls.empty()) {
        what += (what.empty() ? "" : " and ") + std::to_string(calls.size()) + " " +
                std::string(kLoaderRangeName) + " calls";
      }
      apply(&f, e.Price([&](Graph* x) {
        return whatif::CutHostTime(x, waits, fetch) + whatif::CutHostOverlap(x, calls, fetch);
      }),
            "data loading overlapped with the previous step (" + what + " cut to " +
                FormatFixed(fetch / 1e6, 2) + " ms, a worker-fed batch's fetch)");
    } else if (f.rule == "host_wait") {
      const auto spans = FindingHostSpans(f);
      apply(&f, e.Price([&](Graph* x) { return whatif::CutHostTime(x, spans, 0); }),
            "the host issues the work without the " + std::to_string(spans.size()) + " delays");
    } else if (f.rule == "launch_bound") {
      const auto spans = FindingHostSpans(f);
      // The stretches are captured whole: the Python between their launches goes too.
      apply(&f, e.Price([&](Graph* x) { return whatif::CudaGraph(x, spans, 20'000, INT64_MAX); }),
            "CUDA graphs over the " + std::to_string(spans.size()) + " launch-bound stretches");
    } else if (f.rule == "pageable_memcpy") {
      const auto ops = OpNodes(g, f.ops);
      apply(&f, e.Price([&](Graph* x) { return whatif::PinCopies(x, ops, 2.0); }),
            "pinned copies (2x faster, uploads do not block)");
    } else if (f.rule == "offload_copies") {
      const auto ops = OpNodes(g, f.ops);
      const Prediction side = e.Price([&](Graph* x) { return whatif::SideStream(x, ops); });
      apply(&f, e.Price([&](Graph* x) { return whatif::RemoveOps(x, ops); }), "without the copies");
      f.detail += "; with the copies on a side stream instead: step " + Ms(side.base_ns) + " -> " +
                  Ms(side.fixed_ns) + " ms";
    } else if (f.rule == "um_faults") {
      // Each stalled kernel runs without its fault stall, after a prefetch of
      // its bytes on its stream; each CPU fault burst becomes a bulk copy back.
      std::vector<uint32_t> ops;
      std::vector<int64_t> fixed;
      for (size_t i = 0; i < f.ops.size() && i < f.op_fixed_ns.size(); ++i) {
        const uint32_t o = f.ops[i];
        if (o >= g.op_node.size() || g.op_node[o] == kNone) continue;
        ops.push_back(g.op_node[o]);
        fixed.push_back(f.op_fixed_ns[i]);
      }
      apply(&f, e.Price([&](Graph* x) {
        int n = whatif::SetDurations(x, ops, fixed);
        for (size_t i = 0; i < f.host_spans.size() && i < f.host_span_cut_ns.size(); ++i) {
          const Finding::Span& sp = f.host_spans[i];
          n += whatif::ShortenHostTime(x, {sp.tid, sp.start_ns, sp.end_ns}, f.host_span_cut_ns[i]);
        }
        return n;
      }),
            "the managed buffers prefetched (" + std::to_string(ops.size()) + " kernels without " +
                "their fault stalls, after the prefetch's copy; " +
                std::to_string(f.host_spans.size()) +
                " CPU fault bursts as bulk copies: an upper bound where the CPU computes while "
                "faulting)");
    } else if (f.rule == "recompute") {
      const auto ops = OpNodes(g, f.ops);
      const auto segments = FindingHostSpans(f);
      Finding b;
      b.host_spans = f.boundary_spans;
      const auto boundaries = FindingHostSpans(b);
      std::vector<whatif::ScaledHostSpan> scaled;
      std::set<uint32_t> hook_threads;
      for (const Finding::ScaledSpan& s : f.scaled_spans) {
        scaled.push_back({s.tid, s.start_ns, s.end_ns, s.factor});
        hook_threads.insert(s.tid);
      }
      apply(&f, e.Price([&](Graph* x) {
        return whatif::RemoveRecompute(x, ops, segments, boundaries, f.boundary_residual_ns,
                                       scaled);
      }),
            "without recomputation (" + std::to_string(ops.size()) + " kernels, " +
                std::to_string(segments.size()) + " backward segments' CPU time, " +
                std::to_string(boundaries.size()) + " checkpoint entry/exit gaps cut to " +
                FormatFixed(f.boundary_residual_ns / 1e3, 0) + " us" +
                (scaled.empty() ? std::string()
                                : ", the checkpoint hooks' sampled share of the CPU time on " +
                                      std::to_string(hook_threads.size()) +
                                      (hook_threads.size() == 1 ? " thread" : " threads")) +
                ")");
    } else if (f.rule == "fp32_gemm") {
      // The GEMMs, and fp32 attention kernels, which autocast moves to bf16 too.
      std::vector<uint32_t> ops32, ops_tf32;
      // Plain substring tests: kernel names are untrusted input (no regex on them).
      auto any_of = [](std::string s, std::initializer_list<const char*> words) {
        for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (const char* w : words) {
          if (s.find(w) != std::string::npos) return true;
        }
        return false;
      };
      std::set<uint32_t> gemm(f.ops.begin(), f.ops.end());
      for (uint32_t i = 0; i < c.m.gpu_ops().size(); ++i) {
        const GpuOp& o = c.m.gpu_ops()[i];
        if (o.kind != GpuOpKind::kKernel || g.op_node[i] == kNone) continue;
        const KernelRecord& k = c.m.kernels()[o.index];
        const int32_t st = g.nodes[g.op_node[i]].step;
        if (st < 0 || !c.steps.steps[st].steady()) continue;
        const std::string& name = c.m.String(k.name);
        const GemmPrecision p = c.m.NameInfo(k.name).gemm;
        if (gemm.count(i) || p == GemmPrecision::kFp32 || p == GemmPrecision::kTf32) {
          (p == GemmPrecision::kTf32 ? ops_tf32 : ops32).push_back(g.op_node[i]);
        } else if (any_of(name, {"fmha", "flash", "attention", "sdpa"}) &&
                   any_of(name, {"f32", "float"})) {
          ops32.push_back(g.op_node[i]);
        }
      }
      const double r32 = c.opt.tensor_core_ratio_fp32, rtf = c.opt.tensor_core_ratio_tf32;
      // The replay replaces the rule's fixed-fraction estimate.
      const size_t est = f.detail.find("; estimated saving");
      if (est != std::string::npos) f.detail.resize(est);
      apply(&f, e.Price([&](Graph* x) {
        return whatif::ScaleOps(x, ops32, r32) + whatif::ScaleOps(x, ops_tf32, rtf);
      }),
            "tensor-core GEMMs (fp32 time x " + FormatFixed(r32, 3) + ", TF32 x " +
                FormatFixed(rtf, 3) + ": " + c.opt.ratio_source + ")");
    }
  }

  // The host bounds the step: a larger batch amortizes it. Not when data
  // loading explains most of the host's time (a larger batch loads more data).
  // The CPU's unified-memory fault bursts touch the batch's data: they grow
  // with it, like the GPU's work.
  int64_t best = 0;
  for (const Finding& f : a->findings) {
    if (f.rule == "data_loading" && f.reported) best = std::max(best, f.cost_per_step_ns);
  }
  if (path.duration > 0 && path.host_bound) {
    const double n = c.opt.batch_factor;
    size_t bursts = 0;
    Prediction p = PriceLargerBatch(e, c.steps, a->findings, n, &bursts);
    Finding f;
    f.rule = "host_bound";
    int64_t host = 0;
    std::string threads;
    for (const auto& [lane, ns] : path.lanes) {
      if (!g.lanes[lane].host) continue;
      host += ns;
      threads += (threads.empty() ? "" : ", ") + std::to_string(g.lanes[lane].id);
    }
    const double busy = a->idle.analyzed_ns > 0 ? 100.0 * a->idle.busy_ns / a->idle.analyzed_ns : 0;
    f.title = "The host bounds the step: host threads (" + threads + ") hold " +
              FormatFixed(100.0 * host / path.duration, 0) + "% of its critical path, the GPU is " +
              FormatFixed(busy, 0) + "% busy";
    f.where = "critical path of " + a->critical_path;
    f.detail = FormatFixed(n, 0) + "x the batch per step: step " + Ms(p.base_ns) + " -> " +
               Ms(p.fixed_ns) + " ms (" +
               FormatFixed(p.base_ns > 0 ? 1.0 * p.fixed_ns / p.base_ns : 0, 2) +
               "x the time for " + FormatFixed(n, 0) + "x the samples" +
               (bursts == 0 ? std::string()
                            : "; the " + std::to_string(bursts) +
                                  " CPU fault bursts of managed memory grow with it") +
               ")";
    f.fix =
        "Give the GPU more work per host step: a larger batch (or fewer, larger micro-batches), "
        "CUDA graphs (torch.compile(mode=\"reduce-overhead\")) to cut the per-launch host cost, "
        "fused kernels; move host work (logging, data preparation) off the training thread.";
    f.count = 1;
    // Priced per original batch of samples.
    Prediction per;
    per.base_ns = p.base_ns;
    per.fixed_ns = static_cast<int64_t>(p.fixed_ns / n);
    f.whatif = FormatFixed(n, 0) + "x batch, per " + "original batch";
    f.step_before_ns = per.base_ns;
    f.step_after_ns = per.fixed_ns;
    f.cost_per_step_ns = std::max<int64_t>(0, per.saving_ns());
    f.cost_ns = f.cost_per_step_ns * std::max<int64_t>(c.nsteps, 1);
    f.cost_pct = per.base_ns > 0 ? 100.0 * f.cost_per_step_ns / per.base_ns : 0.0;
    f.reported = f.cost_pct >= c.opt.min_cost_pct && 2 * best < f.cost_per_step_ns;
    a->findings.push_back(f);
  }
}

}  // namespace stepscope
