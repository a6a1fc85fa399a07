#!/usr/bin/env bash
# make demo: the 5-minute tour. Usage: scripts/demo.sh BUILD_DIR
#
# With a GPU (nvidia-smi -L lists one) and a stepscope that has `profile`, it
# profiles the bundled workload; otherwise it uses the bundled sample trace
# (tests/fixtures/sample/sample.sqlite, recorded on a GPU), or, until that
# exists, a synthetic trace built from tests/diff/fixtures/report/training_steps.sql.
# Then: the analysis (when this build has it), a Perfetto timeline, and the
# HTML report, whose path is the last line printed.
#
# Environment: STEPSCOPE_DEMO_OUT (output folder, default BUILD_DIR/demo);
# STEPSCOPE_DEMO_NO_GPU=1 skips profiling even when a GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN=$BUILD/bin/stepscope
OUT=${STEPSCOPE_DEMO_OUT:-$BUILD/demo}
if [ ! -x "$BIN" ]; then
  echo "demo: $BIN not found: build first (make build)" >&2
  exit 1
fi
mkdir -p "$OUT"

has_command() { "$BIN" "$1" --help >/dev/null 2>&1; }
has_gpu() { [ "${STEPSCOPE_DEMO_NO_GPU:-0}" != 1 ] && command -v nvidia-smi >/dev/null 2>&1 &&
            nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }

if has_gpu && has_command profile && [ -f workloads/train_small.py ]; then
  TRACE=$OUT/train_small.sqlite
  rm -f "$TRACE"
  echo "demo: GPU found: profiling workloads/train_small.py into $TRACE"
  "$BIN" profile -o "$TRACE" -- python3 workloads/train_small.py
elif [ -f tests/fixtures/sample/sample.sqlite ]; then
  TRACE=tests/fixtures/sample/sample.sqlite
  echo "demo: no GPU (or no profile command): using the bundled sample trace $TRACE"
else
  TRACE=$OUT/sample.sqlite
  rm -f "$TRACE"
  echo "demo: no GPU and no bundled sample yet: building a synthetic trace $TRACE"
  "$BUILD/tests/make_trace" "$TRACE" tests/diff/fixtures/report/training_steps.sql
fi

for cmd in stats analyze; do
  if has_command "$cmd"; then
    echo
    echo "\$ stepscope $cmd $TRACE"
    "$BIN" "$cmd" "$TRACE" || true
  fi
done

echo
"$BIN" export -f "$TRACE" -o "$OUT/timeline.pftrace"
echo "demo: open $OUT/timeline.pftrace in https://ui.perfetto.dev for the timeline"
"$BIN" report -f "$TRACE" -o "$OUT/report.html"
echo "demo: the HTML report (open it in a browser, works offline):"
echo "$(cd "$OUT" && pwd)/report.html"
