# Analysis on the real H200 traces of the reference workload (tests/fixtures/gpu/,
# see its README): each scenario's top finding, the step view, and diff.
# The numeric acceptance checks (data-loading cost vs the measured step-time
# difference, diff's ratio vs train_gpt.py's own) are in
# tests/analysis/gpu_acceptance.py (ctest: analysis_gpu_acceptance).
G = "../../fixtures/gpu/"

TESTS = [
    DiffTest(name=f"gpu_analyze_{n}", cmd=["analyze", "{trace}"], trace=G + n + ".sqlite.gz",
             out=f"analysis_gpu/analyze_{n}.txt")
    for n in ["default", "workers0_cpu4", "workers4_cpu4", "sync1", "fp32", "offload"]
] + [
    # What-if replay: fidelity per step and each scenario's fix, priced.
    DiffTest(name="gpu_whatif_sync1", cmd=["whatif", "--steps", "--remove-sync", "cudaStreamSynchronize", "--in",
                                           "loss.item", "{trace}"], trace=G + "sync1.sqlite.gz",
             out="analysis_gpu/whatif_sync1.txt"),
    DiffTest(name="gpu_whatif_workers0_cpu4", cmd=["whatif", "--prefetch", "--batch", "4", "{trace}"],
             trace=G + "workers0_cpu4.sqlite.gz", out="analysis_gpu/whatif_workers0_cpu4.txt"),
    DiffTest(name="gpu_whatif_fp32", cmd=["whatif", "--tensor-cores", "--format", "csv", "{trace}"],
             trace=G + "fp32.sqlite.gz", out="analysis_gpu/whatif_fp32.csv"),
    DiffTest(name="gpu_whatif_offload", cmd=["whatif", "--no-copies", "--side-stream", "{trace}"],
             trace=G + "offload.sqlite.gz", out="analysis_gpu/whatif_offload.txt"),
    DiffTest(name="gpu_whatif_default_graph", cmd=["whatif", "--graph", "forward", "--pin", "{trace}"],
             trace=G + "default.sqlite.gz", out="analysis_gpu/whatif_default_graph.txt"),
    # Batches uploaded from pageable memory (H100, external suite, tests/fixtures/gpu/README.md):
    # pageable_memcpy priced with the H100 table's pinned bandwidth and the host's blocking time
    # (realized 6.04 ms/step); whatif --pin answers the same.
    DiffTest(name="gpu_analyze_h100_vit_pageable", cmd=["analyze", "{trace}"],
             trace=G + "h100/vit_pageable.sqlite.gz", out="analysis_gpu/analyze_h100_vit_pageable.txt"),
    DiffTest(name="gpu_whatif_h100_vit_pageable_pin", cmd=["whatif", "--pin", "{trace}"],
             trace=G + "h100/vit_pageable.sqlite.gz", out="analysis_gpu/whatif_h100_vit_pageable_pin.txt"),
    # The same with this machine's bench results (--ceilings): the constants and their source
    # come from them (fixture ceilings: pinned 25 GB/s, pageable 5 GB/s).
    DiffTest(name="gpu_analyze_h100_vit_pageable_bench", cmd=["analyze", "--ceilings",
             "{fixtures}/analysis/ceilings_h100_bench.json", "{trace}"],
             trace=G + "h100/vit_pageable.sqlite.gz", out="analysis_gpu/analyze_h100_vit_pageable_bench.txt"),
    # Host-bound H100 runs (tests/fixtures/gpu/h100): no host_sync finding where the
    # sync costs nothing; the HF LoRA step is bound by the host, priced as a 4x batch.
    DiffTest(name="gpu_analyze_h100_tiny_sync", cmd=["analyze", "{trace}"], trace=G + "h100/tiny_sync.sqlite.gz",
             out="analysis_gpu/analyze_h100_tiny_sync.txt"),
    # An MoE dispatching tokens with torch.nonzero per expert (external suite, H100,
    # 2026-11-27, steps 6-10): data_dependent_sync names aten::nonzero at its line and
    # prices the fixed-capacity dispatch (the round trips removed, the per-expert loops
    # batched, forward and backward); launch_bound prices no CUDA graph over the
    # stretches in or around those loops. Realized: 51.69 ms per step of 76.31 (bare
    # medians, 76.31 -> 24.62); priced at that untraced host speed in the csv test
    # (52.17 ms on these 5 steps; 51.18 on the whole trace).
    DiffTest(name="gpu_analyze_h100_moe_nonzero", cmd=["analyze", "{trace}"],
             trace=G + "h100/moe_nonzero.sqlite.gz", out="analysis_gpu/analyze_h100_moe_nonzero.txt"),
    DiffTest(name="gpu_analyze_h100_moe_nonzero_untraced",
             cmd=["analyze", "--untraced-step-ms", "76.31", "--format", "csv", "{trace}"],
             trace=G + "h100/moe_nonzero.sqlite.gz", out="analysis_gpu/analyze_h100_moe_nonzero_untraced.csv"),
    # Qwen2 (12 layers) clipping with clip_grad_norm_(foreach=False) (external suite, H100,
    # 2026-11-27, stepscope 479995f, steps 6-11; schema 1.7): per_param_optimizer on the
    # `clip_grad_norm_(foreach=False)` range the iteration hook puts around the call, and the
    # tracer's own host time recorded with each call (api.tracer_ns) removed before pricing;
    # the csv with --keep-tracer-time prices as traced. Realized 1.15 ms/step (95% interval
    # -2.98 to 3.52; H200: 3.95, -1.18 to 10.02): the price is off (docs/PERFORMANCE.md).
    DiffTest(name="gpu_analyze_h100_qwen2_clip_forloop", cmd=["analyze", "{trace}"],
             trace=G + "h100/qwen2_clip_forloop_s7.sqlite.gz",
             out="analysis_gpu/analyze_h100_qwen2_clip_forloop.txt"),
    DiffTest(name="gpu_analyze_h100_qwen2_clip_forloop_traced",
             cmd=["analyze", "--keep-tracer-time", "--format", "csv", "{trace}"],
             trace=G + "h100/qwen2_clip_forloop_s7.sqlite.gz",
             out="analysis_gpu/analyze_h100_qwen2_clip_forloop_traced.csv"),
    DiffTest(name="gpu_analyze_h100_hf_lora_batch", cmd=["analyze", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="analysis_gpu/analyze_h100_hf_lora_batch.txt"),
    DiffTest(name="gpu_whatif_h100_hf_lora_batch", cmd=["whatif", "--batch", "4", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="analysis_gpu/whatif_h100_hf_lora_batch.txt"),
    # The same priced at the untraced host speed (--untraced-step-ms: the bare problem
    # median of realized.json, 43.32 ms): the 4x batch is bound by the GPU, which the
    # tracer did not slow (realized: 18.98 ms per 8 samples).
    DiffTest(name="gpu_whatif_h100_hf_lora_batch_untraced",
             cmd=["whatif", "--batch", "4", "--untraced-step-ms", "43.32", "{trace}"],
             trace=G + "h100/hf_lora_batch.sqlite.gz", out="analysis_gpu/whatif_h100_hf_lora_batch_untraced.txt"),
    # Activation checkpointing with real host samples (H200, 2026-11-24, steps 7-16 of the
    # calibration trace): the recompute finding with the checkpoint hooks' sampled share.
    DiffTest(name="gpu_analyze_h200_checkpoint_sampled", cmd=["analyze", "{trace}"],
             trace=G + "h200_checkpoint_sampled.sqlite.gz", out="analysis_gpu/analyze_h200_checkpoint_sampled.txt"),
    # The same with native stack samples (H200, session 14, steps 7-16): the saved-tensor
    # hooks' C++ side priced from the native samples under PyTorch's hook functions.
    DiffTest(name="gpu_analyze_h200_checkpoint_native", cmd=["analyze", "{trace}"],
             trace=G + "h200_checkpoint_native.sqlite.gz", out="analysis_gpu/analyze_h200_checkpoint_native.txt"),
    # A Hugging Face Trainer + PEFT LoRA run with non-reentrant gradient checkpointing and
    # native samples (H100, session 15, steps 4-13 of the hf_lora_ckpt_ab calibration trace):
    # the recompute finding, and the fix priced at the untraced host speed (81.546 ms: the
    # problem phases' median inside one Trainer run; realized saving 34.22 ms).
    DiffTest(name="gpu_analyze_h100_hf_lora_ckpt_native", cmd=["analyze", "{trace}"],
             trace=G + "h100/hf_lora_ckpt_native.sqlite.gz", out="analysis_gpu/analyze_h100_hf_lora_ckpt_native.txt"),
    DiffTest(name="gpu_whatif_h100_hf_lora_ckpt_native_untraced",
             cmd=["whatif", "--no-recompute", "--untraced-step-ms", "81.546", "{trace}"],
             trace=G + "h100/hf_lora_ckpt_native.sqlite.gz",
             out="analysis_gpu/whatif_h100_hf_lora_ckpt_native_untraced.txt"),
    # HF LoRA with 0 DataLoader workers and profile's DataLoader.__next__ ranges (H100,
    # session 15, steps 4-13 of the hf_lora_workers_ab trace): data_loading prices the
    # next() calls, not the Trainer's own work in the waits: below the 1% threshold
    # (realized inside one Trainer run: -0.82 ms; next() 0.83 -> 0.33 ms with 4 workers).
    DiffTest(name="gpu_analyze_h100_hf_lora_workers_loader_ranges", cmd=["analyze", "--min-cost", "0", "{trace}"],
             trace=G + "h100/hf_lora_workers_loader_ranges.sqlite.gz",
             out="analysis_gpu/analyze_h100_hf_lora_workers_loader_ranges.txt"),
    DiffTest(name="gpu_whatif_h100_hf_lora_workers_prefetch_untraced",
             cmd=["whatif", "--prefetch", "--untraced-step-ms", "33.019", "{trace}"],
             trace=G + "h100/hf_lora_workers_loader_ranges.sqlite.gz",
             out="analysis_gpu/whatif_h100_hf_lora_workers_prefetch_untraced.txt"),
    DiffTest(name="gpu_steps_default", cmd=["steps", "{trace}"], trace=G + "default.sqlite.gz",
             out="analysis_gpu/steps_default.txt"),
    # A loop nobody here wrote (HF GPT-2 from its config, no NVTX of ours, AdamW(foreach=False);
    # H200, 2026-11-27, iterations 10-14): steps from the iteration ranges, per_param_optimizer
    # priced (and launch_bound leaves the optimizer's launches to it), also at the untraced
    # host speed (36.25 ms: the bare problem's median on another H200 VM the same day).
    DiffTest(name="gpu_analyze_h200_gpt2_forloop_adamw", cmd=["analyze", "{trace}"],
             trace=G + "h200_gpt2_forloop_adamw.sqlite.gz",
             out="analysis_gpu/analyze_h200_gpt2_forloop_adamw.txt"),
    DiffTest(name="gpu_steps_h200_gpt2_forloop_adamw", cmd=["steps", "{trace}"],
             trace=G + "h200_gpt2_forloop_adamw.sqlite.gz",
             out="analysis_gpu/steps_h200_gpt2_forloop_adamw.txt"),
    DiffTest(name="gpu_analyze_h200_gpt2_forloop_adamw_untraced",
             cmd=["analyze", "--format", "csv", "--untraced-step-ms", "36.25", "{trace}"],
             trace=G + "h200_gpt2_forloop_adamw.sqlite.gz",
             out="analysis_gpu/analyze_h200_gpt2_forloop_adamw_untraced.csv"),
    DiffTest(name="gpu_diff_workers0_vs_workers4", cmd=["diff", "--limit", "5", "{traces}"],
             trace=[G + "workers0_cpu4.sqlite.gz", G + "workers4_cpu4.sqlite.gz"],
             out="analysis_gpu/diff_workers0_vs_workers4.txt"),
    DiffTest(name="gpu_stats_kern_sum_fp32", cmd=["stats", "-r", "cuda_gpu_kern_sum", "--step", "4", "--format", "csv",
                                                  "{trace}"], trace=G + "fp32.sqlite.gz",
             out="analysis_gpu/stats_kern_sum_fp32_step4.csv"),
]
