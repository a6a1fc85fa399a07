#!/bin/bash
# What native stack samples cost the traced program (docs/PERFORMANCE.md,
# "Native samples"): `stepscope profile` of train_gpt.py, interleaved runs
# with --native-hz 0 and NATIVE_HZ (default 500, profile's default) (A B A B ...), ms/step of each run
# from the workload's own timing, and the collector's unwinding work
# (stats host_sampler_cpu_ns, native_samples) per run.
# usage: [PAIRS=3] [NATIVE_HZ=500] [PRESET=small] [STEPS=60] bash tests/gpu/native_overhead.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=${1:-$OUT/native_overhead}; mkdir -p $R
for i in $(seq 1 ${PAIRS:-3}); do
  for hz in 0 ${NATIVE_HZ:-500}; do
    o=$R/p${i}_hz$hz
    $B profile -q -f -o $o --native-hz $hz -- python3 $W --preset ${PRESET:-small} --steps ${STEPS:-60} --json > $o.json 2> $o.err
    python3 - "$o" "$hz" <<'PY' >> $R/runs.tsv
import json, sqlite3, sys
o, hz = sys.argv[1], sys.argv[2]
res = json.loads([l for l in open(o + ".json") if l.startswith("{")][-1])
db = sqlite3.connect(o + ".sqlite")
st = dict(db.execute("select name, value from stats").fetchall())
print("\t".join(str(x) for x in (hz, res.get("ms_per_step"), st.get("native_samples", 0), st.get("host_sampler_cpu_ns", 0), st.get("native_samples_lost", 0))))
PY
    rm -f $o.sqlite
  done
done
