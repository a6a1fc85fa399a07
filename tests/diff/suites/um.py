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
TESTS += [
    # The default capture: the driver's totals only (gen_um.py --driver: 30 ms stalled per
    # kernel, 7.5 MiB at the pinned copy's 10.486 GB/s -> 29.25 ms saved each; CPU bursts
    # 7 ms of 8 MiB at the published 54.42 GB/s -> 6.846 ms each). um_sum has no rows
    # (no address), um_total_sum and um_step_share take the totals.
    DiffTest(name=f"um_driver_{r}", cmd=["stats", "-r", r, "{trace}"], trace="um/managed_driver.sql",
             out=f"um/driver_{r}.txt")
    for r in ["um_sum", "um_total_sum", "um_step_share"]
] + [
    DiffTest(name="um_driver_analyze", cmd=["analyze", "{trace}"], trace="um/managed_driver.sql",
             out="um/analyze_driver.txt"),
]
TESTS += [
    # The CPU's touch loop bounds the round (gen_um.py --driver --cpu-bound: 40 ms bursts of
    # 7.8 MiB, 5 ms kernels): um_faults leads (14.62 ms GPU + 79.70 ms CPU saving); host_bound's
    # 4x batch grows the bursts with the data (step 50 -> 185 ms for 4x: 3.75 ms per original
    # batch, below um_faults and host_sync) instead of 33.75 ms when they were counted fixed.
    DiffTest(name="um_cpu_bound_analyze", cmd=["analyze", "{trace}"], trace="um/managed_cpu_bound.sql",
             out="um/analyze_cpu_bound.txt"),
    # whatif --batch prices as host_bound does: 4x -> 185 ms for 4x the samples (the bursts grow).
    DiffTest(name="um_cpu_bound_whatif_batch", cmd=["whatif", "--batch", "4", "{trace}"],
             trace="um/managed_cpu_bound.sql", out="um/whatif_batch_cpu_bound.txt"),
]
