#!/usr/bin/env bash
# Which part of the tracer slows an external scenario (issues 32, 33): process-level arms,
# interleaved round by round, ms/step of the problem arm timed inside the loop.
#   ARMS="bare none default" bash tests/gpu/tracer_arms_batch.sh "moe_nonzero qwen2_item_sync" ROUNDS
# Arms: bare; profile presets (none, none_all_off, cuda_only, cuda_stacks, no_host, default);
# env-only: nvtx_env, cuda_env (our tracer, no collector), empty_env, cupti_linked_env,
# cupti_called_env (tests/gpu/empty_injection.c, built by stage.sh).
# One JSON line per run in $OUT/arms.jsonl as soon as it ends.
set -u
export LD_LIBRARY_PATH=$PWD/build-gpu/lib NCCL_NVLS_ENABLE=0
B=$PWD/build-gpu/bin/stepscope
LIB=$PWD/build-gpu/lib/libstepscope_inject.so
OUT=${OUT:?run on the device machine}
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
      line=$("${cmd[@]}" 2>/tmp/arms_err | grep '^SUITE' | tail -1)
      run=null
      [ -n "$line" ] && run=${line#SUITE }
      echo "{\"round\": $r, \"scenario\": \"$s\", \"arm\": \"$a\", \"run\": $run}" >> "$OUT/arms.jsonl"
      [ -z "$line" ] && tail -3 /tmp/arms_err >> "$OUT/arms_errors.txt"
    done
  done
done
