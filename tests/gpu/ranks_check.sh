#!/usr/bin/env bash
# 2-GPU acceptance of `stepscope ranks` and the live monitor (issue: Many GPUs).
# Run on nvidia-h200-x2:  STEPSCOPE=... TRAIN_GPT=... OUT=... tests/gpu/ranks_check.sh
set -u
: "${STEPSCOPE:?}" "${TRAIN_GPT:?}" "${OUT:=/tmp/out}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/slow" "$OUT/even"
nvidia-smi -L
ARGS="--ddp --preset small --steps 20 --warmup 3 --json"
echo "== profile, slow rank 1 (5 ms)"
(cd "$OUT/slow" && timeout 240 "$STEPSCOPE" profile -f -o 'run_%q{RANK}' -- torchrun --nproc-per-node 2 "$TRAIN_GPT" $ARGS --slow-rank 1 --slow-ms 5)
echo "== ranks, slow"
"$STEPSCOPE" ranks "$OUT"/slow/run_*.sqlite
"$STEPSCOPE" ranks --format json "$OUT"/slow/run_*.sqlite > "$OUT/ranks_slow.json"
echo "== profile, no slow rank"
(cd "$OUT/even" && timeout 240 "$STEPSCOPE" profile -q -f -o 'run_%q{RANK}' -- torchrun --nproc-per-node 2 "$TRAIN_GPT" $ARGS)
echo "== ranks, even"
"$STEPSCOPE" ranks "$OUT"/even/run_*.sqlite
echo "== live monitor, slow rank 1, interleaved with the same wrapper without the monitor"
for i in 1 2 3; do
  for m in 0 1; do
    MONITOR=$m timeout 180 torchrun --nproc-per-node 2 "$HERE/ddp_monitor.py" "$TRAIN_GPT" $ARGS --steps 60 --slow-rank 1 --slow-ms 5 \
      > "$OUT/mon_${m}_$i.log" 2>&1
    echo "monitor=$m run $i: $(grep -h '"rank": 0' "$OUT/mon_${m}_$i.log" | tail -1)"
  done
done
echo "== monitor verdicts (last run)"
grep -h "stepscope.straggler" "$OUT/mon_1_3.log" | tail -8
echo "== monitor log lines (all monitor runs)"
grep -h "stepscope.straggler" "$OUT"/mon_1_*.log | sort | uniq -c | sort -rn | head -12
(cd "$OUT" && tar czf traces.tgz slow/*.sqlite even/*.sqlite && rm -rf slow even)
