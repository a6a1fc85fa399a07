#!/bin/bash
# One device call: the capture overhead on `small` and `tiny`, in one process per
# preset (bench/overhead_phases.py), with short phases and many rounds (8-step
# phases, the first 2 dropped; 100 rounds per set): the resolution the step-level
# method reaches on the lent VMs (about +-2% on the median ratio, bootstrap CI).
#   small: full tracer (default arguments: 200 Hz sampling, Python stacks) / the
#          same without host capture (stacks,sampling) / the kernel+memcpy floor
#   small: --sample-hz 1000: full / without sampling
#   tiny:  full / floor
# Results under $OUT/ovh (ph_*.json, logs).  usage: bash tests/gpu/overhead_batch.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=$OUT/ovh; mkdir -p $R
FLOOR="api,overhead,memory,um,nvtx,sampling"
P="--phase 8 --skip 2 --no-bare"
python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R --tag _parts --presets small $P \
  --phases 300 --profile-args="" --cycle "none;stacks,sampling;$FLOOR" > $R/small_parts.txt 2>&1
python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R --tag _1khz --presets small $P \
  --phases 200 --profile-args="--sample-hz 1000" --cycle "none;sampling" > $R/small_1khz.txt 2>&1
python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R --tag _floor --presets tiny $P \
  --phases 200 --profile-args="" --cycle "none;$FLOOR" > $R/tiny_floor.txt 2>&1
rm -f $R/*.sqlite $R/*.sqlite-*; tail -n 4 $R/*.txt
