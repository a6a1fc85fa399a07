#!/bin/bash
# One device call for the native stack samples: the calibration scenarios traced with
# --native-hz 500 (their realized savings in the same call, tests/gpu/session_batch.sh), then what
# native sampling costs the traced program (tests/gpu/native_overhead.sh).
# usage: KIND SCENARIOS [OVERHEAD_PAIRS]   (results: $OUT/batch.tgz, $OUT/tr_*.txz)
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
K=$1; SC=$2
$B --version
NO_UM=1 TRACES_N=${TRACES_N:-3} TRACES=1 AB_PAIRS=${AB_PAIRS:-24} DEADLINE_S=${DEADLINE_S:-420} bash tests/gpu/session_batch.sh $K ${BUDGET:-380} $SC
PAIRS=${3:-3} bash tests/gpu/native_overhead.sh $OUT/native_overhead
