#!/usr/bin/env bash
# Export and report speed on a synthetic trace of N kernels (default 1,000,000)
# with one launch (API row) per kernel: 2N slices, N flows.
#   bench/export_bench.sh BUILD_DIR [N]
# Prints wall time and peak RSS (GNU time) of each command; numbers go to
# docs/PERFORMANCE.md with the machine and date.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-1000000}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cat > "$DIR/gen.sql" <<SQL
INSERT INTO strings(id, value) VALUES (1, 'cudaLaunchKernel'), (2, 'gemm'), (3, 'elementwise'), (4, 'layernorm'),
  (5, 'step');
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $N - 1)
INSERT INTO kernels(start_ns, end_ns, device, context, stream, correlation, name_id, mangled_id, grid_x, grid_y,
  grid_z, block_x, block_y, block_z, registers_per_thread, static_smem_bytes, dynamic_smem_bytes, graph_id,
  graph_node_id)
SELECT 1000000 + i * 10000, 1000000 + i * 10000 + 6000 + (i % 3) * 1000, 0, 1, 7 + i % 2, i + 1, 2 + i % 3, 0,
  128, 1, 1, 256, 1, 1, 64, 0, 0, 0, 0 FROM k;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $N - 1)
INSERT INTO api(start_ns, end_ns, tid, correlation, domain, cbid, name_id, return_code)
SELECT 1000000 + i * 10000 - 3000, 1000000 + i * 10000 - 1000, 1, i + 1, 0, 211, 1, 0 FROM k;
SQL
"$BUILD/tests/make_trace" "$DIR/t.sqlite" "$DIR/gen.sql"
echo "trace: $N kernels + $N launches, $(du -h "$DIR/t.sqlite" | cut -f1)"
for args in "export -f $DIR/t.sqlite -o $DIR/t.pftrace" "export -f --timeline-format chrome $DIR/t.sqlite -o $DIR/t.json" \
            "report -f $DIR/t.sqlite -o $DIR/r.html"; do
  /usr/bin/time -f "  %e s wall, %M KiB peak RSS" "$BUILD/bin/stepscope" $args
done
ls -la "$DIR" | grep -E "pftrace|json|html"
