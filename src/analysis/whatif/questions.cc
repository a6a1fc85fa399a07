#include "analysis/whatif/questions.h"

#include "analysis/whatif/pricing.h"
#include "common/strings.h"

namespace stepscope {

using whatif::Graph;

WhatifAnswer WhatifQuestions::RemoveSync(const std::string& name, const std::string& in) const {
  auto in_range = [&](uint32_t api) {
    if (in.empty()) return true;
    for (uint32_t r = m.api_range()[api]; r != kNone; r = m.nvtx_parent()[r]) {
      if (m.String(m.nvtx()[r].name) == in) return true;
    }
    return false;
  };
  const Graph& g = e.graph();
  std::vector<uint32_t> calls;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const whatif::Node& x = g.nodes[n];
    if (x.kind != whatif::NodeKind::kCall || x.block == whatif::BlockKind::kNone) continue;
    if (!Steady(x.step) || !in_range(x.index)) continue;
    if (name != "all" && m.ApiName(x.index) != name) continue;
    calls.push_back(n);
  }
  return {"remove sync " + name + (in.empty() ? "" : " in " + in),
          e.Price([&](Graph* x) { return whatif::RemoveWaits(x, calls); }),
          std::to_string(calls.size()) + " calls"};
}

WhatifAnswer WhatifQuestions::RuleFix(const std::string& rule, const std::string& question) const {
  const Finding* f = nullptr;
  for (const Finding& x : a.findings) {
    if (x.rule == rule && x.step_before_ns > 0) {
      f = &x;
      break;
    }
  }
  WhatifAnswer ans{question, {}, f ? f->whatif : "no " + rule + " finding in this trace"};
  ans.p.measured_ns = e.measured().median;
  ans.p.base_ns = e.base().median;
  ans.p.fixed_ns = f ? f->step_after_ns : e.base().median;
  return ans;
}

std::vector<uint32_t> WhatifQuestions::Copies(bool pageable) const {
  const Graph& g = e.graph();
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kMemcpy || g.op_node[i] == kNone) continue;
    if (!Steady(g.nodes[g.op_node[i]].step)) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    if (r.copy_kind != CopyKind::kHostToDevice && r.copy_kind != CopyKind::kDeviceToHost) continue;
    if (IsPageableCopy(r) == pageable) v.push_back(g.op_node[i]);
  }
  return v;
}

WhatifAnswer WhatifQuestions::PinCopies() const {
  std::vector<uint32_t> rows;  // gpu_ops rows
  for (uint32_t v : Copies(true)) rows.push_back(e.graph().nodes[v].index);
  std::string what;
  const std::vector<whatif::PinnedCopy> copies =
      PinnedCopiesOf(m, e.graph(), rows, a.machine, PageableUploadSyncs(m), &what);
  return {"pinned copies", e.Price([&](Graph* x) { return whatif::PinCopies(x, copies); }),
          std::to_string(rows.size()) + " pageable copies" + (rows.empty() ? "" : ": " + what)};
}

WhatifAnswer WhatifQuestions::SideStream() const {
  const std::vector<uint32_t> ops = Copies(false);
  return {"copies on a side stream", e.Price([&](Graph* x) { return whatif::SideStream(x, ops); }),
          std::to_string(ops.size()) + " copies"};
}

WhatifAnswer WhatifQuestions::NoCopies() const {
  const std::vector<uint32_t> ops = Copies(false);
  return {"no host<->device copies", e.Price([&](Graph* x) { return whatif::RemoveOps(x, ops); }),
          std::to_string(ops.size()) + " copies"};
}

WhatifAnswer WhatifQuestions::CudaGraphs(const std::string& range) const {
  std::vector<whatif::HostSpan> spans;
  for (uint32_t r = 0; r < m.nvtx().size(); ++r) {
    const NvtxRecord& x = m.nvtx()[r];
    const bool step_range = range == "steps" && [&] {
      for (const Step& st : a.steps.steps) {
        if (st.nvtx == r) return true;
      }
      return false;
    }();
    if (x.kind != NvtxKind::kPushPop || (m.String(x.name) != range && !step_range)) continue;
    const int s = a.steps.AtHostTime(x.start_ns);
    if (s >= 0 && a.steps.steps[s].steady()) spans.push_back({x.tid, x.start_ns, m.RangeEnd(r)});
  }
  return {"CUDA graphs over " + range,
          e.Price([&](Graph* x) { return whatif::CudaGraph(x, spans, 20'000); }),
          std::to_string(spans.size()) + " range instances"};
}

WhatifAnswer WhatifQuestions::LargerBatch(double n) const {
  size_t bursts = 0;
  WhatifAnswer ans{FormatFixed(n, 2) + "x batch",
                   PriceLargerBatch(e, a.steps, a.findings, n, &bursts), ""};
  ans.note = LargerBatchNote(ans.p, n, 2, bursts);
  return ans;
}

}  // namespace stepscope
