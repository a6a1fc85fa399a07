# stepscope plan: the memory plan of a training step from a model config, and
# the oom finding (analyze, memory) with the planner's fixes. The model configs
# are copied into the test's directory (the command runs there); the numbers
# are those of the formulas in docs/plan.md, checked by src/plan/plan_test.cc
# and calibrated in docs/PERFORMANCE.md.
def out(name):
    return "plan/" + name


TESTS = [
    DiffTest(name="plan_llama_text",
             cmd=["plan", "--model", "llama_small.json", "--micro-batch", "4", "--seq-len", "1024",
                  "--optimizer", "adamw-fused"],
             trace="plan/llama_small.json", out=out("llama_text.txt")),
    DiffTest(name="plan_llama_lora_json",
             cmd=["plan", "--model", "llama_small.json", "--micro-batch", "4", "--seq-len", "1024",
                  "--lora-rank", "16", "--lora-targets", "q_proj,v_proj", "--format", "json"],
             trace="plan/llama_small.json", out=out("llama_lora.json")),
    DiffTest(name="plan_train_gpt_amp_recompute",
             cmd=["plan", "--model", "train_gpt_small.json", "--micro-batch", "8", "--seq-len", "512",
                  "--dtype", "amp-bf16", "--optimizer", "adamw-fused", "--recompute", "full"],
             trace="plan/train_gpt_small.json", out=out("train_gpt_small_ckpt.txt")),
    # Does not fit 6 GiB: the settings that do, fastest first.
    DiffTest(name="plan_qwen2_gpu_mem",
             cmd=["plan", "--model", "qwen2_small.json", "--micro-batch", "8", "--seq-len", "2048",
                  "--gpu-mem", "24", "--dp", "8", "--top", "5"],
             trace="plan/qwen2_small.json", out=out("qwen2_gpu_mem.txt")),
    # A Megatron argument file: its parallel sizes and recompute are the defaults;
    # the best-practice warnings (PP not smaller than TP or DP).
    DiffTest(name="plan_megatron_args_json",
             cmd=["plan", "--model", "gpt3_175b.args", "--dp", "8", "--gpu-mem", "80", "--top", "3",
                  "--format", "json"],
             trace="plan/gpt3_175b.args", out=out("gpt3_megatron.json")),
    # Bad input: one line naming the field, exit code 2.
    DiffTest(name="plan_heads_not_divisible_by_tp",
             cmd=["plan", "--model", "llama_small.json", "--micro-batch", "1", "--seq-len", "128", "--tp", "3"],
             trace="plan/llama_small.json", out=out("err_tp.txt"), rc=2, stderr=True),
    DiffTest(name="plan_layers_not_divisible_by_pp",
             cmd=["plan", "--model", "llama_small.json", "--micro-batch", "1", "--seq-len", "128", "--pp", "3"],
             trace="plan/llama_small.json", out=out("err_pp.txt"), rc=2, stderr=True),
    DiffTest(name="plan_unknown_family",
             cmd=["plan", "--model", "bad_family.json", "--micro-batch", "1", "--seq-len", "128"],
             trace="plan/bad_family.json", out=out("err_family.txt"), rc=2, stderr=True),
    DiffTest(name="plan_missing_field",
             cmd=["plan", "--model", "missing_heads.json", "--micro-batch", "1", "--seq-len", "128"],
             trace="plan/missing_heads.json", out=out("err_missing.txt"), rc=2, stderr=True),
    DiffTest(name="plan_bad_dtype",
             cmd=["plan", "--model", "llama_small.json", "--micro-batch", "1", "--seq-len", "128",
                  "--dtype", "int4"],
             trace="plan/llama_small.json", out=out("err_dtype.txt"), rc=2, stderr=True),
    DiffTest(name="plan_lora_target_unknown",
             cmd=["plan", "--model", "llama_small.json", "--micro-batch", "1", "--seq-len", "128",
                  "--lora-rank", "8", "--lora-targets", "c_attn"],
             trace="plan/llama_small.json", out=out("err_lora.txt"), rc=2, stderr=True),
    # The oom finding (tests/diff/fixtures/plan/oom_layers.sql derives every number).
    DiffTest(name="analyze_oom_generic", cmd=["analyze", "{trace}"],
             trace="plan/oom_layers.sql", finalize=False, out=out("analyze_oom.txt")),
    DiffTest(name="analyze_oom_with_model",
             cmd=["analyze", "--model", "train_gpt_small.json", "--micro-batch", "8", "--seq-len", "512",
                  "--dtype", "amp-bf16", "{trace}"],
             trace=["plan/oom_layers.sql", "plan/train_gpt_small.json"], finalize=False,
             out=out("analyze_oom_model.txt")),
    DiffTest(name="analyze_oom_json", cmd=["analyze", "--format", "json", "{trace}"],
             trace="plan/oom_layers.sql", finalize=False, out=out("analyze_oom.json")),
    DiffTest(name="memory_oom_leads", cmd=["memory", "{trace}"],
             trace="plan/oom_layers.sql", finalize=False, out=out("memory_oom.txt")),
]
