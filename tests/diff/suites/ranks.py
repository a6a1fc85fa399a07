# `stepscope summarize` and `stepscope ranks` on synthetic multi-rank jobs.
# The fixtures are written by tests/diff/fixtures/ranks/gen_fixtures.py, whose
# docstring gives the timeline every expected number follows from.
def job(name, ranks):
    return [f"ranks/{name}_r{r}.sql" for r in ranks]


TESTS = [
    # rank 1's host is 5 ms late from step 3: others spin 5.5 ms/step in NCCL, 5.0 exposed; cause host,
    # late launches
    DiffTest(name="ranks_host_late", cmd=["ranks", "{traces}"], trace=job("host", [0, 1]), out="ranks/host.txt"),
    DiffTest(name="ranks_host_collectives_csv", cmd=["ranks", "{traces}", "--report", "collectives", "--format", "csv"],
             trace=job("host", [0, 1]), out="ranks/host_collectives.csv"),
    DiffTest(name="ranks_host_steps_json", cmd=["ranks", "{traces}", "--report", "steps,verdict", "--format", "json"],
             trace=job("host", [0, 1]), out="ranks/host_steps.json"),
    # nobody is slow: no straggler
    DiffTest(name="ranks_balanced_no_straggler", cmd=["ranks", "{traces}"], trace=job("balanced", [0, 1]),
             out="ranks/balanced.txt"),
    # rank 2's kernel is 4 ms slower from step 5: cause compute (slower kernels), NVRx GPU scores below 0.75
    DiffTest(name="ranks_compute", cmd=["ranks", "{traces}", "--report", "ranks,sections,scores,verdict"],
             trace=job("compute", [0, 1, 2]), out="ranks/compute.txt"),
    DiffTest(name="ranks_compute_threshold_window",
             cmd=["ranks", "{traces}", "--threshold", "0.6", "--window", "2", "--report", "ranks,scores"],
             trace=job("compute", [0, 1, 2]), out="ranks/compute_threshold_window.txt"),
    # rank 1's program launches 8 x 0.5 ms of sgemm_extra (no other rank runs it) from step 3:
    # the others wait 4 ms; kernel time +4 ms, all extra work, no launch lateness: cause host, extra work
    DiffTest(name="ranks_extra_work_is_host", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
             trace=job("extrawork", [0, 1]), out="ranks/extrawork.txt"),
    DiffTest(name="ranks_extra_work_verdict_json", cmd=["ranks", "{traces}", "--report", "verdict", "--format", "json"],
             trace=job("extrawork", [0, 1]), out="ranks/extrawork_verdict.json"),
    # rank 2 runs gemm_fwd 3 times per step instead of once (same 2 ms) from step 4: host, extra work
    DiffTest(name="ranks_more_instances_is_host", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
             trace=job("moreinst", [0, 1, 2]), out="ranks/moreinst.txt"),
    DiffTest(name="ranks_compute_verdict_csv", cmd=["ranks", "{traces}", "--report", "verdict", "--format", "csv"],
             trace=job("compute", [0, 1, 2]), out="ranks/compute_verdict.csv"),
    # world size 4 without rank 2; rank 3's collectives start 3 ms late (2 ms exposed): cause communication
    # ranks 2 and 3 both late (5 and 5.3 ms): the others wait 5.3 ms for rank 3, which alone holds
    # the step back 0.3 ms (rank 2's wait): no straggler named, a note with both (session 26)
    DiffTest(name="ranks_two_late_ranks_of_four", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
             trace=job("pair", [0, 1, 2, 3]), out="ranks/pair.txt"),
    DiffTest(name="ranks_missing_rank", cmd=["ranks", "{traces}"], trace=job("missing", [0, 1, 3]),
             out="ranks/missing.txt"),
    # rank 1 traced steps 2-7 only
    DiffTest(name="ranks_unequal_steps", cmd=["ranks", "{traces}"], trace=job("unequal", [0, 1]),
             out="ranks/unequal.txt"),
    # two hosts, node1's trace clock 3 s ahead, corrected by meta.wall_clock_offset_ns
    DiffTest(name="ranks_clock_offsets_between_hosts", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
             trace=job("clock", [0, 1]), out="ranks/clock.txt"),
    # node1's clock 3 ms ahead with no record of it: a warning, then --align collectives fixes it
    DiffTest(name="ranks_clock_skew_warns", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
             trace=job("skew", [0, 1]), out="ranks/skew.txt"),
    DiffTest(name="ranks_clock_skew_aligned", cmd=["ranks", "{traces}", "--align", "collectives", "--report", "ranks,verdict"],
             trace=job("skew", [0, 1]), out="ranks/skew_aligned.txt"),
    # no NCCL: the verdict comes from the per-step NVRx GPU scores
    DiffTest(name="ranks_no_nccl_scores", cmd=["ranks", "{traces}", "--report", "ranks,scores,verdict"],
             trace=job("nonccl", [0, 1]), out="ranks/nonccl.txt"),
    # the summary file, and ranks reading a directory of summaries
    DiffTest(name="summarize_prints_json", cmd=["summarize", "{trace}", "-o", "-"], trace=job("host", [1]),
             out="ranks/summary_host_r1.json"),
    DiffTest(name="summarize_then_ranks_dir", cmd=["summarize", "{traces}", "--output-dir", "{tmp}"],
             trace=job("host", [0, 1]), out="ranks/summarize_then_ranks.txt",
             post=["sh", "-c", "\"$STEPSCOPE_BUILD_DIR/bin/stepscope\" ranks {tmp} --report verdict"]),
    # bad input: exit code 2 and a one-line error
    DiffTest(name="ranks_duplicate_rank_is_exit_2", cmd=["ranks", "{traces}"], trace=job("host", [0, 0]),
             out="ranks/duplicate.err", rc=2, stderr=True),
    DiffTest(name="ranks_not_a_summary_is_exit_2", cmd=["ranks", "{traces}"],
             trace=["ranks/host_r0.sql", "ranks/not_a_summary.json"], out="ranks/not_a_summary.err", rc=2,
             stderr=True),
    DiffTest(name="ranks_unknown_report_is_exit_2", cmd=["ranks", "{traces}", "--report", "heatmap"],
             trace=job("host", [0, 1]), out="ranks/unknown_report.err", rc=2, stderr=True),
    DiffTest(name="summarize_output_needs_one_trace", cmd=["summarize", "{traces}", "-o", "x.json"],
             trace=job("host", [0, 1]), out="ranks/summarize_two_outputs.err", rc=2, stderr=True),
]
# no step markers: each trace is one step 0; rank 1's gemm runs 2 ms longer, rank 0 waits 2 ms
TESTS.append(DiffTest(name="ranks_without_step_markers", cmd=["ranks", "{traces}", "--report", "ranks,collectives,verdict"],
                      trace=["ranks/nosteps_r0.sql", "ranks/nosteps_r1.sql"], out="ranks/nosteps.txt"))

# issue 34: loops with no step markers get the steps `steps` finds (the kernel sequence; profile's
# 'iteration N' ranges when present), and a loader straggler is data loading, not communication
TESTS += [
    DiffTest(name="ranks_no_marks_kernel_sequence", cmd=["ranks", "{traces}"], trace=job("nomarks", [0, 1]),
             out="ranks/nomarks.txt"),
    DiffTest(name="ranks_iteration_ranges", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
             trace=job("iterations", [0, 1]), out="ranks/iterations.txt"),
    DiffTest(name="ranks_loader_is_data_loading", cmd=["ranks", "{traces}", "--report", "ranks,sections,verdict"],
             trace=job("loader", [0, 1]), out="ranks/loader.txt"),
    DiffTest(name="ranks_loader_no_marks", cmd=["ranks", "{traces}", "--report", "steps,verdict"],
             trace=job("loader_nomarks", [0, 1]), out="ranks/loader_nomarks.txt"),
    DiffTest(name="ranks_loader_verdict_json", cmd=["ranks", "{traces}", "--report", "verdict", "--format", "json"],
             trace=job("loader", [0, 1]), out="ranks/loader_verdict.json"),
    DiffTest(name="ranks_host_python_work", cmd=["ranks", "{traces}", "--report", "verdict"],
             trace=job("hostpy", [0, 1]), out="ranks/hostpy.txt"),
    DiffTest(name="ranks_host_cpu_contention", cmd=["ranks", "{traces}", "--report", "verdict"],
             trace=job("hostcontention", [0, 1]), out="ranks/hostcontention.txt"),
    DiffTest(name="summarize_kernel_sequence_json", cmd=["summarize", "{trace}", "-o", "-"],
             trace=job("nomarks", [1]), out="ranks/summary_nomarks_r1.json"),
]

# Real 2xH200 runs of the reference DDP workload (train_gpt.py --ddp --preset small --steps 20
# --warmup 3), summarized with `stepscope summarize` (docs/ranks.md, "Measured on two GPUs"):
#   rk12_host: rank 1 sleeps 5 ms on the host before its optimizer each step -> rank 1, host, late
#              launches, ~4.8 ms
#   rk12_even: healthy -> no straggler
#   rk9_even:  "healthy", but rank 1's host launched its optimizer late in steps 7-19 -> rank 1, host
#   rk9_slow:  --slow-rank 1 --slow-ms 5 (~80 ms of extra sgemm per step) -> rank 1, host, extra work
#   rk13_*:    the same commands in a later session (a fresh 2xH200 machine): rk13_slow -> rank 1,
#              host, extra work (~78 ms); rk13_even1, rk13_even2 (no slow rank) -> no straggler
for _run in ["rk12_host", "rk12_even", "rk9_even", "rk9_slow", "rk13_slow", "rk13_even1", "rk13_even2"]:
    TESTS.append(DiffTest(name=f"ranks_real_{_run}", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
                          trace=[f"ranks/real/{_run}_r{r}.summary.json" for r in (0, 1)],
                          out=f"ranks/real_{_run}.txt"))

# tests/gpu/ddp_stragglers.py on a lent 2xH200, 2026-11-27 (a plain DDP GPT-2 loop, no step markers;
# rank 1 straggles by kind; tests/fixtures/gpu/README.md): the rank summaries `summarize` made on the
# device. balanced -> no straggler; loader -> rank 1, data loading; batch -> rank 1, GPU work, larger
# kernels; extragpu -> rank 1, GPU work, extra kernels.
for _run in ["balanced", "loader", "batch", "extragpu"]:
    TESTS.append(DiffTest(name=f"ranks_real_ddp_{_run}", cmd=["ranks", "{traces}", "--report", "ranks,verdict"],
                          trace=[f"ranks/real/ddp_{_run}_r{r}.summary.json" for r in (0, 1)],
                          out=f"ranks/real_ddp_{_run}.txt"))
# The waiting rank's own analyze (rank 0 of the loader run, steps 12-20): collective_wait leads.
TESTS.append(DiffTest(name="analyze_real_ddp_loader_waiting_rank", cmd=["analyze", "{trace}"],
                      trace="../../fixtures/gpu/h200_ddp_loader_r0_steps12_20.sqlite.gz",
                      out="ranks/real_ddp_loader_r0_analyze.txt"))

# tests/gpu/ddp_stragglers.py with in-process phases on a lent 4xH100 host, 2 ranks, 2026-11-28
# (tests/fixtures/gpu/README.md): after 12 warm-up steps, 8 phases of 8 steps, rank 1 straggling in
# the odd ones; the traces cut to iterations 19-30 (A: 19-20 and 29-30, B: 21-28). summarize, then
# ranks over the straggling steps (the first of the phase left out) and over the balanced ones.
#   hostcpu: rank 1 pinned to one CPU with 3 busy processes on it in B -> host CPU, CPU contention
#            (its autograd thread, which launches the backward, waits for the CPU)
#   hostpy:  rank 1 runs 15 ms of log_metrics per step in B -> host CPU, Python work
for _kind in ["hostcpu", "hostpy"]:
    TESTS.append(DiffTest(
        name=f"ranks_real_h100_ddp_{_kind}_phases", cmd=["summarize", "{traces}", "--output-dir", "{tmp}"],
        trace=[f"../../fixtures/gpu/h100_ddp_{_kind}_r{r}_steps19_30.sqlite.gz" for r in (0, 1)],
        out=f"ranks/real_h100_ddp_{_kind}_phases.txt",
        post=["sh", "-c", "\"$STEPSCOPE_BUILD_DIR/bin/stepscope\" ranks {tmp} --steps 22-28 --report ranks,verdict"
              " && \"$STEPSCOPE_BUILD_DIR/bin/stepscope\" ranks {tmp} --steps 19-20,29-30 --report verdict"]))
TESTS.append(DiffTest(name="ranks_steps_bad_is_exit_2", cmd=["ranks", "{traces}", "--steps", "9-3"],
                      trace=job("host", [0, 1]), out="ranks/steps_bad.err", rc=2, stderr=True))
TESTS.append(DiffTest(name="ranks_steps_none_selected_is_exit_2", cmd=["ranks", "{traces}", "--steps", "50-60"],
                      trace=job("host", [0, 1]), out="ranks/steps_none.err", rc=2, stderr=True))
TESTS.append(DiffTest(name="ranks_host_steps_selected", cmd=["ranks", "{traces}", "--steps", "0-2,5", "--report", "steps,ranks,verdict"],
                      trace=job("host", [0, 1]), out="ranks/host_steps_selected.txt"))
