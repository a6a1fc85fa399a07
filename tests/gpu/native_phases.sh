#!/bin/bash
# What native stack samples cost the traced step, inside ONE process (bench/overhead_phases.py):
# phases alternate the full tracer with the tracer whose host sampling is off ("sampling": the
# collector's sampler pauses, native events included), once with --native-hz 500 and once with
# --native-hz 0; the difference of the two sampling costs is the native samples' cost.
# usage: bash tests/gpu/native_phases.sh OUTDIR [PHASES]
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=${1:-$OUT/native_phases}; mkdir -p $R
for hz in 500 0 500 0; do
  n=$((n + 1))
  python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R/hz${hz}_$n --presets small --phase 15 --skip 3 \
    --phases ${2:-24} --profile-args="--sample-hz 200 --native-hz $hz" --cycle "none;sampling" > $R/hz${hz}_$n.txt 2>&1
done
