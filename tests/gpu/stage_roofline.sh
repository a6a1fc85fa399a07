#!/usr/bin/env bash
# Builds stepscope with its CUDA parts and stages what the GPU machine needs
# into build-gpu/ (bin/stepscope, bin/stepscope_roofline_selftest,
# lib/libstepscope_bench.so, lib/libstepscope_roofline_inject.so, and
# lib/libstepscope_inject.so: the tracer the survey pass runs under), stripped
# of debug info so the directory stays small enough to carry.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" -j "${JOBS:-2}" --target stepscope stepscope_roofline_inject stepscope_bench \
  stepscope_roofline_selftest stepscope_inject
rm -rf build-gpu
mkdir -p build-gpu/bin build-gpu/lib
for f in bin/stepscope bin/stepscope_roofline_selftest lib/libstepscope_bench.so \
         lib/libstepscope_roofline_inject.so lib/libstepscope_inject.so; do
  cp "$BUILD/$f" "build-gpu/$f"
  strip --strip-debug "build-gpu/$f"
done
du -sh build-gpu
echo "staged: carry build-gpu, then run tests/gpu/roofline_check.sh on the GPU machine"
