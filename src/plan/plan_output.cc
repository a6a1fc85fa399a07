#include "plan/plan_output.h"

#include <cstdio>

#include "common/json_value.h"
#include "common/strings.h"

namespace stepscope::plan {
namespace {

std::string Gib(int64_t bytes) { return FormatFixed(bytes / 1073741824.0, 2) + " GiB"; }

std::string Settings(const PlanOptions& o) {
  std::string s = "micro-batch " + FormatCount(o.micro_batch) + " x seq " + FormatCount(o.seq_len) +
                  "; " + PrecisionName(o.precision) + (o.master_weights ? " + fp32 master" : "") +
                  ", " + OptimizerName(o.optimizer);
  if (o.zero > 0) s += ", ZeRO-" + FormatCount(o.zero);
  s += "; tp " + FormatCount(o.tp) + " pp " + FormatCount(o.pp) + " dp " + FormatCount(o.dp) +
       " cp " + FormatCount(o.cp);
  if (o.ep > 1) s += " ep " + FormatCount(o.ep);
  if (o.vpp > 1) s += " vpp " + FormatCount(o.vpp);
  if (o.sequence_parallel) s += " +sp";
  s += "; recompute " + std::string(RecomputeName(o.recompute));
  if (o.offload_activations) s += ", offload activations";
  if (o.offload_optimizer) s += ", offload optimizer";
  if (o.lora_rank > 0)
    s += "; LoRA r=" + FormatCount(o.lora_rank) + " on " + Join(o.lora_targets, ",");
  return s;
}

}  // namespace

std::string RenderPlanText(const PlanReport& r) {
  const Plan& p = r.plan;
  const ModelSpec& m = p.model;
  std::string out;
  out += "model: " + m.model_type + " (" + m.source + "), " + FormatCount(m.layers) +
         " layers, hidden " + FormatCount(m.hidden) + ", " + FormatCount(m.heads) + " heads (" +
         FormatCount(m.kv_heads) + " kv), MLP " + FormatCount(m.ffn) + ", vocab " +
         FormatCount(m.vocab) + "\n";
  out += "parameters: " + FormatCount(p.parameters) + " (" + FormatCount(p.trainable_parameters) +
         " trainable); " +
         (m.impl == Implementation::kMegatron ? "Megatron-LM formulas" : "PyTorch eager") + "\n";
  out += "settings: " + Settings(p.options) + "\n";
  if (!p.stage.empty()) out += "per GPU of the " + p.stage + " (the larger)\n";
  out += "\n";
  char line[512];
  std::snprintf(line, sizeof(line), "%-12s %-34s %12s  %-4s %s\n", "group", "part", "bytes", "peak",
                "detail");
  out += line;
  for (const PlanPart& part : p.parts) {
    std::snprintf(line, sizeof(line), "%-12s %-34s %12s  %-4s %s\n", part.group.c_str(),
                  part.name.c_str(), FormatBytes(part.bytes).c_str(), part.at_peak ? "yes" : "-",
                  part.detail.c_str());
    out += line;
  }
  out += "\npeak allocated: " + Gib(p.peak_allocated) + " at the " + p.peak_moment +
         " (what torch.cuda.max_memory_allocated would report)\n";
  out += "total per GPU:  " + Gib(p.total_bytes) + " (+ allocator slack " + Gib(p.allocator_slack) +
         ", CUDA context " + Gib(p.cuda_context) + ")\n";
  if (r.has_capacity) {
    bool fits = p.total_bytes <= r.capacity_bytes;
    out += "GPU memory:     " + Gib(r.capacity_bytes) + ": " +
           (fits ? "fits, " + Gib(r.capacity_bytes - p.total_bytes) + " to spare"
                 : "does NOT fit, " + Gib(p.total_bytes - r.capacity_bytes) + " short") +
           "\n";
    out += "\nsettings that fit, fastest first (step-time estimates, docs/plan.md):\n";
    if (r.candidates.empty()) out += "  none of the tried changes fits\n";
    for (const Candidate& c : r.candidates) {
      std::snprintf(line, sizeof(line), "  %-10s %5.2fx step time  %s\n",
                    Gib(c.total_bytes).c_str(), c.relative_time,
                    c.changes.empty() ? "(as given)" : c.changes.c_str());
      out += line;
    }
  }
  if (!r.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const std::string& w : r.warnings) out += "  - " + w + "\n";
  }
  return out;
}

std::string RenderPlanJson(const PlanReport& r) {
  const Plan& p = r.plan;
  const ModelSpec& m = p.model;
  const PlanOptions& o = p.options;
  JsonValue model = JsonValue::Object();
  model.Set("source", JsonValue::String(m.source));
  model.Set("model_type", JsonValue::String(m.model_type));
  model.Set("implementation",
            JsonValue::String(m.impl == Implementation::kMegatron ? "megatron" : "eager"));
  model.Set("layers", JsonValue::Int(m.layers));
  model.Set("hidden", JsonValue::Int(m.hidden));
  model.Set("heads", JsonValue::Int(m.heads));
  model.Set("kv_heads", JsonValue::Int(m.kv_heads));
  model.Set("ffn", JsonValue::Int(m.ffn));
  model.Set("vocab", JsonValue::Int(m.vocab));
  model.Set("parameters", JsonValue::Int(p.parameters));
  model.Set("trainable_parameters", JsonValue::Int(p.trainable_parameters));
  JsonValue opts = JsonValue::Object();
  opts.Set("micro_batch", JsonValue::Int(o.micro_batch));
  opts.Set("seq_len", JsonValue::Int(o.seq_len));
  opts.Set("dtype", JsonValue::String(PrecisionName(o.precision)));
  opts.Set("master_weights", JsonValue::Bool(o.master_weights));
  opts.Set("optimizer", JsonValue::String(OptimizerName(o.optimizer)));
  opts.Set("zero", JsonValue::Int(o.zero));
  for (auto [k, v] : {std::pair{"tp", o.tp},
                      {"pp", o.pp},
                      {"dp", o.dp},
                      {"cp", o.cp},
                      {"ep", o.ep},
                      {"vpp", o.vpp}}) {
    opts.Set(k, JsonValue::Int(v));
  }
  opts.Set("sequence_parallel", JsonValue::Bool(o.sequence_parallel));
  opts.Set("recompute", JsonValue::String(RecomputeName(o.recompute)));
  opts.Set("offload_activations", JsonValue::Bool(o.offload_activations));
  opts.Set("offload_optimizer", JsonValue::Bool(o.offload_optimizer));
  opts.Set("lora_rank", JsonValue::Int(o.lora_rank));
  JsonValue parts = JsonValue::Array();
  for (const PlanPart& part : p.parts) {
    JsonValue j = JsonValue::Object();
    j.Set("group", JsonValue::String(part.group));
    j.Set("name", JsonValue::String(part.name));
    j.Set("bytes", JsonValue::Int(part.bytes));
    j.Set("at_peak", JsonValue::Bool(part.at_peak));
    j.Set("detail", JsonValue::String(part.detail));
    parts.Append(std::move(j));
  }
  JsonValue root = JsonValue::Object();
  root.Set("model", std::move(model));
  root.Set("options", std::move(opts));
  if (!p.stage.empty()) root.Set("stage", JsonValue::String(p.stage));
  root.Set("parts", std::move(parts));
  root.Set("peak_moment", JsonValue::String(p.peak_moment));
  root.Set("peak_allocated_bytes", JsonValue::Int(p.peak_allocated));
  root.Set("allocator_slack_bytes", JsonValue::Int(p.allocator_slack));
  root.Set("cuda_context_bytes", JsonValue::Int(p.cuda_context));
  root.Set("total_bytes", JsonValue::Int(p.total_bytes));
  if (r.has_capacity) {
    root.Set("gpu_mem_bytes", JsonValue::Int(r.capacity_bytes));
    root.Set("fits", JsonValue::Bool(p.total_bytes <= r.capacity_bytes));
    JsonValue cands = JsonValue::Array();
    for (const Candidate& c : r.candidates) {
      JsonValue j = JsonValue::Object();
      j.Set("changes", JsonValue::String(c.changes));
      j.Set("micro_batch", JsonValue::Int(c.options.micro_batch));
      j.Set("recompute", JsonValue::String(RecomputeName(c.options.recompute)));
      j.Set("zero", JsonValue::Int(c.options.zero));
      j.Set("tp", JsonValue::Int(c.options.tp));
      j.Set("offload_activations", JsonValue::Bool(c.options.offload_activations));
      j.Set("offload_optimizer", JsonValue::Bool(c.options.offload_optimizer));
      j.Set("total_bytes", JsonValue::Int(c.total_bytes));
      j.Set("relative_step_time", JsonValue::Double(c.relative_time));
      cands.Append(std::move(j));
    }
    root.Set("fitting", std::move(cands));
  }
  JsonValue warns = JsonValue::Array();
  for (const std::string& w : r.warnings) warns.Append(JsonValue::String(w));
  root.Set("warnings", std::move(warns));
  return root.Dump() + "\n";
}

}  // namespace stepscope::plan
