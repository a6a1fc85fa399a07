// stepscope steps: the per-step view.
#include <cstdio>

#include "analysis/model/multi_trace.h"
#include "analysis/model/steps.h"
#include "cli/analysis_flags.h"
#include "cli/commands.h"
#include "cli/mfu_flags.h"

namespace stepscope {
namespace {

std::string ShortName(const std::string& name) { return std::string(KernelBaseName(name)); }

double Pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

int RunSteps(int argc, char** argv) {
  ArgParser p(
      "steps", "[options] TRACE...",
      "Detect the training steps and show each one: duration, GPU busy %, the split of\n"
      "the step into compute / communication (NCCL) / memory (memcpy, memset) / idle\n"
      "(Holistic Trace Analysis' temporal breakdown), the top kernel, and the variation\n"
      "across steps. Steps are NVTX ranges 'step N' (or 'ProfilerStep#N', or --step-range),\n"
      "else a repeating kernel sequence. A step spans from the end of the previous step's\n"
      "GPU work to the end of its own, so time the GPU waited for the step's input counts\n"
      "in the step. Details: docs/recipes.md#steps.");
  p.Switch("--kernels", "also list the top-5 kernels of every step");
  AddStepFlags(&p);
  p.Flag("--device", "D", "breakdown of device D only (default: all devices together)");
  AddOutputFlags(&p);
  AddPlanFlags(&p, false);  // --model ...: an MFU column (docs/flops.md)
  p.Flag("--ceilings", "FILE",
         "with --model: this machine's stepscope bench results for the MFU peak (default "
         "~/.cache/stepscope/ceilings.json; else the datasheet)");
  p.Epilog(
      "examples:\n"
      "  stepscope steps run.sqlite\n"
      "  stepscope steps --kernels --format csv run.sqlite\n"
      "  stepscope steps --timeunit ms run.sqlite\n"
      "  stepscope steps --step-range '^train_step' run.sqlite\n"
      "  stepscope steps --model config.json --micro-batch 8 --seq-len 1024 run.sqlite  # + MFU\n"
      "  stepscope steps rank0.sqlite rank1.sqlite");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputSpec output;
  int jobs = 0;
  ScopeSpec spec;
  Status st = ParseOutputFlags(p, &output, &jobs);
  if (st.ok()) st = ParseScopeSpec(p, &spec);
  if (st.ok() && p.positionals().empty())
    st = InvalidInput("no trace given; usage: stepscope steps [options] TRACE...");
  MfuOptions mfu_opt;
  if (st.ok() && p.Has("--model")) st = ParseMfuModel(p, &mfu_opt);
  if (!st.ok()) return ReportError("steps", st);
  StepOptions so;
  so.range_regex = spec.step_regex;
  so.device = spec.device;
  const bool many = p.positionals().size() > 1;
  const bool kernels = p.Has("--kernels");
  struct Out {
    Table steps, summary, kernels;
  };
  auto res = ForEachTrace<Out>(
      p.positionals(), jobs, [&](const TraceModel& m, size_t index) -> StatusOr<Out> {
        ASSIGN_OR_RETURN(StepSet set, DetectSteps(m, so));
        Out o;
        std::vector<Cell> mfu;  // per step, with --model
        if (mfu_opt.has_model) {
          MfuOptions mo = mfu_opt;
          mo.device = spec.device;
          ApplyMfuTrace(p, m, &mo);
          for (const MfuStep& ms : ComputeMfu(m, set, mo).steps) {
            mfu.push_back(ms.mfu_pct > 0 ? Cell(ms.mfu_pct, 1) : Cell(""));
          }
        }
        o.steps = Table({{"step", "Step", true},
                         {"start_ns", "Start (ns)", true},
                         {"duration_ns", "Duration (ns)", true},
                         {"vs_median_pct", "vs Median (%)", true},
                         {"gpu_busy_pct", "GPU Busy (%)", true},
                         {"compute_pct", "Compute (%)", true},
                         {"communication_pct", "Comm (%)", true},
                         {"memory_pct", "Memory (%)", true},
                         {"idle_pct", "Idle (%)", true},
                         {"gpu_ops", "GPU Ops", true},
                         {"status", "Status", false},
                         {"top_kernel", "Top Kernel", false, 60}});
        if (!mfu.empty()) o.steps.AddColumn({"mfu_pct", "MFU (%)", true});
        const double median = set.stats.median;
        for (size_t i = 0; i < set.steps.size(); ++i) {
          const Step& s = set.steps[i];
          const Breakdown& b = s.breakdown;
          const int64_t d = s.duration();
          std::vector<Cell> row = {
              Cell(s.number),
              Cell(s.start_ns - m.origin_ns()),
              Cell(d),
              median > 0 ? Cell(100.0 * (d - median) / median, 1) : Cell(""),
              Cell(Pct(b.busy, b.span), 1),
              Cell(Pct(b.compute, b.span), 1),
              Cell(Pct(b.communication, b.span), 1),
              Cell(Pct(b.memory, b.span), 1),
              Cell(Pct(b.idle, b.span), 1),
              Cell(s.gpu_ops),
              s.status(),
              s.top_kernels.empty() ? "" : ShortName(m.String(s.top_kernels[0].name))};
          if (i < mfu.size()) row.push_back(mfu[i]);
          o.steps.AddRow(std::move(row));
          if (kernels) {
            if (o.kernels.columns().empty()) {
              o.kernels = Table({{"step", "Step", true},
                                 {"rank_in_step", "#", true},
                                 {"total_ns", "Total (ns)", true},
                                 {"count", "Count", true},
                                 {"step_pct", "Of Step (%)", true},
                                 {"name", "Name", false}});
            }
            for (size_t k = 0; k < s.top_kernels.size(); ++k) {
              const StepKernel& sk = s.top_kernels[k];
              o.kernels.AddRow({Cell(s.number), Cell(static_cast<int64_t>(k + 1)),
                                Cell(sk.total_ns), Cell(sk.count), Cell(Pct(sk.total_ns, d), 1),
                                m.String(sk.name)});
            }
          }
        }
        const DurationStats& ds = set.stats;
        o.summary = Table({{"method", "Method", false},
                           {"pattern", "Pattern", false},
                           {"steps", "Steps", true},
                           {"steady", "Steady", true},
                           {"median_ns", "Median (ns)", true},
                           {"mean_ns", "Mean (ns)", true},
                           {"min_ns", "Min (ns)", true},
                           {"max_ns", "Max (ns)", true},
                           {"stddev_ns", "StdDev (ns)", true},
                           {"cv_pct", "CV (%)", true}});
        o.summary.AddRow({set.method.empty() ? "none" : set.method, set.pattern,
                          Cell(static_cast<int64_t>(set.steps.size())), Cell(ds.count),
                          Cell(ds.median, 1), Cell(ds.mean, 1), Cell(ds.min), Cell(ds.max),
                          Cell(ds.stddev, 1),
                          Cell(ds.mean > 0 ? 100.0 * ds.stddev / ds.mean : 0.0, 1)});
        if (many) {
          AddTraceColumns(&o.steps, m, index);
          AddTraceColumns(&o.summary, m, index);
          if (kernels && !o.kernels.columns().empty()) AddTraceColumns(&o.kernels, m, index);
        }
        return o;
      });
  if (!res.ok()) return ReportError("steps", res.status());
  std::vector<NamedTable> out(3);
  out[0] = {"steps", "Steps", Table(), ""};
  out[1] = {"step_summary", "Step time across steady steps (complete, not warm-up)", Table(), ""};
  out[2] = {"step_kernels", "Top-5 kernels per step", Table(), ""};
  for (const Out& o : *res) {
    AppendRows(&out[0].table, o.steps);
    AppendRows(&out[1].table, o.summary);
    if (kernels) AppendRows(&out[2].table, o.kernels);
  }
  if (!kernels) out.pop_back();
  return EmitTables("steps", p, out, output);
}

}  // namespace stepscope
