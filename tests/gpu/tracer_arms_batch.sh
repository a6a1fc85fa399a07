#!/usr/bin/env bash
# Which part of the tracer slows an external scenario (issues 32, 33): process-level arms,
# interleaved round by round, ms/step of the problem arm timed inside the loop.
#   ARMS="bare none default" bash tests/gpu/tracer_arms_batch.sh "moe_nonzero qwen2_item_sync" ROUNDS
# Arms: bare; profile presets (none, none_all_off, cuda_only, cuda_stacks, no_host, default);
# env-only: nvtx_env, cuda_env (our tracer, no collector), empty_env, cupti_linked_env,
# cupti_called_env (tests/gpu/empty_injection.c, built by stage.sh).
# One JSON line per run in $OUT/arms.jsonl as soon as it ends; no run is started past
# BATCH_DEADLINE_S (570 s), and one running then is stopped (its line says "run": null).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
OFF="--sample-hz 0 --native-hz 0 --loader-ranges off --iteration-ranges off"
declare -A ARM=(
  [none]="-t none"
  [none_all_off]="-t none $OFF"
  [cuda_only]="-t cuda --python-stacks off $OFF"
  [cuda_stacks]="-t cuda"
  [no_host]="--sample-hz 0"
  [default]="-t cuda,nvtx,memory,host"
)
for r in $(seq 1 "${2:-3}"); do
  for s in $1; do
    for a in ${ARMS:-bare none cuda_only cuda_stacks no_host default}; do
      batch_expired && break 3
      cmd=(python3 tests/gpu/external_suite.py run "$s" --arm problem --steps 15)
      case $a in
        bare) ;;
        nvtx_env) cmd=(env NVTX_INJECTION64_PATH=$LIB "${cmd[@]}") ;;
        cuda_env) cmd=(env CUDA_INJECTION64_PATH=$LIB "${cmd[@]}") ;;
        empty_env) cmd=(env CUDA_INJECTION64_PATH=$PWD/build-gpu/lib/libempty_injection.so "${cmd[@]}") ;;
        cupti_linked_env) cmd=(env CUDA_INJECTION64_PATH=$PWD/build-gpu/lib/libempty_injection_cupti.so "${cmd[@]}") ;;
        cupti_called_env) cmd=(env CUDA_INJECTION64_PATH=$PWD/build-gpu/lib/libempty_injection_cupti_call.so "${cmd[@]}") ;;
        *) cmd=("$B" profile -q -f -o /tmp/arms_${s}_${a} ${ARM[$a]} -- "${cmd[@]}") ;;
      esac
      line=$(timeout "$(batch_left)" "${cmd[@]}" 2>/tmp/arms_err | grep '^SUITE' | tail -1)
      run=null
      [ -n "$line" ] && run=${line#SUITE }
      echo "{\"round\": $r, \"scenario\": \"$s\", \"arm\": \"$a\", \"run\": $run}" >> "$OUT/arms.jsonl"
      [ -z "$line" ] && tail -3 /tmp/arms_err >> "$OUT/arms_errors.txt"
    done
  done
done
batch_check_out
