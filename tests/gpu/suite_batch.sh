#!/usr/bin/env bash
# One device call of the external suite (issue 32), from the repository root with build-gpu carried:
#   bash tests/gpu/suite_batch.sh [BUDGET_S] [ONLY]
# suite.jsonl, analyze.txt and the driver's log land in $OUT as each scenario finishes; the traces
# (outside $OUT, then packed as traces.tgz.aa, .ab, ... of 15 MiB) come back last.
set -u
export LD_LIBRARY_PATH=$PWD/build-gpu/lib NCCL_NVLS_ENABLE=0
B=$PWD/build-gpu/bin/stepscope
OUT=${OUT:?run on the device machine}
budget=${1:-480}; only=${2:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
python3 tests/gpu/external_suite.py driver --stepscope "$B" --out "$OUT" --traces /tmp/suite_traces \
  --budget-s "$budget" ${only:+--only "$only"} ${TRACE_FIX:+--trace-fix "$TRACE_FIX"} > "$OUT/driver.log" 2>&1
tar czf - -C /tmp suite_traces | split -b 15M - "$OUT/traces.tgz."
ls -la "$OUT" >> "$OUT/driver.log"
