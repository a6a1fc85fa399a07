# shellcheck shell=bash disable=SC2034  # B, W, LIB, T0 are for the scripts that source this
# The frame of one device call, sourced by every tests/gpu/*_batch.sh (and the other scripts
# that are one call: native_*.sh). The device tool runs one command on a lent GPU machine, at
# most 600 s; what the command leaves under $OUT comes back: at most 8 files, 16 MiB each,
# 64 MiB together, at most two folders down. Here: `bash tests/gpu/stage.sh`, then a call that
# carries build-gpu and runs the batch from the repository root.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
#   batch_init [--workload] [--out-default DIR]
#       cd to the repository root; OUT must be set (the device tool sets it) unless
#       --out-default gives a default; the staged install checked: build-gpu/bin/stepscope runs
#       (and with --workload build-gpu/train_gpt.py, which stage.sh copies from
#       ../shared/workloads, exists), else one line on stderr and exit 2. Exports
#       LD_LIBRARY_PATH=$PWD/build-gpu/lib (the protobuf runtime stage.sh puts there),
#       NCCL_NVLS_ENABLE=0 (no NVLink multicast on the lent machines), PYTHONUNBUFFERED=1 (logs
#       written as they happen). Sets B (the stepscope binary, absolute), W
#       (build-gpu/train_gpt.py), LIB (the tracer library), T0 (the start, epoch seconds).
#   batch_left [DEADLINE_S]
#       seconds left until DEADLINE_S (default $BATCH_DEADLINE_S, else 570) after T0, at least
#       1 (`timeout 0` would mean no limit): `timeout $(batch_left) CMD` stops CMD in time for
#       what comes after it (packing) to run inside the call.
#   batch_expired [DEADLINE_S]
#       true once the deadline has passed: loops stop starting new runs.
#   batch_gpu FILE       the GPU's name and driver version into FILE
#   batch_pack NAME DIR  DIR as $OUT/NAME.tgz.aa, .ab, ... (gzip tar of DIR's last component,
#       15 MiB parts); here: `cat NAME.tgz.* | tar xzf -`
#   batch_check_out      says on stdout what under $OUT the tool will not bring back (over
#       8 files, a file over 16 MiB, over 64 MiB, deeper than two folders)

batch_init() {
  local need_workload=0 out_default=""
  while [ $# -gt 0 ]; do
    case $1 in
      --workload) need_workload=1 ;;
      --out-default) out_default=$2; shift ;;
      *) echo "batch_init: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
  done
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
  if [ -z "${OUT:-}" ]; then
    [ -n "$out_default" ] || { echo "OUT is not set: run on the device machine (the device tool sets OUT)" >&2; exit 2; }
    OUT=$out_default
  fi
  export OUT
  mkdir -p "$OUT"
  export LD_LIBRARY_PATH=$PWD/build-gpu/lib NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
  B=$PWD/build-gpu/bin/stepscope
  W=build-gpu/train_gpt.py
  LIB=$PWD/build-gpu/lib/libstepscope_inject.so
  if ! "$B" --version >/dev/null 2>&1; then
    echo "build-gpu/bin/stepscope does not run here: stage it (bash tests/gpu/stage.sh) and carry build-gpu" >&2
    exit 2
  fi
  if [ "$need_workload" = 1 ] && [ ! -f "$W" ]; then
    echo "$W missing: stage.sh copies it from ../shared/workloads/train_gpt.py (or \$TRAIN_GPT)" >&2
    exit 2
  fi
  T0=$(date +%s)
}

batch_left() {
  local l=$(( ${1:-${BATCH_DEADLINE_S:-570}} - ($(date +%s) - T0) ))
  echo $(( l > 1 ? l : 1 ))
}

batch_expired() {
  [ $(( $(date +%s) - T0 )) -ge "${1:-${BATCH_DEADLINE_S:-570}}" ]
}

batch_gpu() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$1"
}

batch_pack() {
  tar czf - -C "$(dirname "$2")" "$(basename "$2")" | split -b 15M - "$OUT/$1.tgz."
}

batch_check_out() {
  (cd "$OUT" && find . -type f -printf '%s %d %p\n') | awk '
    { n++; total += $1
      if ($1 > 16 * 1048576) print "harness: " $3 " is over 16 MiB: it will not come back"
      if ($2 > 3) print "harness: " $3 " is more than two folders down: it will not come back" }
    END { if (n > 8) print "harness: " n " files under $OUT: the device tool brings back 8"
          if (total > 64 * 1048576) print "harness: " int(total / 1048576) " MiB under $OUT: the device tool brings back 64" }'
}
