#!/bin/bash
# One device call for the checkpoint pricing (docs/PERFORMANCE.md, what-if calibration): the host
# cost of checkpointing's forward and of the backward's unpack hooks without a tracer
# (bench/checkpoint_hook_cost.py: train_gpt's blocks forward and backward, the HF Llama backward),
# then the checkpoint and hf_lora_ckpt calibration scenarios with their problem traces
# (tests/gpu/session_batch.sh). Everything lands in $OUT/batch2.tgz (+ traces.tgz).
# usage: bash tests/gpu/ckpt_batch.sh KIND
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=/tmp/res2; mkdir -p $R; t0=$T0
python3 bench/checkpoint_hook_cost.py --workload $W --rounds 10 --json $R/ck_tg_fwd.json > $R/ck_tg_fwd.txt 2>&1
python3 bench/checkpoint_hook_cost.py --workload $W --rounds 10 --backward --json $R/ck_tg_bwd.json > $R/ck_tg_bwd.txt 2>&1
python3 bench/checkpoint_hook_cost.py --workload $W --model llama --rounds 8 --backward --json $R/ck_llama_bwd.json > $R/ck_llama_bwd.txt 2>&1
echo "bench $(( $(date +%s) - t0 )) s" >> $R/times.txt
NO_UM=1 TRACES=1 bash tests/gpu/session_batch.sh $1 ${CKPT_BUDGET:-150} checkpoint,hf_lora_ckpt
echo "all $(( $(date +%s) - t0 )) s" >> $R/times.txt
cp $R/* /tmp/res/ 2>/dev/null; tar czf $OUT/batch2.tgz -C /tmp/res .
