#!/bin/bash
# One device call: the unified-memory checks (plain, computing kernel, with
# fault-free runs; NO_UM=1 skips them), the what-if calibration of the given
# scenarios (PAIRS interleaved pairs, default 4; AB_PAIRS in-process phase pairs of the *_ab
# scenarios, default 24; TRACES_N traced runs each, default 1;
# SCENARIOS12 also run with 12 pairs), with FETCH=1 the worker-fed batch cost (bench/worker_fetch.py), with
# PHASES=1 the in-process capture overhead of PHASES_PRESETS (default
# small,tiny; full tracer vs the kernel+memcpy floor, PHASES_N phases of PHASES_LEN
# steps (default 15, the first PHASES_SKIP=3 dropped); PHASES_CYCLE other sets;
# PHASES_PROFILE_ARGS the profile arguments, default "--sample-hz 0"), with
# CKPT_BENCH=1 the host cost of checkpointing's forward (bench/checkpoint_hook_cost.py, train_gpt's
# blocks and the HF Llama), with TRACE_FIX=1 the fix configs traced too, with
# HOST_PHASES=1 the host-side parts (stacks, 200 Hz sampling) on small and
# torch.profiler with_stack; logs and predictions packed into $OUT/batch.tgz,
# with TRACES=1 the calibration traces into $OUT/traces.tgz.
# usage: [NO_UM=1] [PHASES=1] ... session_batch.sh KIND BUDGET_S SCENARIOS
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
K=$1; BUD=$2; SC=$3; R=/tmp/res
rm -rf $R; mkdir -p $R/cal/$K $R/um0 $R/umw $R/umwr
t0=$T0
if [ -n "$FETCH" ]; then
python3 bench/worker_fetch.py --rounds 4 --json $R/worker_fetch.json > $R/worker_fetch.txt 2>&1
echo "fetch done $(( $(date +%s) - t0 )) s" >> $R/times.txt
fi
if [ -z "$NO_UM" ]; then
python3 tests/gpu/um_check.py --stepscope $B --out /tmp/um0 --only migrations,faults,analyze,prefetch > $R/um0/log.txt 2>&1; cp /tmp/um0/*.json /tmp/um0/*.txt $R/um0/ 2>/dev/null
python3 tests/gpu/um_check.py --stepscope $B --out /tmp/umw --work 30000 --only analyze,prefetch > $R/umw/log.txt 2>&1; cp /tmp/umw/*.json /tmp/umw/*.txt $R/umw/ 2>/dev/null
python3 tests/gpu/um_check.py --stepscope $B --out /tmp/umwr --work 30000 --repeat 3 --only analyze,prefetch > $R/umwr/log.txt 2>&1; cp /tmp/umwr/*.json /tmp/umwr/*.txt $R/umwr/ 2>/dev/null
fi
echo "um done $(( $(date +%s) - t0 )) s" >> $R/times.txt
if [ -n "$CKPT_BENCH" ]; then
python3 bench/checkpoint_hook_cost.py --workload $W --json $R/checkpoint_hook_cost.json > $R/checkpoint_hook_cost.txt 2>&1
python3 bench/checkpoint_hook_cost.py --workload $W --model llama --rounds ${CKPT_ROUNDS:-10} --json $R/checkpoint_hook_cost_llama.json > $R/checkpoint_hook_cost_llama.txt 2>&1
echo "ckpt bench done $(( $(date +%s) - t0 )) s" >> $R/times.txt
fi
# DEADLINE_S (default 470): seconds from the start after which the calibration is stopped
# (realized.json keeps the scenarios that finished and the pairs and traces of the one it
# stopped: calibration.py records them on SIGTERM), so that the logs and traces are still
# packed inside the device tool's 600 s per call.
left() { batch_left "${DEADLINE_S:-470}"; }
if [ -n "$SC" ]; then
timeout $(left) python3 bench/calibration.py --stepscope $B --workload $W --out /tmp/cal/$K --pairs ${PAIRS:-4} --scenarios $SC --budget-s $BUD --traces ${TRACES_N:-1} --ab-pairs ${AB_PAIRS:-24} ${TRACE_FIX:+--trace-fix} > $R/cal/log.txt 2>&1
if [ -n "$SCENARIOS12" ] && [ $(left) -gt 60 ]; then
timeout $(left) python3 bench/calibration.py --stepscope $B --workload $W --out /tmp/cal/$K --pairs 12 --scenarios $SCENARIOS12 --budget-s $BUD --traces ${TRACES_N:-1} ${TRACE_FIX:+--trace-fix} >> $R/cal/log.txt 2>&1
SC=$SC,$SCENARIOS12
fi
echo "calibration done $(( $(date +%s) - t0 )) s" >> $R/times.txt
cp /tmp/cal/$K/realized.json $R/cal/$K/
timeout 40 python3 bench/calibration_predict.py --calib /tmp/cal --kinds $K --stepscope $B > $R/cal/predict.txt 2>&1
for s in ${SC//,/ }; do [ -f /tmp/cal/$K/$s.sqlite ] && timeout 10 $B analyze /tmp/cal/$K/$s.sqlite > $R/cal/analyze_$s.txt 2>&1; done
ls -la /tmp/cal/$K > $R/cal/ls.txt
fi
if [ -n "$PHASES" ]; then
python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R/ph --presets ${PHASES_PRESETS:-small,tiny} --phase ${PHASES_LEN:-15} --skip ${PHASES_SKIP:-3} --phases ${PHASES_N:-30} --profile-args="${PHASES_PROFILE_ARGS---sample-hz 0}" --cycle "${PHASES_CYCLE:-none;api,overhead,memory,um,nvtx,sampling}" > $R/ph_log.txt 2>&1
echo "phases done $(( $(date +%s) - t0 )) s" >> $R/times.txt
fi
if [ -n "$HOST_PHASES" ]; then
python3 bench/overhead_phases.py --stepscope $B --workload $W --out $R/hph --presets small --phase 15 --phases ${HOST_PHASES_N:-32} --profile-args="--sample-hz 200" --cycle "none;stacks;sampling;stacks,sampling" --torch-arm > $R/hph_log.txt 2>&1
fi
echo "all done $(( $(date +%s) - t0 )) s" >> $R/times.txt
tar czf $OUT/batch.tgz --exclude="*.sqlite" -C $R .
if [ -n "$TRACES" ] && [ -n "$SC" ]; then
  if [ -n "$TRACE_FIX" ] || [ "${TRACES_N:-1}" -gt 1 ]; then
    # a file per scenario, xz (a trace packs ~7x): the device tool brings back at most 16 MiB a file
    export XZ_OPT="-6 -T8"
    for s in ${SC//,/ }; do (cd /tmp/cal/$K && tar cJf $OUT/tr_$s.txz $(ls $s.sqlite $s.[0-9]*.sqlite ${s}_fix.sqlite ${s}_fix.[0-9]*.sqlite 2>/dev/null)); done
  else tar czf $OUT/traces.tgz -C /tmp/cal $K; fi
fi
