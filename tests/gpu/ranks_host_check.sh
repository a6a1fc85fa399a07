#!/usr/bin/env bash
# 2-GPU: a pure host-side 5 ms delay on rank 1 (tests/gpu/host_delay.py) and a healthy run.
set -u
: "${STEPSCOPE:?}" "${TRAIN_GPT:?}" "${OUT:=/tmp/out}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
HERE=$(cd "$(dirname "$0")" && pwd)
ARGS="--ddp --preset small --steps 20 --warmup 3 --json"
mkdir -p "$OUT/host" "$OUT/even"
echo "== profile, host delay 5 ms on rank 1"
(cd "$OUT/host" && DELAY_RANK=1 DELAY_MS=5 timeout 240 "$STEPSCOPE" profile -q -f -o 'run_%q{RANK}' -- \
  torchrun --nproc-per-node 2 "$HERE/host_delay.py" "$TRAIN_GPT" $ARGS)
"$STEPSCOPE" ranks --report ranks,verdict "$OUT"/host/run_*.sqlite
echo "== profile, healthy"
(cd "$OUT/even" && timeout 240 "$STEPSCOPE" profile -q -f -o 'run_%q{RANK}' -- torchrun --nproc-per-node 2 "$TRAIN_GPT" $ARGS)
"$STEPSCOPE" ranks --report ranks,verdict "$OUT"/even/run_*.sqlite
(cd "$OUT" && tar czf traces.tgz host/*.sqlite even/*.sqlite && rm -rf host even)
