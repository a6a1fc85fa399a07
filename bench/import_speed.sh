#!/usr/bin/env bash
# Import speed of `stepscope import` on a >= 1 GB torch.profiler trace.
#
#   bench/import_speed.sh [BUILD_DIR] [WORK_DIR]
#
# Generates WORK_DIR/big.json (>= 1.1 GB) by repeating the shared sample trace
# with shifted times (bench/make_big_kineto.py) and its gzip, then imports
# each RUNS times (default 3) under /usr/bin/time -v and prints, per run, the
# MB/s of uncompressed JSON (wall clock), the phase split and the peak RSS.
# Also checks that the imported counts are the sample's counts times the
# number of repetitions. Reports the machine's load average: other work on
# the machine shows up directly in the wall-clock figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
WORK=${2:-/tmp/stepscope-bench}
RUNS=${RUNS:-3}
SAMPLE=${SAMPLE:-}
for d in ../shared ../../shared; do
  [ -z "$SAMPLE" ] && [ -f "$d/data/kineto_gpt_small_3steps.json.gz" ] && SAMPLE="$d/data/kineto_gpt_small_3steps.json.gz"
done
[ -n "$SAMPLE" ] || { echo "import_speed: sample trace not found (../shared/data); set SAMPLE=" >&2; exit 2; }
mkdir -p "$WORK"
if [ ! -f "$WORK/big.json" ]; then
  python3 bench/make_big_kineto.py "$SAMPLE" "$WORK/big.json" --min-bytes 1100000000 > "$WORK/big.expected.json"
fi
if [ ! -f "$WORK/big.json.gz" ]; then
  gzip -6 -c "$WORK/big.json" > "$WORK/big.json.gz"
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%F)"
echo "input: $(stat -L -c %s "$WORK/big.json") bytes of JSON ($(stat -L -c %s "$WORK/big.json.gz") gzip); $(cat "$WORK/big.expected.json" | cut -c1-60)..."
for f in big.json big.json.gz; do
  for i in $(seq "$RUNS"); do
    rm -f "$WORK/out.sqlite"
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v "$BUILD/bin/stepscope" import "$WORK/$f" -o "$WORK/out.sqlite" \
      > "$WORK/summary.txt" 2> "$WORK/time.txt"
    speed=$(grep '^import:' "$WORK/time.txt" | sed 's/^import: //')
    rss=$(grep 'Maximum resident' "$WORK/time.txt" | awk '{print $NF}')
    echo "$f run $i (load $load): $speed; peak RSS $((rss / 1024)) MiB"
  done
done
# The tokenizer + JSON parser alone (no mapping, no SQLite), to split the time.
for f in big.json big.json.gz; do
  echo "$f: $("$BUILD/src/importers/json_tokenizer_benchmark" "$WORK/$f")"
done
# The counts must be the sample's times the repetitions.
python3 - "$WORK/big.expected.json" "$WORK/out.sqlite" <<'PY'
import json, sqlite3, sys
exp = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
stats = dict(db.execute("SELECT name, value FROM stats"))
pc = exp["per_category"]
checks = {"kineto_trace_events": exp["events"], "kineto_kernel_events": pc["kernel"],
          "kineto_cpu_op_events": pc["cpu_op"], "kineto_cuda_runtime_events": pc["cuda_runtime"],
          "kineto_cuda_driver_events": pc["cuda_driver"], "kineto_ac2g_events": pc["ac2g"],
          "kineto_gpu_memset_events": pc["gpu_memset"], "kineto_gpu_memcpy_events": pc["gpu_memcpy"]}
bad = {k: (stats.get(k), v) for k, v in checks.items() if stats.get(k) != v}
rows = db.execute("SELECT count(*) FROM kernels").fetchone()[0]
print("counts:", "ok" if not bad and rows == pc["kernel"] else f"MISMATCH {bad}")
sys.exit(1 if bad else 0)
PY
