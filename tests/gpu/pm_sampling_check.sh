#!/usr/bin/env bash
# GPU metrics (`profile --gpu-metrics`, CUPTI PM sampling) on one GPU, one device call, under 8
# minutes (issue 38): pm_sampling_check.py (stepscope's PM samples over one long bf16 GEMM and one
# copy kernel against ncu's figures for the same kernels; a PM sampling failure printed with
# CUPTI's exact error), then, while time is left, the sampling's cost by the in-process phase
# method (bench/overhead_phases.py --cycle "none;gpumetrics": recording windows with and
# without PM sampling, alternating in one train_gpt.py --preset small process).
#
#   bash tests/gpu/stage.sh        # here
#   run(command="bash tests/gpu/pm_sampling_check.sh", carry=["build-gpu"])
#
# $OUT: gpu.txt, check.log (the table, PASS/FAIL lines), results.jsonl (one JSON line per
# result, as it comes), pm_trace.sqlite.gz, overhead.log and phases.json (the cost, when run).
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
BATCH_DEADLINE_S=${BATCH_DEADLINE_S:-460}
batch_init
batch_gpu "$OUT/gpu.txt"
timeout "$(batch_left 330)" python3 tests/gpu/pm_sampling_check.py --stepscope "$B" --out "$OUT" \
  2>&1 | tee "$OUT/check.log"
rc=${PIPESTATUS[0]}
[ -f "$OUT/pm_trace.sqlite" ] && gzip -f "$OUT/pm_trace.sqlite"
if [ "$(batch_left)" -gt 90 ] && [ -f "$W" ]; then
  timeout "$(( $(batch_left) - 15 ))" python3 bench/overhead_phases.py --stepscope "$B" --workload "$W" \
    --out /tmp/pm_overhead --presets small --no-bare --phases 8 --cycle "none;gpumetrics" \
    --profile-args="--sample-hz 0 --gpu-metrics 1ms" > "$OUT/overhead.log" 2>&1
  echo "overhead_phases exit $?" >> "$OUT/overhead.log"
  cp /tmp/pm_overhead/phases*.json "$OUT/phases.json" 2>/dev/null
else
  echo "no time left for the overhead phases (or $W missing)" > "$OUT/overhead.log"
fi
batch_check_out
exit "$rc"
