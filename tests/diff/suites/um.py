# Unified memory: the um_* recipes and the um_faults rule on the managed-memory
# program in miniature (tests/diff/fixtures/um/gen_um.py writes the fixture and
# prints the expected totals, computed independently: HtoD 25.166 MB and DtoH
# 16.777 MB at 10.486 GB/s; 84 ms stalled; um_faults 81.6 ms GPU + 10.8 ms CPU).
TESTS = [
    DiffTest(name=f"um_{r}", cmd=["stats", "-r", r, "{trace}"], trace="um/managed.sql", out=f"um/{r}.txt")
    for r in ["um_sum", "um_total_sum", "um_cpu_page_faults_sum", "um_step_share"]
] + [
    DiffTest(name="um_analyze", cmd=["analyze", "{trace}"], trace="um/managed.sql", out="um/analyze.txt"),
    DiffTest(name="um_analyze_json", cmd=["analyze", "--format", "json", "{trace}"], trace="um/managed.sql",
             out="um/analyze.json"),
    # A trace without unified memory: empty tables, no finding.
    DiffTest(name="um_total_sum_none", cmd=["stats", "-r", "um_total_sum", "{trace}"],
             trace="analysis/sync_memcpy.sql", out="um/total_sum_none.txt"),
]
TESTS += [
    # nsys exports: the UNIFIED_MEMORY_COUNTER table and the two page-fault tables -> um.
    DiffTest(name="um_nsys_import", cmd=["import", "{trace}", "-o", "{tmp}/out.sqlite"],
             trace="um/nsys_um.db.sql", out="um/nsys_import.out",
             post=["sqlite3", "{tmp}/out.sqlite",
                   "SELECT start_ns, end_ns, kind, value, address, src_id, dst_id, flags FROM um ORDER BY start_ns;"
                   " SELECT name, value FROM stats WHERE name LIKE 'um_%' ORDER BY name;"]),
]
TESTS += [
    # Default categories (no um-gpu-faults): stalled time from the fault-driven migrations
    # (gen_um.py --no-gpu-faults: 18.2 ms per kernel; um_faults 52.2 ms GPU + 10.8 ms CPU).
    DiffTest(name="um_analyze_no_fault_groups", cmd=["analyze", "{trace}"], trace="um/managed_no_faults.sql",
             out="um/analyze_no_faults.txt"),
]
