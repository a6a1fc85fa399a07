#!/usr/bin/env bash
# Figure: step-time cost of the live straggler monitor (docs/PERFORMANCE.md,
# "Live straggler monitor"). Runs the reference workload's DDP job on 2 GPUs
# with no slow rank, through tests/gpu/ddp_monitor.py, once per arm in each
# round (A B A B ...; default arms: MONITOR=0, MONITOR=1 =
# stepscope.torch.StragglerMonitor on every step with an exchange every
# MONITOR_INTERVAL_S), and prints each run's ms/step per rank, the medians
# and each arm's ratio of medians to the first arm, per rank.
#
#   bench/monitor_overhead.sh TRAIN_GPT [PAIRS=5] [STEPS=300]
# Needs 2 GPUs, torchrun, torch. Environment: MONITOR_INTERVAL_S (default 2).
set -euo pipefail
TRAIN_GPT=${1:?usage: bench/monitor_overhead.sh TRAIN_GPT [PAIRS] [STEPS]}
PAIRS=${2:-5}
STEPS=${3:-300}
HERE=$(cd "$(dirname "$0")/.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LOG=$(mktemp -d)
# ARMS: space-separated NAME=VAR=VALUE[,VAR=VALUE...]; the first arm is the baseline.
ARMS=${ARMS:-"off=MONITOR=0 on=MONITOR=1"}
for i in $(seq 1 "$PAIRS"); do
  for arm in $ARMS; do
    name=${arm%%=*}
    envs=${arm#*=}
    env ${envs//,/ } timeout 300 torchrun --nproc-per-node 2 "$HERE/tests/gpu/ddp_monitor.py" "$TRAIN_GPT" \
      --ddp --preset small --steps "$STEPS" --warmup 5 --json > "$LOG/run_${name}_$i.log" 2>&1 || true
    echo "round $i $name: $(python3 "$HERE/bench/monitor_overhead_parse.py" "$LOG/run_${name}_$i.log")"
  done
done
python3 "$HERE/bench/monitor_overhead_parse.py" --summary "$LOG" "$PAIRS" $(for a in $ARMS; do echo "${a%%=*}"; done)
grep -h "stepscope.straggler" "$LOG"/run_*.log | sort | uniq -c | sort -rn | head -5
rm -rf "$LOG"
