#!/usr/bin/env bash
# Which part of the tracer makes a traced balanced DDP job's rank 1 late (issue 34, docs/ranks.md
# "Measured with in-process phases on a 2x H200 host"): the phased balanced job of
# ddp_stragglers.py traced with one tracer part off at a time, VARIANTS interleaved ROUNDS times;
# `ranks` on the A and the B steps of each (no straggler expected). One device call on 2 GPUs:
#   bash tests/gpu/ddp_parts_batch.sh [ROUNDS] [VARIANTS]    (BATCH_DEADLINE_S, default 540)
# VARIANTS: name=profile options separated by ';' (default below). Results land in $OUT/dd.tgz
# (the driver's results.jsonl, log.txt, summaries) after every job; the first round's default
# traces as $OUT/traces_N.tar. Here: `tar xzf dd.tgz; python3 tests/gpu/ddp_stragglers.py
# --evaluate dd/results.jsonl`.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
BATCH_DEADLINE_S=${BATCH_DEADLINE_S:-540}
rounds=${1:-2}
variants=${2:-"default=;nohost=--trace cuda,nvtx,memory;nonative=--native-hz 0;nostacks=--python-stacks off;nosampling=--sample-hz 0;noiter=--iteration-ranges off"}
batch_gpu "$OUT/gpu.txt"
script=${DDP_SCRIPT:-tests/gpu/ddp_stragglers.py}
dd=/tmp/dd; rm -rf "$dd"; mkdir -p "$dd"
warm=1  # one bare job before the call's first traced one (a fresh machine), none after
for r in $(seq 1 "$rounds"); do
  IFS=';' read -ra vs <<< "$variants"
  for v in "${vs[@]}"; do
    name=${v%%=*}; args=${v#*=}
    batch_expired $((BATCH_DEADLINE_S - 45)) && { echo "deadline: skipping $name round $r" >> "$dd/log.txt"; continue; }
    pack=none; [ "$r" = 1 ] && [ "$name" = default ] && pack=balanced
    timeout "$(batch_left)" python3 "$script" --driver --stepscope "$B" --out "$dd" --nomarks= \
      --phase-steps 8 --phases 8 --warmup 12 --kinds balanced --arms traced --warmup-run "$warm" \
      --tag "${name}${r}_" --pack-traces "$pack" --profile-args="$args" --budget-s 100 > /dev/null 2>&1
    warm=0
    tar czf "$OUT/.dd.tgz" --exclude "traces_*" -C /tmp dd && mv "$OUT/.dd.tgz" "$OUT/dd.tgz"
    for t in "$dd"/traces_*.tar; do [ -f "$t" ] && cp "$t" "$OUT/"; done
  done
done
batch_check_out
