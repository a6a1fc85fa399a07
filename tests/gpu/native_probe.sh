#!/bin/bash
# One device call: where a checkpointed training step's host time goes, by
# native stacks (tests/gpu/native_probe.cc), and whether the PyTorch
# libraries hold the symbols the `recompute` rule looks for.
# usage: bash tests/gpu/native_probe.sh   (results under $OUT/probe)
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=$OUT/probe; mkdir -p $R; P=build-gpu/bin/native_probe
TL=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib
{ for f in libtorch_python.so libtorch_cpu.so; do echo "== $f"; readelf -S -W $TL/$f | grep -E "symtab|eh_frame|debug" ;
  nm -D --defined-only $TL/$f | c++filt | grep -E "SavedVariable|SavedTensor" | head -40; done; } > $R/symbols.txt 2>&1
M="SavedVariable,SavedTensor,saved_tensors,PySavedVariableHooks,call_pack_hook,call_unpack_hook,THPVariable_Wrap,take_gil,PyGILState_Ensure,PyEval_RestoreThread,checkpoint"
n=0
for v in ckpt plain ckpt plain; do
  n=$((n + 1)); a=""; [ $v = ckpt ] && a="--checkpoint"
  timeout 90 $P --warmup ${WARM:-25} --seconds ${SECS:-12} --kill --match $M -- python3 $W --preset small $a --steps 100000 > $R/${v}_$n.txt 2>&1
done
