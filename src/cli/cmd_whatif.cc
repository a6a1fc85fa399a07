// stepscope whatif: replay a trace's steps with a fix applied (docs/whatif.md).
#include <cstdio>
#include <set>

#include "analysis/rules.h"
#include "analysis/whatif/pricing.h"
#include "analysis/whatif/transforms.h"
#include "cli/analysis_flags.h"
#include "cli/commands.h"

namespace stepscope {
namespace {

using whatif::Graph;
using whatif::HostSpan;
using whatif::Prediction;

struct Answer {
  std::string question;
  Prediction p;
  std::string note;
};

std::string Ms(int64_t ns) { return FormatFixed(ns / 1e6, 2); }

// The priced finding of `rule` (analyze's own what-if), or nullptr.
const Finding* FindingOf(const Analysis& a, const std::string& rule) {
  for (const Finding& f : a.findings) {
    if (f.rule == rule && f.step_before_ns > 0) return &f;
  }
  return nullptr;
}

}  // namespace

int RunWhatif(int argc, char** argv) {
  ArgParser p("whatif", "[options] TRACE",
              "Replay the steady steps of a trace as a dependency graph (host threads, GPU\n"
              "streams, launches, synchronizations) and answer 'what if': the median step as\n"
              "measured, as replayed, and with each asked-for change applied. Without a\n"
              "question it prints the replay's fidelity and the critical path. docs/whatif.md.");
  p.Flag("--remove-sync", "NAME",
         "the host no longer waits in blocking calls named NAME (e.g. cudaStreamSynchronize; "
         "'all': every blocking call), in the steady steps");
  p.Flag("--in", "RANGE", "with --remove-sync: only calls inside NVTX ranges named RANGE");
  p.Switch("--prefetch", "data loading overlapped with the previous step");
  p.Switch("--pin", "pinned instead of pageable copies");
  p.Switch("--side-stream", "host<->device copies on a side stream (their data dependencies kept)");
  p.Switch("--no-copies", "without the host<->device copies of the steps (offload avoided)");
  p.Switch("--tensor-cores", "bf16 tensor-core GEMMs instead of fp32/TF32");
  p.Switch("--no-recompute",
           "activation checkpointing off: without the recomputed forward (the recompute finding)");
  p.Flag("--graph", "RANGE",
         "CUDA graphs over every instance of the NVTX range RANGE ('steps': the step ranges)");
  p.Flag("--batch", "N",
         "N times the batch: GPU time x N, host time unchanged (but the CPU's "
         "unified-memory fault bursts, x N)");
  p.Switch("--steps", "list every step: measured and simulated duration");
  AddStepFlags(&p);
  p.Flag("--device", "D", "the device whose steps are timed (default: the busiest)");
  AddPricingFlags(&p);
  AddUntracedFlag(&p);
  p.TableOutput("write to FILE instead of stdout");
  p.Epilog(
      "examples:\n"
      "  stepscope whatif run.sqlite\n"
      "  stepscope whatif --remove-sync cudaStreamSynchronize --in loss.item run.sqlite\n"
      "  stepscope whatif --prefetch --batch 4 --format json run.sqlite");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputSpec output;
  Status st = ParseOutputFlags(p, &output, nullptr);
  AnalyzeOptions opt;
  opt.all = true;
  int64_t v = 0;
  if (st.ok() && p.Has("--device")) {
    if (!ParseInt64(p.Get("--device"), &v) || v < 0) {
      st = InvalidInput("--device '" + p.Get("--device") + "': expected a device number");
    }
    opt.device = static_cast<int>(v);
  }
  double batch = 0;
  if (st.ok() && p.Has("--batch") && (!ParseDouble(p.Get("--batch"), &batch) || batch <= 0)) {
    st = InvalidInput("--batch '" + p.Get("--batch") + "': expected a factor > 0, e.g. 4");
  }
  if (st.ok()) st = ParsePricingFlags(p, &opt);
  if (st.ok()) st = ParseUntracedFlag(p, &opt);
  if (st.ok() && p.positionals().size() != 1)
    st = InvalidInput("expected one trace; usage: stepscope whatif [options] TRACE");
  if (!st.ok()) return ReportError("whatif", st);
  opt.steps.range_regex = p.Get("--step-range");
  auto model = LoadTrace(p.positionals()[0]);
  if (!model.ok()) return ReportError("whatif", model.status());
  const TraceModel& m = **model;
  ApplyCeilings(m, &opt);
  auto analysis = Analyze(m, opt);
  if (!analysis.ok()) return ReportError("whatif", analysis.status());
  const Analysis& a = *analysis;
  if (a.device < 0 || a.steps.steps.empty()) {
    return ReportError("whatif",
                       InvalidInput(m.path() + ": no steps with GPU work to replay; see 'stepscope "
                                               "steps' (--step-range REGEX names the steps)"));
  }
  auto engine = whatif::WhatIfEngine::Build(m, a.steps, a.device, opt.untraced_step_ns);
  if (!engine.ok()) return ReportError("whatif", engine.status());
  const whatif::WhatIfEngine& e = *engine;
  const Graph& g = e.graph();
  auto steady = [&](int32_t s) { return s >= 0 && a.steps.steps[s].steady(); };

  std::vector<Answer> answers;
  const std::string in = p.Get("--in");
  auto in_range = [&](uint32_t api) {
    if (in.empty()) return true;
    for (uint32_t r = m.api_range()[api]; r != kNone; r = m.nvtx_parent()[r]) {
      if (m.String(m.nvtx()[r].name) == in) return true;
    }
    return false;
  };
  if (p.Has("--remove-sync")) {
    const std::string name = p.Get("--remove-sync");
    std::vector<uint32_t> calls;
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const whatif::Node& x = g.nodes[n];
      if (x.kind != whatif::NodeKind::kCall || x.block == whatif::BlockKind::kNone) continue;
      if (!steady(x.step) || !in_range(x.index)) continue;
      if (name != "all" && m.ApiName(x.index) != name) continue;
      calls.push_back(n);
    }
    answers.push_back({"remove sync " + name + (in.empty() ? "" : " in " + in),
                       e.Price([&](Graph* x) { return whatif::RemoveWaits(x, calls); }),
                       std::to_string(calls.size()) + " calls"});
  }
  auto from_finding = [&](const char* rule, const std::string& q) {
    const Finding* f = FindingOf(a, rule);
    Answer ans{q, {}, f ? f->whatif : "no " + std::string(rule) + " finding in this trace"};
    ans.p.measured_ns = e.measured().median;
    ans.p.base_ns = e.base().median;
    ans.p.fixed_ns = f ? f->step_after_ns : e.base().median;
    answers.push_back(ans);
  };
  if (p.Has("--prefetch")) from_finding("data_loading", "prefetch data");
  if (p.Has("--tensor-cores")) from_finding("fp32_gemm", "tensor cores");
  if (p.Has("--no-recompute")) from_finding("recompute", "no recomputation");
  std::vector<uint32_t> copies, pageable;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kMemcpy || g.op_node[i] == kNone) continue;
    if (!steady(g.nodes[g.op_node[i]].step)) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    if (r.copy_kind != CopyKind::kHostToDevice && r.copy_kind != CopyKind::kDeviceToHost) continue;
    const bool pg = r.src_kind == MemoryKind::kPageable || r.dst_kind == MemoryKind::kPageable;
    (pg ? pageable : copies).push_back(g.op_node[i]);
  }
  if (p.Has("--pin")) {
    answers.push_back({"pinned copies",
                       e.Price([&](Graph* x) { return whatif::PinCopies(x, pageable, 2.0); }),
                       std::to_string(pageable.size()) + " pageable copies"});
  }
  if (p.Has("--side-stream")) {
    answers.push_back({"copies on a side stream",
                       e.Price([&](Graph* x) { return whatif::SideStream(x, copies); }),
                       std::to_string(copies.size()) + " copies"});
  }
  if (p.Has("--no-copies")) {
    answers.push_back({"no host<->device copies",
                       e.Price([&](Graph* x) { return whatif::RemoveOps(x, copies); }),
                       std::to_string(copies.size()) + " copies"});
  }
  if (p.Has("--graph")) {
    const std::string range = p.Get("--graph");
    std::vector<HostSpan> spans;
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
    answers.push_back({"CUDA graphs over " + range,
                       e.Price([&](Graph* x) { return whatif::CudaGraph(x, spans, 20'000); }),
                       std::to_string(spans.size()) + " range instances"});
  }
  if (batch > 0) {
    // As host_bound prices it (the CPU's unified-memory fault bursts grow with the batch).
    size_t bursts = 0;
    Answer ans{FormatFixed(batch, 2) + "x batch",
               PriceLargerBatch(e, a.steps, a.findings, batch, &bursts), ""};
    ans.note = FormatFixed(ans.p.base_ns > 0 ? 1.0 * ans.p.fixed_ns / ans.p.base_ns : 0, 2) +
               "x the time for " + FormatFixed(batch, 2) + "x the samples" +
               (bursts == 0 ? std::string()
                            : "; the " + std::to_string(bursts) +
                                  " CPU fault bursts of managed memory grow with it");
    answers.push_back(ans);
  }

  Table t({{"question", "Question", false},
           {"measured_ns", "Measured Step (ns)", true},
           {"simulated_ns", "Simulated Step (ns)", true},
           {"if_fixed_ns", "If Fixed (ns)", true},
           {"saving_ns", "Saving (ns)", true},
           {"speedup", "Speedup", true},
           {"note", "Note", false}});
  const bool scaled = opt.untraced_step_ns > 0;
  t.AddRow({scaled ? "(at the untraced host speed)" : "(as traced)", Cell(e.measured().median),
            Cell(e.base().median), Cell(e.base().median), Cell(int64_t{0}), Cell(1.0, 3),
            a.critical_path});
  for (const Answer& x : answers) {
    t.AddRow({x.question, Cell(x.p.measured_ns), Cell(x.p.base_ns), Cell(x.p.fixed_ns),
              Cell(x.p.saving_ns()), Cell(x.p.speedup(), 3), x.note});
  }
  if (output.format != OutputFormat::kText) {
    return EmitTables("whatif", p, {{"whatif", "What if", t, ""}}, output);
  }
  std::string s = "trace " + m.path() + "\n";
  const int64_t me = e.measured().median, si = e.base().median;
  const int64_t tr = e.traced_base_median();
  s += "median step: " + Ms(me) + " ms measured, " + Ms(tr) + " ms replayed (" +
       FormatFixed(me > 0 ? 100.0 * (tr - me) / me : 0, 2) + "%)\n";
  if (scaled) {
    s += "untraced: step " + Ms(opt.untraced_step_ns) + " ms given, host time x" +
         FormatFixed(e.host_scale(), 3) + ": replayed " + Ms(si) +
         " ms; the answers below are priced at that host speed\n";
  }
  if (!a.critical_path.empty()) s += "critical path: " + a.critical_path + "\n";
  if (p.Has("--steps")) {
    s += std::string("steps (ms): number, measured, replayed") +
         (scaled ? " at the untraced host speed" : "") + "\n";
    for (size_t k = 0; k < a.steps.steps.size(); ++k) {
      if (e.base().duration[k] < 0) continue;
      s += "  " + std::to_string(a.steps.steps[k].number) + "  " + Ms(e.measured().duration[k]) +
           "  " + Ms(e.base().duration[k]) + (a.steps.steps[k].steady() ? "" : "  (not steady)") +
           "\n";
    }
  }
  for (const Answer& x : answers) {
    s += x.question + ": step " + Ms(x.p.base_ns) + " -> " + Ms(x.p.fixed_ns) + " ms (" +
         FormatFixed(x.p.speedup(), 2) + "x)" + (x.note.empty() ? "" : "; " + x.note) + "\n";
    if (!x.p.bound_after.empty()) s += "  then bound by " + x.p.bound_after + "\n";
  }
  return EmitText("whatif", p, s);
}

}  // namespace stepscope
