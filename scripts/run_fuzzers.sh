#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each briefly over its seed
# corpus (tests/fuzz/<target>/), FUZZ_SECONDS each (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-20}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DSTEPSCOPE_FUZZ=ON -DSTEPSCOPE_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined" >/dev/null
targets=$(cmake --build build-fuzz --target help | sed -n 's/^\([a-z_]*_fuzzer\):.*/\1/p' | sort -u)
if [ -z "$targets" ]; then
  echo "fuzz: no fuzz targets defined"
  exit 0
fi
cmake --build build-fuzz -j "$(nproc)" --target $targets
passed=0
failed=0
for t in $targets; do
  corpus=tests/fuzz/$t
  mkdir -p "build-fuzz/corpus/$t"
  seeds=()
  [ -d "$corpus" ] && seeds=("$corpus")
  echo "fuzz: $t for ${secs}s"
  # A crashing input is saved as build-fuzz/artifacts/<target>-crash-<sha1>.
  mkdir -p build-fuzz/artifacts
  if build-fuzz/bin/$t -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix="build-fuzz/artifacts/$t-" "build-fuzz/corpus/$t" "${seeds[@]}" \
       >"build-fuzz/$t.log" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "fuzz: $t FAILED; the end of build-fuzz/$t.log:"
    tail -40 "build-fuzz/$t.log"
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
