#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/plan_flags.h"
#include "common/table.h"
#include "plan/plan_output.h"
#include "plan/select.h"

namespace stepscope {

int RunPlan(int argc, char** argv) {
  ArgParser p("plan", "--model CONFIG --micro-batch N --seq-len N [options]",
              "Per-GPU memory of a decoder-only transformer training step, before the job runs: "
              "parameters, gradients, optimizer state, activations by part of the layer, logits "
              "and loss, workspace, and the total; with --gpu-mem, whether it fits and which "
              "settings do, fastest first. The model and its calibration: docs/plan.md.");
  AddPlanFlags(&p, true);
  p.TableOutput("write to FILE instead of stdout");
  p.Flag("--top", "N", "fitting settings listed with --gpu-mem", "8");
  p.Epilog(
      "examples:\n"
      "  stepscope plan --model llama/config.json --micro-batch 4 --seq-len 2048\n"
      "  stepscope plan --model config.json --micro-batch 8 --seq-len 4096 --gpu-mem 80   # "
      "does it fit an 80 GiB GPU; if not, which settings do\n"

      "  stepscope plan --model config.json --micro-batch 4 --seq-len 1024 --lora-rank 16 "
      "--lora-targets q_proj,v_proj\n"
      "  stepscope plan --model gpt2/config.json --micro-batch 8 --seq-len 1024 --dtype amp-bf16 "
      "--recompute full\n"
      "  stepscope plan --model megatron_args.txt --gpu-mem 80 --format json   # a Megatron "
      "argument file: its parallel sizes are the defaults\n"
      "  stepscope plan --model config.json --micro-batch 1 --seq-len 8192 --tp 8 --pp 4 --dp 16 "
      "--sequence-parallel --distributed-optimizer --master-weights --impl megatron");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (!p.positionals().empty()) {
    return ReportError("plan", InvalidInput("unexpected argument '" + p.positionals()[0] +
                                            "'; the model is given with --model CONFIG"));
  }
  OutputSpec output;
  if (Status st = p.ParseTableOutput(&output); !st.ok()) return ReportError("plan", st);
  const OutputFormat format = output.format;
  if (format == OutputFormat::kCsv) {
    return ReportError("plan",
                       InvalidInput("--format '" + p.Get("--format") + "': expected text or json"));
  }
  int64_t top = 8;
  if (!ParseInt64(p.Get("--top"), &top) || top < 0 || top > 1000) {
    return ReportError("plan", InvalidInput("--top '" + p.Get("--top") + "': expected 0-1000"));
  }
  plan::ModelSpec model;
  plan::PlanOptions options;
  if (Status st = ParsePlanFlags(p, &model, &options); !st.ok()) return ReportError("plan", st);
  auto computed = plan::ComputePlan(model, options);
  if (!computed.ok()) return ReportError("plan", computed.status());
  plan::PlanReport r;
  r.plan = std::move(computed).value();
  r.warnings = plan::BestPracticeWarnings(model, options, r.plan);
  if (options.gpu_mem_gib > 0) {
    r.has_capacity = true;
    r.capacity_bytes = static_cast<int64_t>(options.gpu_mem_gib * 1073741824.0);
    r.candidates =
        plan::FittingCandidates(model, options, r.capacity_bytes, static_cast<size_t>(top));
  }
  std::string out =
      format == OutputFormat::kJson ? plan::RenderPlanJson(r) : plan::RenderPlanText(r);
  return EmitText("plan", p, out);
}

}  // namespace stepscope
