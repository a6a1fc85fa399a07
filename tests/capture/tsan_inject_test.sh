#!/usr/bin/env bash
# The injected tracer inside a traced process under ThreadSanitizer (make test-tsan): the
# program (nvtx_app), libstepscope_inject.so and the launcher/collector are all built with
# -fsanitize=thread; 8 threads race through the NVTX entry points (push/pop, marks, thread
# names, start/end ended on another thread) into the shared ring while the collector drains
# it. Passes when TSan reports nothing and the trace holds every range.
#   tsan_inject_test.sh BUILD_DIR
set -uo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0 ${TSAN_OPTIONS:-}"
"$build/bin/stepscope" profile -f -o "$tmp/t" -- "$build/tests/nvtx_app" threads 8 2000 \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
if grep -q "ThreadSanitizer" "$tmp/err" || [ "$rc" -ne 0 ]; then
  echo "FAIL: rc=$rc"; cat "$tmp/err"; exit 1
fi
# 8 threads x 2000 x (2 push/pop + 1 mark + 1 start/end) ranges + the first mark, less any dropped.
python3 - "$tmp/t.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("SELECT COUNT(*) FROM nvtx").fetchone()[0]
dropped = sum(v for (v,) in db.execute("SELECT value FROM stats WHERE name LIKE 'dropped_nvtx%'"))
names = {r[0] for r in db.execute("SELECT s.value FROM threads t JOIN strings s ON s.id = t.name_id")}
want = 8 * 2000 * 4 + 1
ok = n + dropped >= want and all(f"worker-{i}" in names for i in range(8))
print(f"{n} NVTX rows + {dropped} dropped (want {want}); thread names: {sorted(names)[:9]}")
sys.exit(0 if ok else 1)
PY
