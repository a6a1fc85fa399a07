#!/usr/bin/env bash
# Figure: where the capture cost goes, measured inside one process per preset
# (docs/PERFORMANCE.md, "Capture overhead: breakdown"). Runs on a GPU machine, ~3 minutes.
#
#   bench/overhead_breakdown.sh STEPSCOPE_BIN TRAIN_GPT_PY OUTDIR
#
# 1. small and tiny: ON phases cycle through the full tracer and the tracer with one part
#    switched off (API callbacks, Python stacks, host sampling, memory records, overhead
#    records), and the floor (kernel + memcpy records only); each ON phase against its OFF
#    neighbours; host sampling at the default 200 Hz.
# 2. small with host sampling at 1 kHz: full vs no sampling.
# 3. small: torch.profiler(with_stack=True) in the same phase scheme (no stepscope).
set -uo pipefail
BIN=$1 WL=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
FLOOR="api,overhead,memory,um,nvtx,sampling"
python3 "$HERE/overhead_phases.py" --stepscope "$BIN" --workload "$WL" --out "$OUT" --presets small,tiny \
  --no-bare --phase 15 --phases 28 --profile-args="--sample-hz 200" \
  --cycle "none;api;stacks;sampling;memory;overhead;$FLOOR" --tag _cycle
python3 "$HERE/overhead_phases.py" --stepscope "$BIN" --workload "$WL" --out "$OUT" --presets small \
  --no-bare --phase 15 --phases 12 --profile-args="--sample-hz 1000" --cycle "none;sampling" --tag _1khz
python3 "$HERE/overhead_phases.py" --stepscope "$BIN" --workload "$WL" --out "$OUT" --presets small \
  --phase 15 --phases 8 --torch-arm --tag _torch
