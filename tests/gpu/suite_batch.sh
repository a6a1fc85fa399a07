#!/usr/bin/env bash
# One device call of the external suite (issue 32), from the repository root with build-gpu carried:
#   bash tests/gpu/suite_batch.sh [BUDGET_S] [ONLY]      (TRACE_FIX=a,b: trace those fix arms too;
#   PROFILE_ARGS="--steps 8 --warmup-steps 6": more `profile` options for the traced problem run;
#   WINDOW=8:10: each problem traced a second time with `--steps 8 --warmup-steps 10`, priced as
#   traced and at its measured untraced step: `external_suite.py table --arm window_measured`)
# suite.jsonl, analyze.txt and the driver's log land in $OUT as each scenario finishes; the traces
# (outside $OUT, then packed as traces.tgz.aa, .ab, ... of 15 MiB) come back last. The driver is
# stopped at BATCH_DEADLINE_S (570 s) so that the packing still runs inside the call.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
budget=${1:-480}; only=${2:-}
batch_gpu "$OUT/gpu.txt"
timeout "$(batch_left)" python3 tests/gpu/external_suite.py driver --stepscope "$B" --out "$OUT" --traces /tmp/suite_traces \
  --budget-s "$budget" ${only:+--only "$only"} ${TRACE_FIX:+--trace-fix "$TRACE_FIX"} \
  ${PROFILE_ARGS:+--profile-args="$PROFILE_ARGS"} ${WINDOW:+--window "$WINDOW"} > "$OUT/driver.log" 2>&1
batch_pack traces /tmp/suite_traces
ls -la "$OUT" >> "$OUT/driver.log"
batch_check_out
