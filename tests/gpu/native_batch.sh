# One device call for the native samples (session 14): the checkpoint
# calibration scenarios traced with native samples (their realized savings in
# the same call), then what native sampling costs the traced program.
# usage: KIND SCENARIOS [OVERHEAD_PAIRS]   (results: $OUT/batch.tgz, $OUT/tr_*.txz)
K=$1; SC=$2
# The staged stepscope links libprotobuf-lite.so.32; carried in build-gpu/lib in case the machine lacks it.
ldd build-gpu/bin/stepscope | grep -q 'not found' && export LD_LIBRARY_PATH=$PWD/build-gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build-gpu/bin/stepscope --version
NO_UM=1 TRACES_N=${TRACES_N:-3} TRACES=1 AB_PAIRS=${AB_PAIRS:-24} DEADLINE_S=${DEADLINE_S:-420} bash tests/gpu/session_batch.sh $K ${BUDGET:-380} $SC
PAIRS=${3:-3} bash tests/gpu/native_overhead.sh $OUT/native_overhead
