#!/usr/bin/env bash
# Analysis speed: every default recipe (stats), the steps view and the rules
# (analyze) over a generated 10M-event trace. Prints wall time, CPU time and
# peak memory per command. Target (docs/PERFORMANCE.md): <= 10 s, <= 2 GB on
# the 2-core development machine.
#
#   bench/analysis_speed.sh [BUILD_DIR] [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
events=${2:-10000000}
trace=${TMPDIR:-/tmp}/stepscope_bench_${events}.sqlite
if [ ! -f "$trace" ]; then
  echo "generating $trace ($events events)"
  "$build/tests/synth_trace" --events "$events" "$trace"
fi
ls -l "$trace"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
# Warm the page cache so the first command is not charged for disk reads.
cat "$trace" > /dev/null
for cmd in "stats" "stats --report all" "steps" "analyze"; do
  /usr/bin/time -f "$cmd: wall %e s, cpu %U+%S s, max rss %M KB" \
    "$build/bin/stepscope" $cmd "$trace" > /dev/null
done
