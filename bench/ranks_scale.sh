#!/usr/bin/env bash
# Scale of `stepscope ranks`: 1,024 synthetic rank summaries (one data-parallel
# job, 128 hosts x 8 ranks, 50 steps, 80 kernel names, 24 all-reduces per step,
# one straggler) analyzed end to end: read + parse every summary, match 1,200
# collectives x 1,024 ranks, scores, verdict. Prints one line per run and the
# median; docs/PERFORMANCE.md records the figures.
#
#   bench/ranks_scale.sh [BUILD_DIR] [RANKS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RANKS=${2:-1024}
RUNS=${3:-5}
cmake --build "$BUILD" -j2 --target stepscope make_rank_summaries >/dev/null
DIR=$(mktemp -d /tmp/stepscope-ranks-scale.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
# 12 ms late: above the default --min-wait (10% of the 99 ms step).
"$BUILD/src/ranks/make_rank_summaries" "$DIR" "$RANKS" --straggler 37 --from-step 20 --late-ms 12
echo "summaries: $RANKS files, $(du -sh "$DIR" | cut -f1) total"
"$BUILD/bin/stepscope" ranks "$DIR" --report verdict | tail -3
# Wall time is what the claim is about; CPU time (user+sys) shows how much of
# it was ours when other work shares the machine.
times=()
for i in $(seq "$RUNS"); do
  sync
  line=$(/usr/bin/time -f "%e %U %S %M" "$BUILD/bin/stepscope" ranks "$DIR" 2>&1 >/dev/null | tail -1)
  read -r wall user sys rss <<<"$line"
  times+=("$wall")
  echo "run $i: wall ${wall} s, cpu $(echo "$user + $sys" | bc) s, peak RSS ${rss} KiB"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median wall: ${median} s for $RANKS summaries ($(nproc) cores, $(uname -m), load $(cut -d' ' -f1 /proc/loadavg))"
