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
