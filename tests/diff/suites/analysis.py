# Analysis: recipes (stats), steps, expert rules (analyze), diff, edge cases.
# Fixtures: tests/diff/fixtures/analysis/*.sql, written by gen_fixtures.py there
# (each scenario's timeline is described in that script).
A = "analysis/"


def fx(name):
    return A + name + ".sql"


def out(name):
    return A + name


RECIPES = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
           "nvtx_sum", "nvtx_gpu_proj_sum", "cuda_gpu_kern_pace", "nvtx_pace", "gpu_time_util"]

TESTS = [
    DiffTest(name=f"stats_{r}", cmd=["stats", "-r", r, "{trace}"], trace=fx("recipes"), out=out(f"stats_{r}.txt"))
    for r in RECIPES
] + [
    DiffTest(name="stats_list", cmd=["stats", "--list"], out=out("stats_list.txt")),
    DiffTest(name="stats_kern_sum_csv", cmd=["stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", "{trace}"],
             trace=fx("recipes"), out=out("stats_kern_sum.csv")),
    # nsys's column names (--nsys-names, issue 37): what `nsys stats --format csv` heads its columns with.
    DiffTest(name="stats_nsys_names_csv", cmd=["stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum,"
                                               "cuda_gpu_mem_size_sum,nvtx_sum", "--format", "csv", "--nsys-names",
                                               "{trace}"], trace=fx("recipes"), out=out("stats_nsys_names.csv")),
    DiffTest(name="stats_two_recipes_json", cmd=["stats", "-r", "cuda_gpu_mem_time_sum,nvtx_sum", "--format", "json",
                                                 "{trace}"], trace=fx("recipes"), out=out("stats_two.json")),
    DiffTest(name="stats_time_range", cmd=["stats", "-r", "cuda_gpu_kern_sum", "--time-range", "0:20us", "{trace}"],
             trace=fx("recipes"), out=out("stats_time_range.txt")),
    DiffTest(name="stats_nvtx_filter", cmd=["stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum", "--nvtx", "inner",
                                            "{trace}"], trace=fx("recipes"), out=out("stats_nvtx_inner.txt")),
    DiffTest(name="stats_step_filter", cmd=["stats", "-r", "cuda_gpu_kern_sum", "--step", "2", "--format", "csv",
                                            "{trace}"], trace=fx("train_healthy"), out=out("stats_step2.csv")),
    DiffTest(name="stats_device_filter", cmd=["stats", "-r", "cuda_gpu_kern_sum", "--device", "1", "{trace}"],
             trace=fx("multi_device"), out=out("stats_device1.txt")),
    DiffTest(name="stats_kern_pace_name", cmd=["stats", "-r", "cuda_gpu_kern_pace", "--name", "CUDAFunctor_add",
                                               "{trace}"], trace=fx("recipes"), out=out("stats_kern_pace_add.txt")),
    DiffTest(name="stats_nvtx_pace_steps", cmd=["stats", "-r", "nvtx_pace", "{trace}"], trace=fx("train_data_starved"),
             out=out("stats_nvtx_pace_steps.txt")),
    DiffTest(name="stats_buckets", cmd=["stats", "-r", "gpu_time_util", "--buckets", "4", "{trace}"],
             trace=fx("multi_device"), out=out("stats_util_multi_device.txt")),
    DiffTest(name="stats_two_ranks", cmd=["stats", "-r", "cuda_gpu_mem_time_sum", "--jobs", "2", "{traces}"],
             trace=[fx("recipes"), fx("train_healthy")], out=out("stats_two_ranks.txt")),
    DiffTest(name="stats_output_dir", cmd=["stats", "-r", "cuda_gpu_mem_size_sum,nvtx_sum", "--format", "csv",
                                           "--output", "{tmp}/out/", "{trace}"], trace=fx("recipes"),
             out=out("stats_output_dir.txt"), post=["sh", "-c", "cd {tmp}/out && for f in *; do echo \"## $f\"; cat $f; done"]),
    DiffTest(name="stats_empty_trace", cmd=["stats", "{trace}"], trace=fx("empty"), out=out("stats_empty.txt")),
    DiffTest(name="stats_no_gpu", cmd=["stats", "{trace}"], trace=fx("no_gpu"), out=out("stats_no_gpu.txt")),
    DiffTest(name="stats_cut_off", cmd=["stats", "-r", "nvtx_sum,nvtx_pace", "{trace}"], trace=fx("cut_off"),
             finalize=False, out=out("stats_cut_off.txt")),
    # errors: one line, exit code 2
    DiffTest(name="stats_bad_time_range", cmd=["stats", "--time-range", "5", "{trace}"], trace=fx("recipes"),
             out=out("stats_bad_time_range.err"), rc=2, stderr=True),
    DiffTest(name="stats_unknown_recipe", cmd=["stats", "-r", "nope", "{trace}"], trace=fx("recipes"),
             out=out("stats_unknown_recipe.err"), rc=2, stderr=True),
    DiffTest(name="stats_no_such_step", cmd=["stats", "--step", "99", "{trace}"], trace=fx("train_healthy"),
             out=out("stats_no_such_step.err"), rc=2, stderr=True),
    DiffTest(name="stats_missing_file", cmd=["stats", "{tmp}/missing.sqlite"], out=out("stats_missing_file.err"),
             rc=2, stderr=True),
    DiffTest(name="stats_no_trace", cmd=["stats"], out=out("stats_no_trace.err"), rc=2, stderr=True),

    # steps
    DiffTest(name="steps_healthy", cmd=["steps", "{trace}"], trace=fx("train_healthy"), out=out("steps_healthy.txt")),
    DiffTest(name="steps_data_starved_kernels_csv", cmd=["steps", "--kernels", "--format", "csv", "{trace}"],
             trace=fx("train_data_starved"), out=out("steps_data_starved.csv")),
    DiffTest(name="steps_profiler_step", cmd=["steps", "{trace}"], trace=fx("profiler_steps"),
             out=out("steps_profiler_steps.txt")),
    DiffTest(name="steps_kernel_sequence", cmd=["steps", "--format", "csv", "{trace}"], trace=fx("kernel_sequence"),
             out=out("steps_kernel_sequence.csv")),
    DiffTest(name="steps_regex", cmd=["steps", "--step-range", "^forward$", "{trace}"], trace=fx("train_healthy"),
             out=out("steps_regex_forward.txt")),
    DiffTest(name="steps_bad_regex", cmd=["steps", "--step-range", "(", "{trace}"], trace=fx("train_healthy"),
             out=out("steps_bad_regex.err"), rc=2, stderr=True),
    DiffTest(name="steps_cut_off", cmd=["steps", "{trace}"], trace=fx("cut_off"), finalize=False,
             out=out("steps_cut_off.txt")),
    DiffTest(name="steps_no_gpu", cmd=["steps", "{trace}"], trace=fx("no_gpu"), out=out("steps_no_gpu.txt")),
    DiffTest(name="steps_empty", cmd=["steps", "{trace}"], trace=fx("empty"), out=out("steps_empty.txt")),
    DiffTest(name="steps_multi_device", cmd=["steps", "{trace}"], trace=fx("multi_device"),
             out=out("steps_multi_device.txt")),
    DiffTest(name="steps_multi_device_dev0", cmd=["steps", "--device", "0", "{trace}"], trace=fx("multi_device"),
             out=out("steps_multi_device_dev0.txt")),
    DiffTest(name="steps_two_ranks", cmd=["steps", "--format", "csv", "{traces}"],
             trace=[fx("profiler_steps"), fx("kernel_sequence")], out=out("steps_two_ranks.csv")),

    # analyze: a positive and a negative fixture per rule
    DiffTest(name="analyze_healthy_no_findings", cmd=["analyze", "{trace}"], trace=fx("train_healthy"),
             out=out("analyze_healthy.txt")),
    DiffTest(name="analyze_data_loading", cmd=["analyze", "{trace}"], trace=fx("train_data_starved"),
             out=out("analyze_data_loading.txt")),
    # CI gates: the output as usual, then one stderr line and exit 1 when the gate matches.
    DiffTest(name="analyze_fail_on_rule", cmd=["analyze", "--fail-on", "host_sync", "--format", "csv", "{trace}"],
             trace=fx("train_sync"), out=out("analyze_fail_on_rule.err"), rc=1, stderr=True),
    DiffTest(name="analyze_fail_on_pct", cmd=["analyze", "--fail-on", "5", "{trace}"],
             trace=fx("train_data_starved"), out=out("analyze_fail_on_pct.err"), rc=1, stderr=True),
    DiffTest(name="analyze_fail_on_no_match", cmd=["analyze", "--fail-on", "fp32_gemm,99", "--format", "csv",
                                                   "{trace}"], trace=fx("train_sync"),
             out=out("analyze_fail_on_no_match.err"), rc=0, stderr=True),
    DiffTest(name="analyze_fail_on_unknown_rule", cmd=["analyze", "--fail-on", "nosuchrule", "{trace}"],
             trace=fx("train_sync"), out=out("analyze_fail_on_unknown.err"), rc=2, stderr=True),
    DiffTest(name="analyze_host_sync", cmd=["analyze", "{trace}"], trace=fx("train_sync"),
             out=out("analyze_host_sync.txt")),
    # What-if on the synthetic traces: answers worked out from gen_fixtures.py.
    DiffTest(name="analyze_sync_host_bound", cmd=["analyze", "{trace}"], trace=fx("sync_host_bound"),
             out=out("analyze_sync_host_bound.txt")),
    DiffTest(name="whatif_sync_host_bound", cmd=["whatif", "--remove-sync", "all", "--batch", "4", "{trace}"],
             trace=fx("sync_host_bound"), out=out("whatif_sync_host_bound.txt")),
    DiffTest(name="whatif_host_sync", cmd=["whatif", "--steps", "--remove-sync", "all", "{trace}"],
             trace=fx("train_sync"), out=out("whatif_host_sync.txt")),
    # The same 3 ms waits with stepscope's DataLoader.__next__ ranges over the last 0.4 ms of each:
    # only that part is priced (0.4 ms cut to the 0.2 ms fetch), the rest stays.
    DiffTest(name="analyze_loader_ranges", cmd=["analyze", "{trace}"], trace=fx("train_loader_ranges"),
             out=out("analyze_loader_ranges.txt")),
    DiffTest(name="whatif_loader_ranges", cmd=["whatif", "--prefetch", "{trace}"], trace=fx("train_loader_ranges"),
             out=out("whatif_loader_ranges.txt")),
    # A loader in the training thread and the batch's blocking upload from pageable memory
    # (gen_fixtures.py): the fix replayed with the uploads pinned and non-blocking too, so
    # the next forward overlaps the backward: 3.9 -> 1.8 ms (2.5 ms with the loading cut alone).
    DiffTest(name="analyze_loader_pageable_upload", cmd=["analyze", "{trace}"],
             trace=fx("loader_pageable_upload"), out=out("analyze_loader_pageable_upload.txt")),
    DiffTest(name="whatif_loader_pageable_upload", cmd=["whatif", "--prefetch", "--pin", "{trace}"],
             trace=fx("loader_pageable_upload"), out=out("whatif_loader_pageable_upload.txt")),
    # A loop with no DataLoader, steps from profile's iteration ranges, 0.77 ms of Python at each
    # step's start (gen_fixtures.py): an older trace (no hook mark) reads it as data loading;
    # with the hook's "stepscope.loader_ranges on" mark and no DataLoader range it is host_wait.
    DiffTest(name="analyze_iteration_no_loader_old", cmd=["analyze", "{trace}"],
             trace=fx("iteration_no_loader"), out=out("analyze_iteration_no_loader_old.txt")),
    DiffTest(name="analyze_iteration_no_loader", cmd=["analyze", "{trace}"],
             trace=fx("iteration_no_loader") + "+" + fx("loader_ranges_on_mark"),
             out=out("analyze_iteration_no_loader.txt")),
    DiffTest(name="whatif_data_starved", cmd=["whatif", "--prefetch", "--batch", "2", "{trace}"],
             trace=fx("train_data_starved"), out=out("whatif_data_starved.txt")),
    DiffTest(name="whatif_offload_json", cmd=["whatif", "--no-copies", "--side-stream", "--format", "json",
                                              "{trace}"], trace=fx("train_offload"), out=out("whatif_offload.json")),
    # Activation checkpointing: the recompute finding and its price (800 us per step,
    # worked out in gen_fixtures.py); the same loop without checkpointing has none.
    DiffTest(name="analyze_recompute", cmd=["analyze", "{trace}"], trace=fx("train_checkpoint"),
             out=out("analyze_recompute.txt")),
    DiffTest(name="whatif_no_recompute", cmd=["whatif", "--no-recompute", "--format", "csv", "{trace}"],
             trace=fx("train_checkpoint"), out=out("whatif_no_recompute.csv")),
    # With host samples the checkpoint hooks' share of each thread's time goes
    # too (gen_fixtures.py: main 50% of its block windows, autograd 25%).
    DiffTest(name="analyze_recompute_sampled", cmd=["analyze", "--format", "csv", "{trace}"],
             trace=fx("train_checkpoint_sampled"), out=out("analyze_recompute_sampled.csv")),
    # Reentrant checkpointing (CheckpointFunction frames in the samples): the
    # forward's wrapper entry/exit is not priced (analyze_recompute prices it),
    # the recompute runs and their exits are; no hook share on the main thread:
    # 400 + 120 = 520 us per step against analyze_recompute's 920 (gen_fixtures.py).
    DiffTest(name="analyze_recompute_reentrant", cmd=["analyze", "--format", "csv", "{trace}"],
             trace=fx("train_checkpoint_reentrant"), out=out("analyze_recompute_reentrant.csv")),
    DiffTest(name="analyze_no_checkpoint", cmd=["analyze", "--all", "--format", "csv", "{trace}"],
             trace=fx("train_no_checkpoint"), out=out("analyze_no_checkpoint.csv")),
    DiffTest(name="whatif_no_recompute_none", cmd=["whatif", "--no-recompute", "{trace}"],
             trace=fx("train_no_checkpoint"), out=out("whatif_no_recompute_none.txt")),
    DiffTest(name="whatif_no_steps", cmd=["whatif", "{trace}"], trace=fx("no_gpu"),
             out=out("whatif_no_steps.err"), rc=2, stderr=True),
    DiffTest(name="whatif_bad_batch", cmd=["whatif", "--batch", "zero", "{trace}"], trace=fx("train_sync"),
             out=out("whatif_bad_batch.err"), rc=2, stderr=True),
    # Priced at an untraced host speed: host time x 0.8 (2.104 of the 2.63 ms step).
    DiffTest(name="whatif_untraced", cmd=["whatif", "--batch", "4", "--untraced-step-ms", "2.104", "{trace}"],
             trace=fx("sync_host_bound"), out=out("whatif_untraced.txt")),
    DiffTest(name="analyze_untraced", cmd=["analyze", "--untraced-step-ms", "2.104", "{trace}"],
             trace=fx("sync_host_bound"), out=out("analyze_untraced.txt")),
    DiffTest(name="whatif_untraced_csv", cmd=["whatif", "--batch", "4", "--untraced-step-ms", "2.104", "--format",
                                              "csv", "{trace}"],
             trace=fx("sync_host_bound"), out=out("whatif_untraced.csv")),
    DiffTest(name="analyze_untraced_json", cmd=["analyze", "--untraced-step-ms", "2.104", "--format", "json",
                                                "{trace}"],
             trace=fx("sync_host_bound"), out=out("analyze_untraced.json")),
    # The untraced step measured by the trace itself (the iteration hook's mark of a `profile
    # --steps` window, analysis/whatif/untraced.h): shown by default, priced with
    # --untraced-step-ms measured: the same 2.104 ms, priced as analyze_untraced.
    DiffTest(name="analyze_untraced_window_shown", cmd=["analyze", "{trace}"], trace=fx("sync_host_bound") + "+" + fx("untraced_mark_window"),
             out=out("analyze_untraced_window_shown.txt")),
    DiffTest(name="analyze_untraced_measured", cmd=["analyze", "--untraced-step-ms", "measured", "{trace}"],
             trace=fx("sync_host_bound") + "+" + fx("untraced_mark_window"), out=out("analyze_untraced_measured.txt")),
    DiffTest(name="whatif_untraced_measured", cmd=["whatif", "--batch", "4", "--untraced-step-ms", "measured",
                                                   "{trace}"],
             trace=fx("sync_host_bound") + "+" + fx("untraced_mark_window"), out=out("whatif_untraced_measured.txt")),
    # Untraced iterations slower than the traced step, or unsteady (1.0-2.6 ms: over 1.5x apart):
    # not used even when asked; the line says why.
    DiffTest(name="analyze_untraced_measured_slower", cmd=["analyze", "--untraced-step-ms", "measured", "{trace}"],
             trace=fx("sync_host_bound") + "+" + fx("untraced_mark_slower"), out=out("analyze_untraced_measured_slower.txt")),
    DiffTest(name="analyze_untraced_measured_unsteady",
             cmd=["analyze", "--untraced-step-ms", "measured", "{trace}"],
             trace=fx("sync_host_bound") + "+" + fx("untraced_mark_unsteady"), out=out("analyze_untraced_measured_unsteady.txt")),
    # A trace without the mark: 'measured' prices as without the flag.
    DiffTest(name="analyze_untraced_measured_no_mark", cmd=["analyze", "--untraced-step-ms", "measured", "{trace}"],
             trace=fx("sync_host_bound"), out=out("analyze_untraced_measured_no_mark.txt")),
    DiffTest(name="whatif_bad_untraced", cmd=["whatif", "--untraced-step-ms", "-3", "{trace}"],
             trace=fx("train_sync"), out=out("whatif_bad_untraced.err"), rc=2, stderr=True),
    DiffTest(name="analyze_host_sync_negative", cmd=["analyze", "{trace}"], trace=fx("sync_outside_steps"),
             out=out("analyze_sync_outside_steps.txt")),
    DiffTest(name="analyze_launch_bound", cmd=["analyze", "{trace}"], trace=fx("launch_bound"),
             out=out("analyze_launch_bound.txt")),
    # Data-dependent round trips (torch.nonzero per expert in MoE.forward) against a
    # per-step loss.item() in the loop: the first data_dependent_sync's, the second
    # host_sync's; launch_bound prices CUDA graphs over the attention stretch only.
    DiffTest(name="analyze_data_dependent_sync", cmd=["analyze", "--all", "{trace}"],
             trace=fx("moe_nonzero"), out=out("analyze_moe_nonzero.txt")),
    DiffTest(name="analyze_launch_bound_negative", cmd=["analyze", "{trace}"], trace=fx("queued_short_kernels"),
             out=out("analyze_queued_short_kernels.txt")),
    DiffTest(name="analyze_host_wait", cmd=["analyze", "{trace}"], trace=fx("host_wait"),
             out=out("analyze_host_wait.txt")),
    # A library range open all run (NCCL's init) is never the "where" of step work.
    DiffTest(name="analyze_host_wait_library_range", cmd=["analyze", "{trace}"],
             trace=fx("host_wait_library_range"), out=out("analyze_host_wait_library_range.txt")),
    DiffTest(name="analyze_pageable", cmd=["analyze", "{trace}"], trace=fx("pageable_memcpy"),
             out=out("analyze_pageable.txt")),
    DiffTest(name="analyze_pinned_negative", cmd=["analyze", "{trace}"], trace=fx("pinned_memcpy"),
             out=out("analyze_pinned.txt")),
    DiffTest(name="analyze_sync_memcpy", cmd=["analyze", "{trace}"], trace=fx("sync_memcpy"),
             out=out("analyze_sync_memcpy.txt")),
    DiffTest(name="analyze_offload", cmd=["analyze", "{trace}"], trace=fx("train_offload"),
             out=out("analyze_offload.txt")),
    DiffTest(name="analyze_fp32_gemm", cmd=["analyze", "{trace}"], trace=fx("train_fp32"),
             out=out("analyze_fp32.txt")),
    DiffTest(name="analyze_fp32_gemm_unknown_gpu", cmd=["analyze", "{trace}"],
             trace=fx("train_fp32_unknown_gpu"), out=out("analyze_fp32_unknown_gpu.txt")),
    DiffTest(name="analyze_fp32_gemm_negative_sm70", cmd=["analyze", "{trace}"], trace=fx("train_fp32_sm70"),
             out=out("analyze_fp32_sm70.txt")),
    # No devices row: fp32_gemm cannot decide; the undecided line is in the text and in the
    # third table of --format json|csv.
    DiffTest(name="analyze_fp32_gemm_undecided", cmd=["analyze", "{trace}"],
             trace=fx("train_fp32_no_device"), out=out("analyze_fp32_no_device.txt")),
    DiffTest(name="analyze_undecided_json", cmd=["analyze", "--format", "json", "{trace}"],
             trace=fx("train_fp32_no_device"), out=out("analyze_fp32_no_device.json")),
    DiffTest(name="analyze_undecided_csv", cmd=["analyze", "--format", "csv", "{trace}"],
             trace=fx("train_fp32_no_device"), out=out("analyze_fp32_no_device.csv")),
    DiffTest(name="analyze_memory_capacity", cmd=["analyze", "{trace}"], trace=fx("memory_full"),
             out=out("analyze_memory_full.txt")),
    DiffTest(name="analyze_memory_negative", cmd=["analyze", "{trace}"], trace=fx("memory_ok"),
             out=out("analyze_memory_ok.txt")),
    DiffTest(name="analyze_all_below_threshold", cmd=["analyze", "--all", "--format", "csv", "{trace}"],
             trace=fx("train_sync"), out=out("analyze_sync_all.csv")),
    DiffTest(name="analyze_json", cmd=["analyze", "--format", "json", "{trace}"], trace=fx("train_data_starved"),
             out=out("analyze_data_loading.json")),
    DiffTest(name="analyze_empty", cmd=["analyze", "{trace}"], trace=fx("empty"), out=out("analyze_empty.txt")),
    DiffTest(name="analyze_no_gpu", cmd=["analyze", "{trace}"], trace=fx("no_gpu"), out=out("analyze_no_gpu.txt")),
    DiffTest(name="analyze_multi_device", cmd=["analyze", "{trace}"], trace=fx("multi_device"),
             out=out("analyze_multi_device.txt")),
    DiffTest(name="analyze_cut_off", cmd=["analyze", "{trace}"], trace=fx("cut_off"), finalize=False,
             out=out("analyze_cut_off.txt")),
    DiffTest(name="analyze_two_ranks_csv", cmd=["analyze", "--format", "csv", "{traces}"],
             trace=[fx("train_healthy"), fx("train_data_starved")], out=out("analyze_two_ranks.csv")),
    DiffTest(name="analyze_rules_list", cmd=["analyze", "--rules"], out=out("analyze_rules.txt")),

    # diff
    DiffTest(name="diff_starved_vs_healthy", cmd=["diff", "{traces}"],
             trace=[fx("train_data_starved"), fx("train_healthy")], out=out("diff_starved_vs_healthy.txt")),
    DiffTest(name="diff_fp32_vs_bf16_csv", cmd=["diff", "--format", "csv", "{traces}"],
             trace=[fx("train_fp32"), fx("train_healthy")], out=out("diff_fp32_vs_bf16.csv")),
    DiffTest(name="diff_fail_if_slower", cmd=["diff", "--fail-if-slower", "3", "--format", "csv", "{traces}"],
             trace=[fx("train_healthy"), fx("train_data_starved")], out=out("diff_fail_if_slower.err"), rc=1,
             stderr=True),
    DiffTest(name="diff_fail_if_slower_faster", cmd=["diff", "--fail-if-slower", "3", "--format", "csv",
                                                     "{traces}"],
             trace=[fx("train_data_starved"), fx("train_healthy")], out=out("diff_fail_if_slower_ok.err"), rc=0,
             stderr=True),
    DiffTest(name="diff_fail_if_slower_bad", cmd=["diff", "--fail-if-slower", "x", "{traces}"],
             trace=[fx("train_healthy"), fx("train_healthy")], out=out("diff_fail_if_slower_bad.err"), rc=2,
             stderr=True),
    DiffTest(name="diff_same", cmd=["diff", "--limit", "3", "{traces}"], trace=[fx("train_healthy"), fx("train_healthy")],
             out=out("diff_same.txt")),
    DiffTest(name="diff_steps_vs_none", cmd=["diff", "{traces}"], trace=[fx("recipes"), fx("profiler_steps")],
             out=out("diff_steps_vs_none.txt")),
    DiffTest(name="diff_empty", cmd=["diff", "{traces}"], trace=[fx("empty"), fx("empty")], out=out("diff_empty.txt")),
    DiffTest(name="diff_needs_two", cmd=["diff", "{trace}"], trace=fx("empty"), out=out("diff_needs_two.err"), rc=2,
             stderr=True),
]
