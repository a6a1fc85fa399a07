#!/usr/bin/env bash
# MFU on a lent GPU (issue 38, docs/flops.md): one device call. From the repository root, with
# build-gpu carried (tests/gpu/stage.sh):
#   bash tests/gpu/mfu_batch.sh [PARTS]        PARTS: any of gpt,lora,counters (default all)
#   gpt       train_gpt.py --preset small traced by `profile`, then `mfu --model` (the config in
#             tests/plan/configs/train_gpt_small.json)
#   lora      tests/gpu/hf_lora_train.py (HF Trainer, PEFT LoRA, random-init Llama 8 x 1024)
#             traced, then `mfu --model tests/plan/configs/llama_small.json --lora-rank 16 ...`
#   counters  `roofline --top 0` of train_gpt.py small (every kernel of the median step profiled
#             for FLOPs), then `mfu` on its trace without --model (FLOPs from the counters) and
#             with it (from the spec): "MFU from shapes within 5% of the spec figure"
# Under $OUT as each part ends: gpu.txt, mfu.txt (each command and its output), mfu.log (the
# workloads' stderr), traces.tgz.* (the traces, gzip'd: `cat traces.tgz.* | tar xzf -`).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
batch_gpu "$OUT/gpu.txt"
PARTS=",${1:-gpt,lora,counters},"
T=/tmp/mfu_traces
rm -rf "$T" && mkdir -p "$T"
GPT_FLAGS=(--model tests/plan/configs/train_gpt_small.json --micro-batch 8 --seq-len 512 --dtype amp-bf16)
LORA_FLAGS=(--model tests/plan/configs/llama_small.json --micro-batch 8 --seq-len 512 --dtype amp-bf16
  --lora-rank 16 --lora-targets q_proj,v_proj)

step() {  # step LABEL CMD...: the command and its stdout into mfu.txt, stderr into mfu.log
  echo "== $1: ${*:2}" >> "$OUT/mfu.txt"
  echo "== $1" >> "$OUT/mfu.log"
  timeout "$(batch_left)" "${@:2}" >> "$OUT/mfu.txt" 2>> "$OUT/mfu.log"
  echo "rc $? after $(($(date +%s) - T0)) s" >> "$OUT/mfu.txt"
}

if [[ $PARTS == *,gpt,* ]]; then
  step gpt_trace "$B" profile -q -f -o "$T/train_gpt_small.sqlite" -- python3 "$W" --preset small --steps 10 --warmup 3
  step gpt_mfu "$B" mfu "${GPT_FLAGS[@]}" --timeunit ms "$T/train_gpt_small.sqlite"
  step gpt_steps "$B" steps --format json "$T/train_gpt_small.sqlite"
fi
if [[ $PARTS == *,lora,* ]]; then
  step lora_trace "$B" profile -q -f -o "$T/hf_lora_batch.sqlite" -- python3 tests/gpu/hf_lora_train.py --batch 8 --workers 0
  step lora_mfu "$B" mfu "${LORA_FLAGS[@]}" --timeunit ms "$T/hf_lora_batch.sqlite"
  step lora_steps "$B" steps --format json "$T/hf_lora_batch.sqlite"
fi
if [[ $PARTS == *,counters,* ]]; then
  step counters_roofline "$B" roofline --top 0 -o "$T/roofline_small.sqlite" -- python3 "$W" --preset small --steps 10 --warmup 3
  step counters_mfu "$B" mfu --timeunit ms "$T/roofline_small.sqlite"
  step counters_spec_mfu "$B" mfu "${GPT_FLAGS[@]}" --timeunit ms "$T/roofline_small.sqlite"
fi
gzip -f "$T"/*.sqlite 2>/dev/null
rm -f "$T"/*-journal "$T"/*.svg
batch_pack traces "$T"
batch_check_out
