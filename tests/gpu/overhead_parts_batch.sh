#!/usr/bin/env bash
# Where the tracer's cost goes on the external scenarios (issues 32 and 33), in-process phases:
# ON phases cycle through the full tracer and the tracer with one part off, OFF phases detached
# (no CUPTI), so ON/OFF is the cost over bare in the same process. From the repository root, with
# build-gpu carried:   bash tests/gpu/overhead_parts_batch.sh "moe_nonzero vit_item ..." [PHASES] [PHASE_LEN]
# $OUT/parts.txt gets each scenario's lines as it finishes; $OUT/parts_NAME.json its figures,
# parts_ci.txt their 95% intervals (bench/phases_ci.py), stack_cost.txt the Python stacks' self time
# (bench/stack_self_time.py). More than five scenarios: over the 8 files that come back.
# A scenario is not started past BATCH_DEADLINE_S (570 s); one running then is stopped.
# PARTS_CYCLE replaces the sets (`;`-separated lists of parts off; FLOOR stands for every part but
# CUPTI's kernel and memcpy records): PARTS_CYCLE="none;FLOOR;FLOOR,kernels" takes the full tracer,
# the CUPTI floor and the floor without kernel records against the detached OFF phases.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
FLOOR="api,overhead,memory,um,nvtx,sampling"
CYCLE=${PARTS_CYCLE:-none;api;stacks;sampling;memory;overhead;FLOOR}
CYCLE=${CYCLE//FLOOR/$FLOOR}
for s in $1; do
  batch_expired && { echo "$s: not started, past the call's deadline" >> "$OUT/parts.txt"; continue; }
  timeout "$(batch_left)" python3 bench/overhead_phases.py --stepscope "$B" --workload tests/gpu/external_suite.py \
    --workload-args "run $s --arm problem --warmup 3" --presets "$s" --no-bare --detach \
    --out /tmp/parts/$s --phase "${3:-10}" --phases "${2:-21}" --warmup 8 --profile-args="" \
    --cycle "$CYCLE" >> "$OUT/parts.txt" 2>&1
  cp /tmp/parts/$s/phases.json "$OUT/parts_$s.json" 2>/dev/null
  grep -h "stderr" -A3 /tmp/parts/$s/*traced.log | tail -4 >> "$OUT/parts.txt"
  # Intervals per set, and what the Python stacks cost (their self time, from the same trace).
  python3 bench/phases_ci.py "$OUT/parts_$s.json" >> "$OUT/parts_ci.txt" 2>&1
  python3 bench/stack_self_time.py /tmp/parts/$s/*.sqlite >> "$OUT/stack_cost.txt" 2>&1
done
batch_check_out
