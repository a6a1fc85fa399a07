#!/usr/bin/env bash
# Stages an install of stepscope for the GPU machine into build-gpu/ (ignored by git, small
# enough to carry): `cmake --install` of BUILD (default build), binaries and libraries stripped
# of debug info, and libprotobuf-lite.so.32 beside them (the GPU image has another protobuf).
# Also the reference workload train_gpt.py (build-gpu/train_gpt.py) and the empty injection
# libraries of tracer_arms_batch.sh. On the GPU machine, from the repository root, with build-gpu
# carried, the batches (tests/gpu/harness.sh) set the rest; by hand:
#   export LD_LIBRARY_PATH=$PWD/build-gpu/lib; B=build-gpu/bin/stepscope
# usage: tests/gpu/stage.sh   (BUILD=DIR to stage another build folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
cmake --build "$BUILD" -j "${JOBS:-2}" --target stepscope stepscope_inject
rm -rf build-gpu
cmake --install "$BUILD" --prefix build-gpu >/dev/null
find build-gpu -type f \( -name '*.so*' -o -perm -u+x \) -exec file {} + | grep ELF | cut -d: -f1 |
  xargs -r strip --strip-debug
# The protobuf runtime the binary links, wherever this machine keeps it.
proto=$(ldd build-gpu/bin/stepscope | awk '/libprotobuf-lite/ {print $3}')
[ -n "$proto" ] && cp -L "$proto" build-gpu/lib/
# The reference workload, so that it travels with build-gpu (the ../shared beside this checkout
# does not travel to the GPU machine): $TRAIN_GPT, else ../shared/workloads/train_gpt.py.
workload=${TRAIN_GPT:-../shared/workloads/train_gpt.py}
if [ -f "$workload" ]; then cp "$workload" build-gpu/train_gpt.py
else echo "stage.sh: no $workload: the batches that run train_gpt.py will stop (set TRAIN_GPT)" >&2; fi
# Injection libraries that do (almost) nothing, for tests/gpu/tracer_arms_batch.sh (issue 33).
cupti=$(ldd build-gpu/lib/libstepscope_inject.so | awk '/libcupti/ {print $3}')
cc -shared -fPIC -O2 -o build-gpu/lib/libempty_injection.so tests/gpu/empty_injection.c
if [ -n "$cupti" ]; then
  cc -shared -fPIC -O2 -DLINK_CUPTI -o build-gpu/lib/libempty_injection_cupti.so \
    tests/gpu/empty_injection.c "$cupti"
  cc -shared -fPIC -O2 -DLINK_CUPTI -DCALL_CUPTI -o build-gpu/lib/libempty_injection_cupti_call.so \
    tests/gpu/empty_injection.c "$cupti"
fi
du -sh build-gpu
echo "staged: carry build-gpu; on the GPU machine: export LD_LIBRARY_PATH=\$PWD/build-gpu/lib"
