#!/bin/bash
# Unified-memory checks of one device call (docs/um.md, issue 15), ~6 minutes:
#   D  the default capture (the driver's totals, sampled every 1 ms)
#   A  default + GPU fault groups (--trace ...,um-gpu-faults; CUPTI drained every 1 ms)
#   M  default + CUPTI's per-migration records (--trace ...,um-migrations)
#   W  D on `--work 30000 --repeat 3` (a kernel that computes, with fault-free runs)
#   C  cost: wall time of the managed program bare / traced in each mode, and of a
#      program without managed memory with UM on/off (5 interleaved rounds)
# usage: [UM_MODES="D D2 A"] bash tests/gpu/um_batch.sh   (BIN=build-gpu/bin/stepscope; results under $OUT/um)
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --out-default /tmp/out
B=${BIN:-$B}
R=$OUT/um
mkdir -p $R
U=/tmp/um_touch
nvcc -O2 -o $U tests/gpu/um_touch.cu 2>$R/nvcc.txt || /usr/local/cuda/bin/nvcc -O2 -o $U tests/gpu/um_touch.cu 2>>$R/nvcc.txt
batch_gpu $R/gpu.txt
run() {  # NAME ARGS...
  local n=$1; shift
  mkdir -p $R/$n
  python3 tests/gpu/um_check.py --stepscope $B --binary $U --out /tmp/um_$n "$@" > $R/$n/check.log 2>&1
  cp /tmp/um_$n/*.json /tmp/um_$n/*.txt /tmp/um_$n/*.log /tmp/um_$n/um_fault.sqlite $R/$n/ 2>/dev/null
  tail -12 $R/$n/check.log
}
# UM_MODES picks the modes (default all; D2, D3: D again, for the spread of the ranking).
for m in ${UM_MODES:-D A M W C}; do
  case $m in
    D|D2|D3) echo "== $m default"; run $m --cats cuda,nvtx,memory --only migrations,analyze,prefetch ;;
    A) echo "== A default + um-gpu-faults"; run A --cats cuda,nvtx,memory,um-gpu-faults --only migrations,faults,analyze,prefetch ;;
    M) echo "== M default + um-migrations"; run M --cats cuda,nvtx,memory,um-migrations --only migrations,analyze ;;
    W) echo "== W default, --work 30000 --repeat 3"; run W --cats cuda,nvtx,memory --work 30000 --repeat 3 --only analyze,prefetch ;;
    C) echo "== C cost"; run C --only cost ;;
  esac
done
# Two archives (the device tool fetches a limited number of files): the logs, and the traces.
(cd $OUT && tar czf um_traces.tgz um/*/um_fault.sqlite 2>/dev/null
 find um -name '*.sqlite' -delete && tar czf um.tgz um && rm -rf um)
