#!/usr/bin/env bash
# GPU acceptance run of `stepscope bench` and `stepscope roofline` (docs/roofline.md).
# Runs on a machine with an NVIDIA GPU, ncu, python3 + torch; writes every log
# to $OUT (default /tmp/out) and a verdict per check to $OUT/summary.txt.
#
#   # on the build machine (nvcc, no GPU needed):
#   tests/gpu/stage_roofline.sh            # -> build-gpu/{bin,lib}, stripped, a few MB
#   # on the GPU machine, from the repository root:
#   OUT=/tmp/out tests/gpu/roofline_check.sh
#
# Environment: STEPSCOPE_DIST (default build-gpu), TRAIN_GPT (path of
# train_gpt.py; default: shared/workloads beside or inside the checkout, then
# /work/shared), PYTHON (python3), NCU (ncu on PATH, else /usr/local/cuda/bin/ncu),
# CHECK_DEADLINE_S (skip the optional ncu runs past this many seconds; 270).
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
"${PYTHON:-python3}" -u tests/gpu/roofline_check.py "$@" 2>&1 | tee "$OUT/roofline_check.log"
exit "${PIPESTATUS[0]}"
