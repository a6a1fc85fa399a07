#!/bin/bash
# One device call: where the DataLoader worker path's cost goes in the HF LoRA step
# (tests/gpu/worker_path_probe.py, two runs), results under $OUT/wp.
# usage: bash tests/gpu/worker_path_batch.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
R=$OUT/wp; mkdir -p $R
nproc > $R/nproc.txt; python3 -c 'import torch,transformers;print(torch.__version__,transformers.__version__)' >> $R/nproc.txt 2>&1
for i in 1 2; do
  timeout 240 python3 tests/gpu/worker_path_probe.py --rounds ${ROUNDS:-6} > $R/probe_$i.json 2> $R/probe_$i.err
  echo "run $i rc $?" >> $R/nproc.txt
done
