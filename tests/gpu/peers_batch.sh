#!/usr/bin/env bash
# The peer table (issue 33) in one device call: bench/peer_overhead.py's arms interleaved round
# by round on external loops (tests/gpu/unmarked_loop.py), nsys among them where the lent image
# has its binary (the copy under nsight-compute: collection runs, its report step fails; the
# script stops it once the loop has printed its own ms/step). From the repository root, with
# build-gpu carried:
#   bash tests/gpu/peers_batch.sh WORKLOADS [ROUNDS] [STEPS] [ARMS]
#   e.g. bash tests/gpu/peers_batch.sh gpt2:forloop,gpt2:fused:loader=20 3 30
# $OUT/peer_overhead.jsonl gets each run as it ends; $OUT/peers.txt the GPU, the nsys found and
# the medians per workload and arm. No run starts past BATCH_DEADLINE_S (570 s) less 60.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
batch_gpu "$OUT/peers.txt"
NSYS=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none found}" >> "$OUT/peers.txt"
budget=$(( $(batch_left) - 60 ))
timeout "$(batch_left)" python3 bench/peer_overhead.py --stepscope "$B" --out "$OUT" \
  --workloads "$1" --rounds "${2:-3}" --steps "${3:-30}" --arms "${4:-bare,default,floor,torchprof}" \
  --budget-s "$(( budget > 1 ? budget : 1 ))" ${NSYS:+--nsys "$NSYS"} >> "$OUT/peers.txt" 2>&1
batch_check_out
