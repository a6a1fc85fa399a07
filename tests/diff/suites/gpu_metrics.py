# GPU metrics over time (`profile --gpu-metrics`, CUPTI PM sampling; table gpu_metrics, schema 1.8):
# the gpu_metrics_sum recipe and the export's counter tracks on a trace written by
# tests/diff/fixtures/gpu_metrics/gen_pm.py, whose docstring computes the expected means by hand
# (sm_active 81.82, tensor_active 40.91, dram_read 31.36 %, dram_read_bw 9.545e11 B/s).
TESTS = [
    DiffTest(name="gpu_metrics_sum", cmd=["stats", "-r", "gpu_metrics_sum", "{trace}"],
             trace="gpu_metrics/pm.sql", out="gpu_metrics/sum.txt"),
    DiffTest(name="gpu_metrics_sum_csv", cmd=["stats", "-r", "gpu_metrics_sum", "--format", "csv", "{trace}"],
             trace="gpu_metrics/pm.sql", out="gpu_metrics/sum.csv"),
    # The GEMM alone (--time-range since the trace start 0.999 s: the samples starting at 1-9.5 ms, k = 1-10).
    DiffTest(name="gpu_metrics_sum_gemm", cmd=["stats", "-r", "gpu_metrics_sum", "--time-range", "1ms:10.5ms",
                                                "{trace}"],
             trace="gpu_metrics/pm.sql", out="gpu_metrics/sum_gemm.txt"),
    # A trace without GPU metrics: an empty table.
    DiffTest(name="gpu_metrics_sum_none", cmd=["stats", "-r", "gpu_metrics_sum", "{trace}"],
             trace="export/small.sql", out="gpu_metrics/sum_none.txt"),
    # The export: one counter track per device and metric, a point per sample.
    DiffTest(name="gpu_metrics_export_tracks",
             cmd=["export", "--timeline-format", "chrome", "-q", "{trace}", "-o", "{tmp}/out.json"],
             trace="gpu_metrics/pm.sql", out="gpu_metrics/export_tracks.txt",
             post=["python3", "-c", "import json, collections; d = json.load(open('out.json')); "
                   "ev = d['traceEvents'] if isinstance(d, dict) else d; "
                   "c = collections.Counter((e['name'], e['pid']) for e in ev if e.get('ph') == 'C'); "
                   "[print(n, p, k) for (n, p), k in sorted(c.items())]; "
                   "print([(e['ts'], e['args']) for e in ev if e.get('ph') == 'C' and 'tensor' in e['name']][:12])"]),
]
TESTS += [
    # A trace of an older layout (1.2: no gpu_metrics table) reads as one without metrics.
    DiffTest(name="gpu_metrics_sum_v1_2", cmd=["stats", "-r", "gpu_metrics_sum", "{trace}"],
             trace="../../fixtures/schema/v1.2_nvtx_app.sqlite.gz", out="gpu_metrics/sum_none.txt"),
]

# The rules that read the GPU metrics (docs/rules.md, tensor_idle and memory_bound) on the real
# H200 traces of tests/fixtures/gpu/README.md ("h200_pm_*"): evidence-only findings (not priced).
G = "../../fixtures/gpu/"
TESTS += [
    # train_gpt small with fp32 GEMMs, steps 2-7: the GPU busy (gr_active 99.9%) with its tensor
    # pipes idle (1.8%) in most samples, naming the sgemm kernels; fp32_gemm fires too, and
    # tensor_idle says it corroborates it instead of giving its own fix.
    DiffTest(name="gpu_metrics_analyze_fp32", cmd=["analyze", "{trace}"],
             trace=G + "h200_pm_small_fp32_s2_7.sqlite.gz", out="gpu_metrics/analyze_fp32.txt"),
    DiffTest(name="gpu_metrics_analyze_fp32_json", cmd=["analyze", "--format", "json", "{trace}"],
             trace=G + "h200_pm_small_fp32_s2_7.sqlite.gz", out="gpu_metrics/analyze_fp32.json"),
    # bf16, host-bound (gr_active ~50%, tensor_active 10.8%): neither rule reports; --all shows
    # what they measured, under their thresholds (a few busy samples of non-tensor kernels, a few
    # of DRAM near its peak).
    DiffTest(name="gpu_metrics_analyze_bf16", cmd=["analyze", "{trace}"],
             trace=G + "h200_pm_small_bf16_s2_7.sqlite.gz", out="gpu_metrics/analyze_bf16.txt"),
    DiffTest(name="gpu_metrics_analyze_bf16_all", cmd=["analyze", "--all", "{trace}"],
             trace=G + "h200_pm_small_bf16_s2_7.sqlite.gz", out="gpu_metrics/analyze_bf16_all.txt"),
    # No NVTX steps: one bf16 GEMM x60, then a 2 GiB copy kernel x300 at ~4.3 TB/s (read + write)
    # on an H200 (peak 4.81 TB/s in its devices row). The analysis finds kernel-sequence steps (the
    # copy kernel repeats: 301 steps of ~1 ms), so the analyzed time is the copy phase: memory_bound
    # names the copy's stretch; its samples are memory_bound's, not tensor_idle's (busy, no tensor
    # work), and the GEMM phase is outside the steps.
    DiffTest(name="gpu_metrics_analyze_gemm_copy", cmd=["analyze", "{trace}"],
             trace=G + "h200_pm_gemm_copy.sqlite.gz", out="gpu_metrics/analyze_gemm_copy.txt"),
    # The same with this machine's bench results (--ceilings: dram_bw 4.3e12 for the H200): the
    # measured ceiling is the peak, and the finding says so.
    DiffTest(name="gpu_metrics_analyze_gemm_copy_bench",
             cmd=["analyze", "--ceilings", "{fixtures}/gpu_metrics/ceilings_h200_bench.json", "{trace}"],
             trace=G + "h200_pm_gemm_copy.sqlite.gz", out="gpu_metrics/analyze_gemm_copy_bench.txt"),
    # The synthetic trace of gen_pm.py (no steps, sm_active without gr_active, DRAM read without
    # write): tensor_idle reads sm_active and names the copy kernel; memory_bound cannot decide.
    DiffTest(name="gpu_metrics_analyze_synthetic", cmd=["analyze", "{trace}"],
             trace="gpu_metrics/pm.sql", out="gpu_metrics/analyze_synthetic.txt"),
    # Negative: a trace without GPU metrics (the fp32 scenario of the same workload, recorded
    # without --gpu-metrics): fp32_gemm alone, no line of either rule.
    DiffTest(name="gpu_metrics_analyze_none", cmd=["analyze", "{trace}"],
             trace=G + "fp32.sqlite.gz", out="analysis_gpu/analyze_fp32.txt"),
]
