#!/usr/bin/env bash
# What a Python stack at a blocking CUDA call costs the traced program (issue 33), one device call:
# each scenario traced once by `stepscope profile` (defaults), then bench/stack_self_time.py on its
# trace (the self-timed `api.tracer_ns` of a stacked call's own record, of the record after it in traces before 2026-11-28) and `analyze` (the
# findings' Python lines, to compare with a trace taken before a capture change).
#   bash tests/gpu/stack_cost_batch.sh ["moe_nonzero gpt2_forloop_adamw"] [hf_lora]
# Scenarios are tests/gpu/external_suite.py's (problem arm, 15 steps); "hf_lora" is
# tests/gpu/hf_lora_train.py --batch 8 --workers 0. Under $OUT as each ends: gpu.txt,
# stack_cost.txt, analyze.txt, traces.tgz.* (the traces, gzip'd).
# BASELINE=DIR (a second staged install, DIR/bin/stepscope with DIR/lib: `cmake --install` of the
# other build, e.g. build-gpu/baseline) traces each scenario with it too, right before the staged
# one, labelled "baseline": a capture change against the build before it on the same machine.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
batch_gpu "$OUT/gpu.txt"
T=/tmp/stack_cost
rm -rf "$T" && mkdir -p "$T"
for s in ${1:-moe_nonzero gpt2_forloop_adamw} ${2:-}; do
  batch_expired && break
  if [ "$s" = hf_lora ]; then cmd=(python3 tests/gpu/hf_lora_train.py --batch 8 --workers 0)
  else cmd=(python3 tests/gpu/external_suite.py run "$s" --arm problem --steps 15); fi
  for build in ${BASELINE:+baseline} staged; do
    bin=$B name=$s
    [ "$build" = baseline ] && bin=$PWD/$BASELINE/bin/stepscope name=${s}_baseline
    LD_LIBRARY_PATH=$(dirname "$(dirname "$bin")")/lib timeout "$(batch_left)" "$bin" profile -q -f \
      -o "$T/$name.sqlite" -- "${cmd[@]}" > "$T/$name.log" 2>&1
    echo "== $name (rc $?, $(($(date +%s) - T0)) s)" >> "$OUT/stack_cost.txt"
    python3 bench/stack_self_time.py "$T/$name.sqlite" >> "$OUT/stack_cost.txt" 2>&1
    { echo "== $name"; "$B" analyze --timeunit ms "$T/$name.sqlite"; } >> "$OUT/analyze.txt" 2>&1
  done
done
gzip -f "$T"/*.sqlite 2>/dev/null
rm -f "$T"/*.log
batch_pack traces "$T"
batch_check_out
