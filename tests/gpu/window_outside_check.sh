#!/bin/bash
# One device call (issue 33, Build item 4): do the steps outside a recording window run as
# before any window, with the default --detach-outside-window on (CUPTI detached
# outside the window), not a diagnostics switch? In-process phase method
# (bench/overhead_phases.py): one process, after the warm-up PRE phases with no window yet
# (CUPTI never attached in this process: the in-process stand-in for bare), then N rounds of an
# ON phase (a cudaProfilerApi window: stepscope_attach, cudaProfilerStart ... cudaProfilerStop,
# synchronize, where the tracer finalizes CUPTI) and an OFF phase (outside the window). Per preset:
#   detach    the default (on): OFF/pre is what the steps outside a window cost over "never
#             attached" (the acceptance: within 1%), with a bare process of the same wrapper
#             beside it (OFF/bare: two processes, noisy, for reference);
#   attached  --detach-outside-window off (as before issue 33): OFF/pre shows what CUPTI left
#             attached costs outside the window (15-27% measured on tiny before).
# Also, on the detach arm's trace (N windows, each a new CUPTI attach): how many kernels find their
# launch by correlation id, and correlation ids shared by several launches (should be none).
# 8-step phases (the first 3 dropped), default profile arguments (200 Hz sampling, Python stacks).
# Results under $OUT/win (summary.txt written, and printed, as each run ends, phases_ARM_PRESET.json, gpu.txt).
# usage: [WINDOW_N=40] [WINDOW_PRE=8] [WINDOW_PRESETS="tiny small"] bash tests/gpu/window_outside_check.sh
# Finishes in under 8 minutes: no run starts after 420 s; each is cut at 470 s.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init --workload
R=$OUT/win; mkdir -p "$R"
S=$(mktemp -d /tmp/window_outside.XXXXXX)  # traces and logs: not brought back (file limits)
N=${WINDOW_N:-40}
PRE=${WINDOW_PRE:-8}
batch_gpu "$R/gpu.txt"
: > "$R/summary.txt"
for preset in ${WINDOW_PRESETS:-tiny small}; do
  for arm in detach attached; do
    if batch_expired 420; then echo "time: $preset $arm not started" | tee -a "$R/summary.txt"; break 2; fi
    extra=--no-bare
    [ "$arm" = detach ] && extra=--detach
    s=$(date +%s)
    timeout "$(batch_left 470)" python3 bench/overhead_phases.py --stepscope "$B" --workload "$W" --out "$S" \
      --tag "_$arm" --presets "$preset" --phase 8 --pre "$PRE" --phases "$N" --profile-args= $extra \
      > "$S/${preset}_$arm.txt" 2>&1
    rc=$?
    {
      echo "== $preset $arm: rc $rc ($(( $(date +%s) - s )) s)"
      grep "^$preset:" "$S/${preset}_$arm.txt"
      [ "$rc" = 0 ] || tail -n 6 "$S/${preset}_$arm.txt"
      [ -f "$S/phases_$arm.json" ] && grep -o '"error": "[^"]*' "$S/phases_$arm.json"
    } | tee -a "$R/summary.txt"
    [ -f "$S/phases_$arm.json" ] && cp "$S/phases_$arm.json" "$R/phases_${arm}_$preset.json"
    if [ "$arm" = detach ] && [ -f "$S/phases_${preset}_detach.sqlite" ]; then
      python3 - "$S/phases_${preset}_detach.sqlite" 2>&1 <<'EOF' | tee -a "$R/summary.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda sql: db.execute(sql).fetchone()[0]
kernels = q("SELECT COUNT(*) FROM kernels")
joined = q("SELECT COUNT(*) FROM kernels k WHERE EXISTS (SELECT 1 FROM api a WHERE a.correlation = k.correlation)")
shared = q("SELECT COUNT(*) FROM (SELECT correlation FROM api WHERE correlation != 0 GROUP BY correlation HAVING COUNT(*) > 1)")
print(f"trace: {kernels} kernels, {joined} with their launch by correlation id "
      f"({100.0 * joined / max(kernels, 1):.2f}%); correlation ids shared by several API rows: {shared}")
EOF
    fi
    rm -f "$S"/*.sqlite "$S"/*.sqlite-*
  done
done
python3 - "$R" <<'EOF' | tee -a "$R/summary.txt"
import glob, json, os, statistics, sys
print("preset   arm       pre ms   OFF ms   ON ms    OFF/pre  ON/OFF   OFF/bare(2 proc)  OFF within 1% of pre")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "phases_*_*.json"))):
    arm, preset = os.path.basename(path)[len("phases_"):-len(".json")].split("_", 1)
    row = json.load(open(path)).get(preset, {})
    t, b = row.get("traced", {}), row.get("bare", {})
    if "off_vs_pre" not in t:
        print(f"{preset:8} {arm:9} no result: {t.get('error', '?')[:200]}")
        continue
    bare = f"{t['off_median_ms'] / statistics.median(b['on'] + b['off']):.3f}" if "on" in b else "-"
    verdict = "yes" if abs(t["off_vs_pre"] - 1) <= 0.01 else "no"
    print(f"{preset:8} {arm:9} {t['pre_median_ms']:8.3f} {t['off_median_ms']:8.3f} {t['on_median_ms']:8.3f} "
          f"{t['off_vs_pre']:8.3f} {t['ratio_of_medians']:8.3f} {bare:>17}  {verdict if arm == 'detach' else '(CUPTI attached outside)'}")
EOF
rm -rf "$S"
