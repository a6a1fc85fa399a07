// stepscope mfu: model FLOPs utilization per step, achieved FLOP/s per kernel
// class, the median step's top kernels under the roofline (analysis/mfu.h,
// docs/flops.md).
#include <cstdio>

#include "analysis/model/multi_trace.h"
#include "cli/commands.h"
#include "cli/mfu_flags.h"

namespace stepscope {
namespace {

constexpr const char* kCmd = "mfu";

struct MfuOut {
  std::string text;  // the MFU line, with the trace's name
  Table summary, steps, classes, top;
  int64_t class_step = -1;
  bool measured = false;
};

std::string ClassNote(const MfuOut& o, bool has_model) {
  std::string n = "Kernels launched in step " + std::to_string(o.class_step) +
                  " (the steady step nearest the median). Model: the model's FLOPs of the "
                  "class over its kernels' GPU time";
  if (!has_model) n += " (give --model)";
  n += ". Measured: stepscope roofline counters";
  if (!o.measured) n += " (none in this trace: stepscope roofline --from TRACE -- COMMAND)";
  return n + ". Of Peak: of the MFU peak.";
}

void DeclareFlags(ArgParser* p) {
  AddPlanFlags(p, false);
  p->Flag("--ceilings", "FILE",
          "this machine's stepscope bench results: the peak is the measured one when the file "
          "has this GPU (default ~/.cache/stepscope/ceilings.json; else the datasheet)");
  AddStepFlags(p);
  p->Flag("--device", "D", "the GPU whose steps and peak count (default: the busiest)");
  AddOutputFlags(p);
  p->Epilog(
      "examples:\n"
      "  stepscope mfu --model config.json --micro-batch 8 --seq-len 1024 run.sqlite\n"
      "  stepscope mfu --model train_gpt_small.json --micro-batch 8 --seq-len 512 "
      "--timeunit ms run.sqlite\n"
      "  stepscope mfu --model config.json --micro-batch 8 --seq-len 512 --lora-rank 16 "
      "--lora-targets q_proj,v_proj --dtype amp-bf16 run.sqlite\n"
      "  stepscope mfu --model megatron.args run.sqlite         # batch, sequence from the file\n"
      "  stepscope mfu run.sqlite         # FLOPs from stored stepscope roofline counters\n"
      "  stepscope mfu --format json --model config.json --micro-batch 4 --seq-len 2048 "
      "run.sqlite");
}

}  // namespace

int RunMfu(int argc, char** argv) {
  ArgParser p(kCmd, "[options] TRACE...",
              "Model FLOPs utilization (MFU) of each training step: the model's FLOPs per step\n"
              "(--model: a Hugging Face config.json or Megatron argument file, with\n"
              "--micro-batch and --seq-len; counted as Narayanan et al. 2021, eq. 3: forward,\n"
              "backward twice the forward, recomputation) over the step time and this GPU's\n"
              "peak for the dtype (measured by stepscope bench when the ceilings file has the\n"
              "GPU, else the datasheet). Without --model, the FLOPs that stepscope roofline\n"
              "counters measured for the step's top kernels (a lower bound). Then the median\n"
              "step's kernel time per class (GEMM, attention, elementwise, optimizer,\n"
              "communication) with the FLOP/s each achieved, and its top-5 kernels with their\n"
              "roofline position. Formula, sources, peaks: docs/flops.md.");
  DeclareFlags(&p);
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputSpec output;
  int jobs = 0;
  ScopeSpec spec;
  Status st = ParseOutputFlags(p, &output, &jobs);
  if (st.ok()) st = ParseScopeSpec(p, &spec);
  MfuOptions base;
  if (st.ok() && p.Has("--model")) st = ParseMfuModel(p, &base);
  if (st.ok() && p.positionals().empty())
    st = InvalidInput("no trace given; usage: stepscope mfu [options] TRACE...");
  if (!st.ok()) return ReportError(kCmd, st);
  base.device = spec.device;
  StepOptions so;
  so.range_regex = spec.step_regex;
  so.device = spec.device;
  const bool many = p.positionals().size() > 1;
  auto res = ForEachTrace<MfuOut>(
      p.positionals(), jobs, [&](const TraceModel& m, size_t index) -> StatusOr<MfuOut> {
        ASSIGN_OR_RETURN(StepSet set, DetectSteps(m, so));
        MfuOptions o = base;
        ApplyMfuTrace(p, m, &o);
        const MfuReport r = ComputeMfu(m, set, o);
        MfuOut out;
        out.text = "trace " + m.path() + "\n" + MfuLine(r) + "\n";
        out.summary = MfuSummaryTable(r);
        out.steps = MfuStepTable(r);
        out.classes = MfuClassTable(r);
        out.top = MfuTopTable(r);
        out.class_step = r.median_step;
        out.measured = !o.measured.empty();
        if (many) {
          for (Table* t : {&out.summary, &out.steps, &out.classes, &out.top}) {
            AddTraceColumns(t, m, index);
          }
        }
        return out;
      });
  if (!res.ok()) return ReportError(kCmd, res.status());
  std::vector<NamedTable> tables = {
      {"mfu", "MFU of the median step", Table(), ""},
      {"mfu_steps", "MFU per step", Table(), ""},
      {"kernel_classes", "Kernel classes of the median step", Table(), ""},
      {"top_kernels", "Top-5 kernels of the median step, under the roofline", Table(), ""}};
  std::string prefix;
  for (const MfuOut& o : *res) {
    prefix += o.text;
    AppendRows(&tables[0].table, o.summary);
    AppendRows(&tables[1].table, o.steps);
    AppendRows(&tables[2].table, o.classes);
    AppendRows(&tables[3].table, o.top);
  }
  if (!many && !res->empty()) tables[2].note = ClassNote(res->front(), base.has_model);
  // The text view leads with the MFU line(s); the summary table repeats it.
  if (output.format == OutputFormat::kText) tables.erase(tables.begin());
  return EmitTables(kCmd, p, tables, output, prefix + "\n");
}

}  // namespace stepscope
