#!/bin/bash
# One device call: what host capture (Python stacks at blocking/allocation calls + 200 Hz
# thread sampling, profile's defaults) costs `small`, in one process: 8-step phases (first 2
# dropped), 150 rounds of the full tracer vs the same with stacks and sampling off
# (bench/overhead_phases.py --cycle "none;stacks,sampling"); then torch.profiler with_stack
# in the same phase scheme (ON = profiling, 12 rounds of 15-step phases) for comparison.
# Results under $OUT/host (phases_*.json, logs).  usage: bash tests/gpu/host_cost_batch.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=$OUT/host; mkdir -p $R
python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R --tag _host --presets small \
  --phase 8 --skip 2 --no-bare --phases 300 --profile-args="" --cycle "none;stacks,sampling" > $R/small_host.txt 2>&1
python3 bench/overhead_phases.py --workload $W --out $R --tag _torch --presets small --phase 15 --phases 12 \
  --no-bare --no-traced --torch-arm > $R/small_torch.txt 2>&1
rm -f $R/*.sqlite $R/*.sqlite-*; tail -n 4 $R/*.txt
