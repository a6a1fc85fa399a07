#!/usr/bin/env python3
"""`stats --format csv --nsys-names` is read by a script written for `nsys stats --format csv`
(issue 37).

Such a script opens one report's CSV (`nsys stats -r REPORT --format csv -o PREFIX` writes
PREFIX_REPORT.csv; `stats -o DIR/` writes DIR/REPORT.csv) with csv.DictReader and reads
each row by nsys's column names. NSYS_COLUMNS below are those names, in nsys's order, as
nsys prints them for its reports of the same name (Nsight Systems' stats reports:
cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum,
osrt_sum; the same headers head its text tables). Checked here:

- every report's header starts with nsys's columns, in nsys's order; a column of ours that
  nsys lacks (osrt_sum's State) comes only after them;
- a DictReader script (top kernel, total API time, per-operation counts, ...) reads the
  same numbers from the nsys-named CSV as from our default (machine-named) CSV;
- `--format json --nsys-names` uses the same names as keys; `--nsys-names` without
  --format csv|json is exit 2 with one line.

usage: nsys_csv_test.py BUILD_DIR
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
MAKE_TRACE = os.path.join(BUILD, "tests", "make_trace")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(SRC, "tests", "diff", "fixtures")

STAT = ["Time (%)", "Total Time (ns)", "{count}", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"]


def stat(count, *labels):
    return [c.format(count=count) for c in STAT] + list(labels)


NSYS_COLUMNS = {
    "cuda_gpu_kern_sum": stat("Instances", "Name"),
    "cuda_api_sum": stat("Num Calls", "Name"),
    "cuda_gpu_mem_time_sum": stat("Count", "Operation"),
    "cuda_gpu_mem_size_sum": ["Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)", "StdDev (MB)",
                              "Operation"],
    "nvtx_sum": stat("Instances", "Style", "Range"),
    "osrt_sum": stat("Num Calls", "Name"),
}
# Our machine names of the same columns (the default CSV), to compare values.
OURS = {
    "Time (%)": "time_pct", "Total Time (ns)": "total_ns", "Instances": "instances", "Num Calls": "instances",
    "Avg (ns)": "avg_ns", "Med (ns)": "med_ns", "Min (ns)": "min_ns", "Max (ns)": "max_ns",
    "StdDev (ns)": "stddev_ns", "Name": "name", "Operation": "operation", "Style": "style", "Range": "range",
    "Total (MB)": "total_mb", "Avg (MB)": "avg_mb", "Med (MB)": "med_mb", "Min (MB)": "min_mb", "Max (MB)": "max_mb",
    "StdDev (MB)": "stddev_mb",
}


def ours(report, nsys_name):
    if nsys_name == "Count":
        return "count" if report == "cuda_gpu_mem_size_sum" else "instances"
    return OURS[nsys_name]


# --- what a script written for nsys's CSV does -------------------------------------------
def read_nsys_report(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def top_kernel(path):
    rows = read_nsys_report(path)
    top = max(rows, key=lambda r: float(r["Total Time (ns)"]))
    return top["Name"], int(top["Instances"]), float(top["Time (%)"]), float(top["Avg (ns)"])


def api_totals(path):
    return {r["Name"]: (int(r["Num Calls"]), int(r["Total Time (ns)"]), float(r["Med (ns)"]))
            for r in read_nsys_report(path)}


def memop_counts(path):
    return {r["Operation"]: (int(r["Count"]), float(r["Max (ns)"])) for r in read_nsys_report(path)}


def memop_sizes(path):
    return {r["Operation"]: (float(r["Total (MB)"]), int(r["Count"])) for r in read_nsys_report(path)}


def nvtx_ranges(path):
    return {(r["Style"], r["Range"]): (int(r["Instances"]), float(r["StdDev (ns)"])) for r in read_nsys_report(path)}


def osrt_calls(path):
    return {r["Name"]: (int(r["Num Calls"]), int(r["Min (ns)"])) for r in read_nsys_report(path)}


SCRIPTS = {
    "cuda_gpu_kern_sum": top_kernel, "cuda_api_sum": api_totals, "cuda_gpu_mem_time_sum": memop_counts,
    "cuda_gpu_mem_size_sum": memop_sizes, "nvtx_sum": nvtx_ranges, "osrt_sum": osrt_calls,
}
# -----------------------------------------------------------------------------------------


def run(args):
    return subprocess.run([STEPSCOPE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


class NsysCsvTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="stepscope-nsys-csv-")
        cls.traces = {}
        for key, sql in (("gpu", "analysis/recipes.sql"), ("host", "host/host.sql")):
            path = os.path.join(cls.tmp, key + ".sqlite")
            subprocess.run([MAKE_TRACE, path, os.path.join(FIXTURES, sql)], check=True, stdout=subprocess.PIPE)
            cls.traces[key] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, report, nsys_names):
        trace = self.traces["host" if report == "osrt_sum" else "gpu"]
        out = os.path.join(self.tmp, ("nsys" if nsys_names else "ours") + "_" + report + "/")
        args = ["stats", "-q", "-f", "-r", report, "--format", "csv", "-o", out, trace]
        p = run(args + (["--nsys-names"] if nsys_names else []))
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        path = os.path.join(out, report + ".csv")
        self.assertTrue(os.path.exists(path), os.listdir(out))
        return path

    def test_headers_are_nsys_names_in_nsys_order(self):
        for report, names in NSYS_COLUMNS.items():
            with self.subTest(report=report):
                with open(self.write(report, True), newline="") as f:
                    header = next(csv.reader(f))
                self.assertEqual(header[:len(names)], names)
                # Extras of ours only after nsys's columns.
                self.assertEqual(header[len(names):], ["State"] if report == "osrt_sum" else [])

    def test_an_nsys_script_reads_our_numbers(self):
        for report, script in SCRIPTS.items():
            with self.subTest(report=report):
                nsys_path = self.write(report, True)
                ours_path = self.write(report, False)
                result = script(nsys_path)
                self.assertTrue(result, f"{report}: the script read no rows")
                # The same cells under our names.
                nsys_rows = read_nsys_report(nsys_path)
                with open(ours_path, newline="") as f:
                    our_rows = list(csv.DictReader(f))
                self.assertEqual(len(nsys_rows), len(our_rows))
                for a, b in zip(nsys_rows, our_rows):
                    for name in NSYS_COLUMNS[report]:
                        self.assertEqual(a[name], b[ours(report, name)], (report, name))

    def test_known_values(self):
        # tests/diff/expected/analysis/stats_cuda_gpu_kern_sum.txt and host/osrt_sum.txt.
        name, instances, pct, avg = top_kernel(self.write("cuda_gpu_kern_sum", True))
        self.assertEqual((name, instances, round(pct, 1), avg),
                         ("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", 3, 88.2, 200000.0))
        self.assertEqual(api_totals(self.write("cuda_api_sum", True))["cudaLaunchKernel"], (6, 24000, 4000.0))
        self.assertEqual(memop_counts(self.write("cuda_gpu_mem_time_sum", True))["[CUDA memset]"], (1, 20000.0))
        self.assertEqual(osrt_calls(self.write("osrt_sum", True))["read"], (5, 6000000))

    def test_json_keys(self):
        p = run(["stats", "-r", "cuda_api_sum", "--format", "json", "--nsys-names", self.traces["gpu"]])
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        rows = json.loads(p.stdout)["cuda_api_sum"]
        self.assertEqual(list(rows[0])[:len(NSYS_COLUMNS["cuda_api_sum"])], NSYS_COLUMNS["cuda_api_sum"])

    def test_text_format_is_refused(self):
        p = run(["stats", "-r", "cuda_api_sum", "--nsys-names", self.traces["gpu"]])
        self.assertEqual(p.returncode, 2)
        err = p.stderr.decode()
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("--format csv", err)


if __name__ == "__main__":
    unittest.main()
