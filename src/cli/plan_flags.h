// Flags that describe a training configuration for the memory planner:
// `stepscope plan`, and `analyze`/`memory --model ...` (the oom finding's
// fixes). Header-only so that every cmd_*.cc stays a single file.
#pragma once

#include <string>
#include <vector>

#include "cli/args.h"
#include "common/strings.h"
#include "plan/model_spec.h"
#include "plan/plan.h"

namespace stepscope {

// all = false: only the few flags analyze/memory need to describe the run.
inline void AddPlanFlags(ArgParser* p, bool all) {
  p->Flag("--model", "CONFIG",
          "the model: a Hugging Face config.json (llama, mistral, qwen2, mixtral, gpt2, gpt_neox) "
          "or a Megatron-LM argument file");
  p->Flag("--micro-batch", "N", "sequences per micro-batch per GPU");
  p->Flag("--seq-len", "N", "tokens per sequence");
  p->Flag("--dtype", "T",
          "bf16, fp16, fp32 (parameters and activations in that type), amp-bf16, amp-fp16 "
          "(fp32 parameters under torch.autocast), fp8 (default: bf16; Megatron files: theirs)");
  p->Flag("--optimizer", "OPT",
          "adamw (torch default, foreach), adamw-fused, sgd (momentum) (default: adamw; "
          "Megatron files: adamw-fused)");
  p->Flag("--lora-rank", "R", "LoRA: adapters of rank R, base weights frozen");
  p->Flag("--lora-targets", "LIST", "LoRA target modules, e.g. q_proj,v_proj");
  p->Switch("--recompute-full", "shorthand for --recompute full (gradient checkpointing)");
  p->Flag("--recompute", "MODE", "none, selective (attention core), full (whole layers)");
  p->Flag("--dp", "N", "data-parallel GPUs (ZeRO shards over them)");
  p->Flag("--zero", "S",
          "ZeRO stage 0-3 (1: sharded optimizer state, as Megatron's "
          "distributed optimizer)");
  if (!all) return;
  p->Switch("--master-weights", "fp32 master weights and fp32 gradients beside 16-bit parameters");
  p->Switch("--distributed-optimizer", "Megatron's distributed optimizer (= --zero 1)");
  p->Flag("--tp", "N", "tensor-parallel size");
  p->Flag("--pp", "N", "pipeline-parallel size");
  p->Flag("--vpp", "N", "virtual pipeline stages per GPU (interleaved schedule)");
  p->Flag("--microbatches", "N", "micro-batches per step (default: one per pipeline stage)");
  p->Flag("--cp", "N", "context-parallel size (the sequence split across GPUs)");
  p->Flag("--ep", "N", "expert-parallel size (MoE)");
  p->Switch("--sequence-parallel", "Megatron sequence parallelism (with --tp)");
  p->Flag("--offload", "WHAT", "activations or optimizer (to host memory)", "", "", true);
  p->Switch("--cuda-graphs", "the step is captured in CUDA graphs");
  p->Flag("--impl", "IMPL",
          "eager (PyTorch modules, the default for config.json) or megatron (Korthikanti et al. "
          "formulas, the default for Megatron files)");
  p->Switch("--no-flash-attention", "attention keeps its s x s scores (eager/math attention)");
  p->Flag("--set", "FIELD=VALUE", "override a config field, e.g. --set num_hidden_layers=48", "",
          "", true);
  p->Flag("--gpu-mem", "GiB", "GPU memory: says whether it fits and which settings do");
}

namespace plan_flags_internal {
inline Status Int(const ArgParser& p, const std::string& flag, int64_t lo, int64_t* out) {
  if (!p.Has(flag)) return OkStatus();
  if (!ParseInt64(p.Get(flag), out) || *out < lo) {
    return InvalidInput(flag + " '" + p.Get(flag) +
                        "': expected a whole number >= " + std::to_string(lo));
  }
  return OkStatus();
}
inline Status Int(const ArgParser& p, const std::string& flag, int64_t lo, int* out) {
  int64_t v = *out;
  RETURN_IF_ERROR(Int(p, flag, lo, &v));
  if (v > 1 << 20) return InvalidInput(flag + " '" + p.Get(flag) + "': too large");
  *out = static_cast<int>(v);
  return OkStatus();
}

// Training arguments of a Megatron argument file as the plan's defaults.
inline void MegatronDefaults(const plan::ModelSpec& m, plan::PlanOptions* o) {
  const auto& a = m.megatron_args;
  auto num = [&](const char* key, int64_t* out) {
    auto it = a.find(key);
    int64_t v = 0;
    if (it != a.end() && ParseInt64(it->second, &v) && v > 0) *out = v;
  };
  auto num32 = [&](const char* key, int* out) {
    int64_t v = *out;
    num(key, &v);
    *out = static_cast<int>(v);
  };
  num("micro-batch-size", &o->micro_batch);
  num("seq-length", &o->seq_len);
  num32("tensor-model-parallel-size", &o->tp);
  num32("pipeline-model-parallel-size", &o->pp);
  num32("context-parallel-size", &o->cp);
  num32("expert-model-parallel-size", &o->ep);
  int64_t per_vstage = 0;
  num("num-layers-per-virtual-pipeline-stage", &per_vstage);
  if (per_vstage > 0 && o->pp > 0) o->vpp = static_cast<int>(m.layers / o->pp / per_vstage);
  o->sequence_parallel = a.count("sequence-parallel") > 0;
  if (a.count("use-distributed-optimizer")) o->zero = 1;
  if (a.count("recompute-activations")) o->recompute = plan::Recompute::kSelective;
  if (auto it = a.find("recompute-granularity"); it != a.end()) {
    plan::ParseRecompute(it->second, &o->recompute);
  }
  o->precision = plan::Precision::kFp32;
  if (a.count("bf16") || a.count("fp16")) {
    o->precision = a.count("bf16") ? plan::Precision::kBf16 : plan::Precision::kFp16;
    o->master_weights = true;
  }
  if (a.count("fp8-format")) o->precision = plan::Precision::kFp8, o->master_weights = true;
  o->optimizer = a.count("optimizer") && a.at("optimizer") == "sgd" ? plan::Optimizer::kSgd
                                                                    : plan::Optimizer::kAdamWFused;
}
}  // namespace plan_flags_internal

// Reads --model and the training flags. A Megatron file's own arguments are
// the defaults; flags override them.
inline Status ParsePlanFlags(const ArgParser& p, plan::ModelSpec* model, plan::PlanOptions* o) {
  using namespace plan_flags_internal;
  if (!p.Has("--model"))
    return InvalidInput("--model CONFIG is required, e.g. --model config.json");
  std::vector<plan::Override> overrides;
  for (const std::string& s : p.GetAll("--set")) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidInput("--set '" + s + "': expected FIELD=VALUE, e.g. num_hidden_layers=48");
    }
    overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  ASSIGN_OR_RETURN(*model, plan::LoadModelSpec(p.Get("--model"), overrides));
  if (model->impl == plan::Implementation::kMegatron) MegatronDefaults(*model, o);
  if (p.Has("--impl")) {
    std::string impl = p.Get("--impl");
    if (impl != "eager" && impl != "megatron") {
      return InvalidInput("--impl '" + impl + "': expected eager or megatron");
    }
    model->impl = impl == "eager" ? plan::Implementation::kEager : plan::Implementation::kMegatron;
  }
  if (p.Has("--no-flash-attention")) model->flash_attention = false;
  RETURN_IF_ERROR(Int(p, "--micro-batch", 1, &o->micro_batch));
  RETURN_IF_ERROR(Int(p, "--seq-len", 1, &o->seq_len));
  if (o->micro_batch <= 0) return InvalidInput("--micro-batch N is required, e.g. --micro-batch 4");
  if (o->seq_len <= 0) return InvalidInput("--seq-len N is required, e.g. --seq-len 2048");
  if (p.Has("--dtype")) {
    if (!plan::ParsePrecision(p.Get("--dtype"), &o->precision)) {
      return InvalidInput("--dtype '" + p.Get("--dtype") +
                          "': expected bf16, fp16, fp32, amp-bf16, amp-fp16 or fp8");
    }
    o->master_weights = false;
  }
  if (p.Has("--master-weights")) o->master_weights = true;
  if (p.Has("--optimizer") && !plan::ParseOptimizer(p.Get("--optimizer"), &o->optimizer)) {
    return InvalidInput("--optimizer '" + p.Get("--optimizer") +
                        "': expected adamw, adamw-fused or sgd");
  }
  if (p.Has("--recompute") && !plan::ParseRecompute(p.Get("--recompute"), &o->recompute)) {
    return InvalidInput("--recompute '" + p.Get("--recompute") +
                        "': expected none, selective or full");
  }
  if (p.Has("--recompute-full")) o->recompute = plan::Recompute::kFull;
  RETURN_IF_ERROR(Int(p, "--zero", 0, &o->zero));
  if (p.Has("--distributed-optimizer")) o->zero = std::max(o->zero, 1);
  for (const char* f : {"--tp", "--pp", "--dp", "--cp", "--ep", "--vpp"}) {
    int* dst = std::string(f) == "--tp"   ? &o->tp
               : std::string(f) == "--pp" ? &o->pp
               : std::string(f) == "--dp" ? &o->dp
               : std::string(f) == "--cp" ? &o->cp
               : std::string(f) == "--ep" ? &o->ep
                                          : &o->vpp;
    RETURN_IF_ERROR(Int(p, f, 1, dst));
  }
  RETURN_IF_ERROR(Int(p, "--microbatches", 1, &o->microbatches));
  if (p.Has("--sequence-parallel")) o->sequence_parallel = true;
  for (const std::string& what : p.GetAll("--offload")) {
    if (what == "activations") {
      o->offload_activations = true;
    } else if (what == "optimizer") {
      o->offload_optimizer = true;
    } else {
      return InvalidInput("--offload '" + what + "': expected activations or optimizer");
    }
  }
  if (p.Has("--cuda-graphs")) o->cuda_graphs = true;
  RETURN_IF_ERROR(Int(p, "--lora-rank", 0, &o->lora_rank));
  if (p.Has("--lora-targets")) {
    for (const std::string& t : Split(p.Get("--lora-targets"), ',')) {
      if (!Trim(t).empty()) o->lora_targets.push_back(Trim(t));
    }
  }
  if (p.Has("--gpu-mem")) {
    if (!ParseDouble(p.Get("--gpu-mem"), &o->gpu_mem_gib) || !(o->gpu_mem_gib > 0) ||
        o->gpu_mem_gib > 1e6) {
      return InvalidInput("--gpu-mem '" + p.Get("--gpu-mem") + "': expected GiB, e.g. 80");
    }
  }
  return plan::ValidatePlanOptions(*model, *o);
}

}  // namespace stepscope
