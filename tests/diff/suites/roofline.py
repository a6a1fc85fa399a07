# stepscope roofline / bench without a GPU: kernel selection from a trace,
# results stored in a trace evaluated against fixture ceilings, the chart,
# stored ceilings, and the errors.
#
# steps.sql: step 1 is the median of steps 0..2; its kernels by GPU time are
#   gemm 132x1x1 500 ns (50.5% of 990 ns), elementwise 2 x 120 ns (24.2%),
#   gemm 66x1x1 200 ns (20.2%), layer norm 50 ns (5.1%).
# stored.sql with ceilings.json (DRAM 3 TB/s, L2 8 TB/s, bf16 790 TF, fp32 60 TF):
#   gemm: 137.439 GFLOP in 200 us = 687.2 TFLOP/s; 1374.39 FLOP/B; 100 MB / 200 us =
#         500 GB/s; compute-bound, 137.439e9 / 790e12 = 173.97 us = 87.0% of 200 us.
#   gelu: 22 * 2^25 = 0.738 GFLOP in 60 us = 12.3 TFLOP/s; 5.50 FLOP/B; 2^27 B / 60 us
#         = 2237.0 GB/s; DRAM-bound, 2^27 / 3e12 = 44.74 us = 74.6% of 60 us.
TESTS = [
    DiffTest(name="roofline_dry_run_median_step", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run"], out="roofline/dry_run_median.txt"),
    DiffTest(name="roofline_dry_run_step0_top2_csv", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--step", "0", "--top", "2", "--format", "csv"],
             out="roofline/dry_run_step0_top2.csv"),
    DiffTest(name="roofline_dry_run_kernel_regex", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--kernel", "nvjet|layer_norm", "--format", "csv"],
             out="roofline/dry_run_regex.csv"),
    DiffTest(name="roofline_show_stored", trace="roofline/stored.sql",
             cmd=["roofline", "--from", "{trace}", "--ceilings", "{fixtures}/roofline/ceilings.json",
                  "--svg", "{tmp}/r.svg"],
             out="roofline/show_stored.txt",
             post=["sh", "-c", "grep -c '<circle' {tmp}/r.svg; grep -o 'tensor bf16 790.0 TFLOP/s' {tmp}/r.svg"]),
    DiffTest(name="roofline_show_stored_json", trace="roofline/stored.sql",
             cmd=["roofline", "--from", "{trace}", "--ceilings", "{fixtures}/roofline/ceilings.json",
                  "--no-svg", "--format", "json"],
             out="roofline/show_stored.json"),
    DiffTest(name="bench_show_stored_ceilings", cmd=["bench", "--show", "--ceilings", "{fixtures}/roofline/ceilings.json"],
             out="roofline/bench_show.txt"),
    DiffTest(name="roofline_no_results_stored", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}"], out="roofline/no_results.err", rc=2, stderr=True),
    # Issue 36: "no kernels" was exit 1; it is bad input like the others (exit 2).
    DiffTest(name="roofline_no_kernel_matches_is_exit_2", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--kernel", "no_such_kernel"],
             out="roofline/no_kernel_matches.err", rc=2, stderr=True),
    # Issue 36: --kernel REGEX on a name of 40,002 characters was a stack overflow (SIGSEGV);
    # names longer than 1,024 characters never match, and a note counts them.
    DiffTest(name="roofline_kernel_regex_long_name", trace="roofline/long_name.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--kernel", "gemm.*x"],
             out="roofline/long_name.txt"),
    DiffTest(name="roofline_kernel_regex_long_name_note", trace="roofline/long_name.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--kernel", "gemm.*x"],
             out="roofline/long_name.err", stderr=True),
    DiffTest(name="roofline_kernel_regex_only_long_name_is_exit_2", trace="roofline/long_name.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--kernel", "gemma+x"],
             out="roofline/long_name_only.err", rc=2, stderr=True),
    DiffTest(name="roofline_unknown_step_is_exit_2", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--step", "9"], out="roofline/bad_step.err",
             rc=2, stderr=True),
    DiffTest(name="roofline_bad_regex_is_exit_2", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--dry-run", "--kernel", "("], out="roofline/bad_regex.err",
             rc=2, stderr=True),
    DiffTest(name="roofline_without_command_is_exit_2", cmd=["roofline", "--top", "3"],
             out="roofline/no_command.err", rc=2, stderr=True),
    DiffTest(name="roofline_bad_cache_control_is_exit_2", trace="roofline/steps.sql",
             cmd=["roofline", "--from", "{trace}", "--cache-control", "some", "--", "true"],
             out="roofline/bad_cache_control.err", rc=2, stderr=True),
    DiffTest(name="bench_unknown_ceiling_is_exit_2", cmd=["bench", "--only", "tensor_fp4"],
             out="roofline/bench_bad_only.err", rc=2, stderr=True),
]
