#include "plan/select.h"

#include <algorithm>
#include <cmath>

#include "common/strings.h"

namespace stepscope::plan {
namespace {

constexpr int kGpusPerNode = 8;

double RecomputeCost(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return 0;
    case Recompute::kSelective:
      return 0.03;
    case Recompute::kFull:
      return 0.33;
  }
  return 0;
}

double Log2Ratio(double a, double b) { return a > 0 && b > 0 ? std::log2(a / b) : 0; }

double AbsoluteCost(const PlanOptions& o, int64_t base_micro_batch) {
  double c = 1 + RecomputeCost(o.recompute);
  c += 0.04 * std::max(0.0, Log2Ratio(static_cast<double>(base_micro_batch), o.micro_batch));
  c += 0.06 * std::max(0.0, Log2Ratio(std::min(o.tp, kGpusPerNode), 1));
  if (o.tp > kGpusPerNode) c += 0.30;
  if (o.zero >= 3) c += 0.15;
  if (o.offload_activations) c += 0.20;
  if (o.offload_optimizer) c += 0.40;
  if (o.pp > 1) {
    int64_t mb = o.microbatches > 0 ? o.microbatches : o.pp;
    c += static_cast<double>(o.pp - 1) / (static_cast<double>(mb) * std::max(o.vpp, 1));
  }
  c += 0.05 * std::max(0.0, Log2Ratio(o.cp, 1));
  return c;
}

}  // namespace

double RelativeStepTime(const ModelSpec&, const PlanOptions& base, const PlanOptions& o) {
  return AbsoluteCost(o, base.micro_batch) / AbsoluteCost(base, base.micro_batch);
}

std::string DescribeChanges(const PlanOptions& b, const PlanOptions& o) {
  std::vector<std::string> c;
  auto num = [&](const char* what, int64_t from, int64_t to) {
    if (from != to)
      c.push_back(std::string(what) + " " + FormatCount(from) + " -> " + FormatCount(to));
  };
  num("micro-batch", b.micro_batch, o.micro_batch);
  if (b.recompute != o.recompute) {
    c.push_back(std::string("recompute ") + RecomputeName(b.recompute) + " -> " +
                RecomputeName(o.recompute));
  }
  num("ZeRO stage", b.zero, o.zero);
  num("TP", b.tp, o.tp);
  if (b.offload_activations != o.offload_activations && o.offload_activations) {
    c.push_back("offload activations");
  }
  if (b.offload_optimizer != o.offload_optimizer && o.offload_optimizer) {
    c.push_back("offload optimizer");
  }
  return Join(c, ", ");
}

std::vector<Candidate> FittingCandidates(const ModelSpec& m, const PlanOptions& base,
                                         int64_t capacity_bytes, size_t limit) {
  std::vector<int64_t> batches;
  for (int64_t b = base.micro_batch; b >= 1; b /= 2) batches.push_back(b);
  std::vector<Recompute> recomputes = {base.recompute};
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    // Selective recompute only drops attention scores, which flash attention never keeps.
    if (r == Recompute::kSelective && m.flash_attention) continue;
    if (r != base.recompute) recomputes.push_back(r);
  }
  std::vector<int> zeros = {base.zero};
  if (base.dp >= 2) {
    for (int z = base.zero + 1; z <= 3; ++z) zeros.push_back(z);
  }
  std::vector<int> tps = {base.tp};
  if (m.impl == Implementation::kMegatron || base.tp > 1) {
    for (int t = base.tp * 2; t <= kGpusPerNode; t *= 2) {
      if (m.heads % t == 0) tps.push_back(t);
    }
  }
  std::vector<Candidate> out;
  for (int64_t b : batches) {
    for (Recompute r : recomputes) {
      for (int z : zeros) {
        for (int t : tps) {
          for (int off = 0; off < 4; ++off) {
            PlanOptions o = base;
            o.micro_batch = b;
            o.recompute = r;
            o.zero = z;
            o.tp = t;
            o.offload_activations = base.offload_activations || (off & 1);
            o.offload_optimizer = base.offload_optimizer || (off & 2);
            if ((off & 1) && base.offload_activations) continue;
            if ((off & 2) && base.offload_optimizer) continue;
            auto plan = ComputePlan(m, o);
            if (!plan.ok() || plan->total_bytes > capacity_bytes) continue;
            out.push_back({o, plan->peak_allocated, plan->total_bytes, RelativeStepTime(m, base, o),
                           DescribeChanges(base, o)});
          }
        }
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.relative_time != b.relative_time) return a.relative_time < b.relative_time;
    if (a.total_bytes != b.total_bytes) return a.total_bytes > b.total_bytes;  // larger batch first
    if (a.changes.size() != b.changes.size()) return a.changes.size() < b.changes.size();
    return a.changes < b.changes;
  });
  // A change that neither saves memory nor costs time is noise: keep the simplest.
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Candidate& a, const Candidate& b) {
                          return a.relative_time == b.relative_time &&
                                 a.total_bytes == b.total_bytes;
                        }),
            out.end());
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<std::string> BestPracticeWarnings(const ModelSpec& m, const PlanOptions& o,
                                              const Plan& plan) {
  std::vector<std::string> w;
  if (o.tp > kGpusPerNode) {
    w.push_back("TP " + FormatCount(o.tp) +
                " spans nodes: keep tensor parallelism within a node "
                "(<= 8 GPUs on NVLink); use PP or DP across nodes");
  }
  if (o.pp > 1 && o.pp >= o.tp && o.pp >= o.dp) {
    w.push_back("PP " + FormatCount(o.pp) + " is not smaller than TP (" + FormatCount(o.tp) +
                ") or DP (" + FormatCount(o.dp) +
                "): pipeline bubbles grow with stages; prefer more TP (within a node) or DP");
  }
  if (o.cp > 1 && o.seq_len < 4096) {
    w.push_back("CP " + FormatCount(o.cp) + " with sequences of " + FormatCount(o.seq_len) +
                " tokens: context parallelism pays off from about 4k tokens");
  }
  if (o.cp == 1 && o.seq_len >= 8192 && o.tp * o.pp > 1) {
    w.push_back("sequences of " + FormatCount(o.seq_len) +
                " tokens: consider context parallelism (--cp 2) before more TP");
  }
  if (o.vpp > 1 && (m.layers / o.pp) % o.vpp != 0) {
    w.push_back("--vpp " + FormatCount(o.vpp) + " does not divide the " +
                FormatCount(m.layers / o.pp) + " layers per stage");
  }
  if (o.sequence_parallel && o.tp == 1) {
    w.push_back("--sequence-parallel has no effect without tensor parallelism (--tp >= 2)");
  }
  if (o.tp > 1 && !o.sequence_parallel && m.impl == Implementation::kMegatron) {
    w.push_back("TP " + FormatCount(o.tp) +
                " without --sequence-parallel keeps the layer norms' "
                "and dropouts' activations whole on every GPU");
  }
  if (o.cuda_graphs) {
    w.push_back(
        "CUDA graphs: capture after >= 10 warm-up iterations (allocator and autotuning "
        "settle first); a graph keeps its memory pool, not counted here");
  }
  if (o.gpu_mem_gib > 0 && plan.total_bytes > o.gpu_mem_gib * 1073741824.0) {
    w.push_back("does not fit: needs " + FormatBytes(plan.total_bytes) + " of " +
                FormatFixed(o.gpu_mem_gib, 0) + " GiB");
  }
  return w;
}

}  // namespace stepscope::plan
