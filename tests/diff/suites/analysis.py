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
                                           "--output", "{tmp}/out", "{trace}"], trace=fx("recipes"),
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
    DiffTest(name="analyze_host_sync", cmd=["analyze", "{trace}"], trace=fx("train_sync"),
             out=out("analyze_host_sync.txt")),
    DiffTest(name="analyze_host_sync_negative", cmd=["analyze", "{trace}"], trace=fx("sync_outside_steps"),
             out=out("analyze_sync_outside_steps.txt")),
    DiffTest(name="analyze_launch_bound", cmd=["analyze", "{trace}"], trace=fx("launch_bound"),
             out=out("analyze_launch_bound.txt")),
    DiffTest(name="analyze_launch_bound_negative", cmd=["analyze", "{trace}"], trace=fx("queued_short_kernels"),
             out=out("analyze_queued_short_kernels.txt")),
    DiffTest(name="analyze_host_wait", cmd=["analyze", "{trace}"], trace=fx("host_wait"),
             out=out("analyze_host_wait.txt")),
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
    DiffTest(name="analyze_fp32_gemm_negative_sm70", cmd=["analyze", "{trace}"], trace=fx("train_fp32_sm70"),
             out=out("analyze_fp32_sm70.txt")),
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
    DiffTest(name="diff_same", cmd=["diff", "--limit", "3", "{traces}"], trace=[fx("train_healthy"), fx("train_healthy")],
             out=out("diff_same.txt")),
    DiffTest(name="diff_steps_vs_none", cmd=["diff", "{traces}"], trace=[fx("recipes"), fx("profiler_steps")],
             out=out("diff_steps_vs_none.txt")),
    DiffTest(name="diff_empty", cmd=["diff", "{traces}"], trace=[fx("empty"), fx("empty")], out=out("diff_empty.txt")),
    DiffTest(name="diff_needs_two", cmd=["diff", "{trace}"], trace=fx("empty"), out=out("diff_needs_two.err"), rc=2,
             stderr=True),
]
