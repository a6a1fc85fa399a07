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
