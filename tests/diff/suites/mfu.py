# MFU (issue 38, docs/flops.md): model FLOPs per step over the step time and the GPU's peak,
# the median step's kernel classes and top-5 kernels, on the real GPU fixtures
# (tests/fixtures/gpu/README.md) and one synthetic trace with stored roofline counters.
#
# By hand (tests/analysis/mfu_hand_check.py asserts the first two within 2%, ctest mfu_hand_check):
# * default (H200, train_gpt.py --preset small: 12 x 768, 4h MLP, V 32000, untied head, batch 8 x
#   512, bf16 autocast): eq. 3 without recompute, 72 B s l h^2 (1 + s/6h + V/12lh) = 2.9233 TFLOP per
#   step; median step 13.279 ms (`steps`); 2.9233e12 / 13.279e-3 / 989.5e12 = 22.25%. GEMMs: the
#   layers' 2 x 12 h^2 l + head 2 h V per token, x 3 x 4096 tokens = 2.6913 TFLOP in 4.018 ms of
#   GEMM kernels = 669.9 TFLOP/s (67.7% of peak); attention 3 x 4 s h l x 4096 = 0.2319 TFLOP.
# * h100/hf_lora_batch (H100, HF Llama 8 x 1024, 16 heads, MLP 2816 gated, V 32000, batch 8 x 512,
#   LoRA r 16 on q_proj, v_proj): frozen weights forward + input gradient, 4 x 12,845,056 x 8 per
#   token; attention 3 x 4 x 512 x 1024 x 8; frozen head 4 x 1024 x 32000; adapters 6 x 8 x 65,536:
#   595.59 MFLOP per token x 4096 tokens = 2.4395 TFLOP per step; median 48.264 ms: 5.11% of 989.5
#   (6.33% of the fixture ceilings' measured 798).
# * h200_checkpoint_sampled (train_gpt small with --checkpoint: full recompute): eq. 3 itself,
#   96 B s l h^2 (1 + s/6h + V/16lh) = 3.6964 TFLOP per step; median 69.31 ms: 5.39%.
# * fp32 (train_gpt small in fp32): the same 2.9233 TFLOP over the fp32 CUDA-core peak (67 TFLOP/s,
#   the H200 datasheet), median 71.87 ms: 60.7%.
# * roofline/steps.sql+mfu/counters.sql (no model): the counters stored for step 1, gemm 137.439 GFLOP in 200 us =
#   687.19 TFLOP/s over its 500 ns in step 1 = 343.60 MFLOP; gelu 0.738 GFLOP in 60 us = 12.30
#   TFLOP/s over 240 ns = 2.95 MFLOP; 346.55 MFLOP per step, covering 740 of step 1's 990 ns of
#   kernels (74.7%); median step 900 ns; 346.55e6 / 900e-9 / 790e12 (the fixture ceilings' bench
#   tensor_bf16) = 48.74%. The classes are of step 2 (900 ns, the median): its gemm kernels 600 ns,
#   of which the measured gemm's 500 ns in step 1 are 83.3%.
G = "../../fixtures/gpu/"
CFG = "{src}/tests/plan/configs/"
GPT = ["--model", CFG + "train_gpt_small.json", "--micro-batch", "8", "--seq-len", "512"]
LLAMA_LORA = ["--model", CFG + "llama_small.json", "--micro-batch", "8", "--seq-len", "512",
              "--dtype", "amp-bf16", "--lora-rank", "16", "--lora-targets", "q_proj,v_proj"]

TESTS = [
    DiffTest(name="mfu_default_train_gpt", cmd=["mfu"] + GPT + ["--dtype", "amp-bf16", "--timeunit", "ms", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/default_train_gpt.txt"),
    DiffTest(name="mfu_default_train_gpt_json", cmd=["mfu"] + GPT + ["--format", "json", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/default_train_gpt.json"),
    DiffTest(name="mfu_h100_hf_lora_llama", cmd=["mfu"] + LLAMA_LORA + ["--timeunit", "ms", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="mfu/h100_hf_lora_llama.txt"),
    DiffTest(name="mfu_h100_hf_lora_llama_csv", cmd=["mfu"] + LLAMA_LORA + ["--format", "csv", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="mfu/h100_hf_lora_llama.csv"),
    # This machine's bench results (--ceilings): the measured bf16 peak (798 TFLOP/s), labelled, with
    # the datasheet figure beside it.
    DiffTest(name="mfu_h100_hf_lora_llama_bench_peak",
             cmd=["mfu"] + LLAMA_LORA + ["--ceilings", "{fixtures}/analysis/ceilings_h100_bench.json", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="mfu/h100_hf_lora_llama_bench.txt"),
    DiffTest(name="mfu_h200_checkpoint_full_recompute",
             cmd=["mfu"] + GPT + ["--recompute-full", "--timeunit", "ms", "{trace}"],
             trace=G + "h200_checkpoint_sampled.sqlite.gz", out="mfu/h200_checkpoint_recompute.txt"),
    DiffTest(name="mfu_fp32_peak", cmd=["mfu"] + GPT + ["--dtype", "fp32", "--timeunit", "ms", "{trace}"],
             trace=G + "fp32.sqlite.gz", out="mfu/fp32.txt"),
    # Both kinds (issue 38): train_gpt small on an H100 (its host-bound 32.3 ms step: 2.9233 TFLOP /
    # 32.310 ms / 989.5 = 9.14%), the HF Llama LoRA on an H200 (2.4395 TFLOP / 39.042 ms = 6.31%).
    DiffTest(name="mfu_h100_train_gpt", cmd=["mfu"] + GPT + ["--dtype", "amp-bf16", "--timeunit", "ms", "{trace}"],
             trace=G + "h100/train_gpt_small.sqlite.gz", out="mfu/h100_train_gpt.txt"),
    DiffTest(name="mfu_h200_hf_lora_llama", cmd=["mfu"] + LLAMA_LORA + ["--timeunit", "ms", "{trace}"],
             trace=G + "h200_hf_lora_batch.sqlite.gz", out="mfu/h200_hf_lora_llama.txt"),
    # Real roofline counters (`roofline --top 0`: every kernel of step 6), no model: the measured FLOPs
    # per step against the model's 2.9233 TFLOP (H200 2.873, -1.7%; H100 2.866, -2.0%).
    DiffTest(name="mfu_h200_roofline_counters_small", cmd=["mfu", "--timeunit", "ms", "{trace}"],
             trace=G + "h200_roofline_counters_small.sqlite.gz", out="mfu/h200_roofline_counters_small.txt"),
    DiffTest(name="mfu_h100_roofline_counters_small_json", cmd=["mfu", "--format", "json", "{trace}"],
             trace=G + "h100/roofline_counters_small.sqlite.gz", out="mfu/h100_roofline_counters_small.json"),
    # No model, no roofline rows: no FLOP source, the classes' time alone.
    DiffTest(name="mfu_no_flop_source", cmd=["mfu", "--timeunit", "ms", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/no_flop_source.txt"),
    # No model, stored roofline counters: the measured FLOPs (a lower bound) and each kernel's bound.
    DiffTest(name="mfu_roofline_counters",
             cmd=["mfu", "--ceilings", "{fixtures}/roofline/ceilings.json", "{trace}"],
             trace="roofline/steps.sql+mfu/counters.sql", out="mfu/roofline_counters.txt"),
    DiffTest(name="mfu_roofline_counters_analyze_line",
             cmd=["analyze", "--ceilings", "{fixtures}/roofline/ceilings.json", "{trace}"],
             trace="roofline/steps.sql+mfu/counters.sql", out="mfu/roofline_counters_analyze.txt"),
    # analyze: the MFU line in the header when a FLOP source exists; its JSON gains an mfu table.
    DiffTest(name="mfu_analyze_line_default", cmd=["analyze"] + GPT + ["--dtype", "amp-bf16", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/analyze_default.txt"),
    DiffTest(name="mfu_analyze_json_default", cmd=["analyze"] + GPT + ["--format", "json", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/analyze_default.json"),
    # steps: an MFU column with --model.
    DiffTest(name="mfu_steps_column_hf_lora", cmd=["steps"] + LLAMA_LORA + ["--timeunit", "ms", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="mfu/steps_h100_hf_lora.txt"),
    # A Megatron argument file (batch, sequence, parallel sizes and recompute from the file:
    # GPT-3 175B, tp 8 x pp 8, 8 micro-batches, selective recompute) on a 125M model's trace: 278.0
    # TFLOP per GPU per step cannot fit 13.28 ms, and the line says so.
    # (278.0 = 8 x 2048 tokens x (3 x 24 h^2 l + 4 x 4 s h l + 3 x 2 h V) / 64 GPUs, V 50257.)
    DiffTest(name="mfu_megatron_args_over_100_pct",
             cmd=["mfu", "--model", "{fixtures}/plan/gpt3_175b.args", "--dp", "8", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/megatron_over_100.txt"),
    # Bad input: a model without a batch; fp8 without a measured fp8 peak.
    DiffTest(name="mfu_model_without_batch_is_exit_2",
             cmd=["mfu", "--model", CFG + "train_gpt_small.json", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/no_batch.err", rc=2, stderr=True),
    DiffTest(name="mfu_fp8_without_bench_peak", cmd=["mfu"] + GPT + ["--dtype", "fp8", "{trace}"],
             trace=G + "default.sqlite.gz", out="mfu/fp8_no_peak.txt"),
]
