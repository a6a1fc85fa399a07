#!/bin/bash
# One device call: the tracer's whole cost over a bare process, measured inside
# one process (issue 11): bench/overhead_phases.py --detach makes every OFF
# phase run without CUPTI (cuptiFinalize at the ON phase's end, attached again
# before the next), and the ON phases alternate the full tracer (default
# arguments: 200 Hz host sampling, Python stacks) with the kernel+memcpy floor.
# 8-step phases, the first 2 dropped; DETACH_N ON phases per preset (half each set).
#   sanity: tiny, 6 phases, the trace must read back (stepscope summarize)
# Results under $OUT/det.  usage: [DETACH_N=200] [DETACH_PRESETS="small tiny"] [DETACH_CYCLE="none;FLOOR-SET"]
#   [DETACH_SANITY=0] bash tests/gpu/detach_batch.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=$OUT/det; mkdir -p $R
N=${DETACH_N:-200}
FLOOR="api,overhead,memory,um,nvtx,sampling"
CYCLE=${DETACH_CYCLE:-"none;$FLOOR"}
batch_gpu $R/gpu.txt
P="--phase 8 --skip 2 --no-bare --detach --profile-args="
if [ "${DETACH_SANITY:-1}" = 1 ]; then
  timeout 300 python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R --tag _sanity --presets tiny \
    $P --phases 6 --cycle "none;$FLOOR" > $R/sanity.txt 2>&1
  echo "sanity rc $?"; tail -n 4 $R/sanity.txt
  $B summarize $R/phases_tiny_sanity.sqlite > $R/sanity_summary.txt 2>&1; echo "summarize rc $?"; head -n 12 $R/sanity_summary.txt
fi
for preset in ${DETACH_PRESETS:-small tiny}; do
  s=$(date +%s)
  timeout 420 python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R --tag _det_$preset --presets $preset \
    $P --phases $N --cycle "$CYCLE" > $R/${preset}.txt 2>&1
  echo "$preset rc $? ($(( $(date +%s) - s )) s)"; tail -n 3 $R/${preset}.txt
done
python3 bench/phases_ci.py $R/phases_det_*.json > $R/ci.txt 2>&1; cat $R/ci.txt
rm -f $R/*.sqlite $R/*.sqlite-*
