# Schema versions (docs/schema.md): traces of every earlier layout stay
# readable by every reading command; another major version, or a damaged
# version number, is refused in one line (exit code 2).
V12 = "../../fixtures/schema/v1.2_nvtx_app.sqlite.gz"
V10 = "../../fixtures/schema/v1.0_nvtx_app.sqlite.gz"

TESTS = []
for tag, fixture in (("v1_2", V12), ("v1_0", V10)):
    TESTS += [
        DiffTest(name=f"schema_{tag}_stats", cmd=["stats", "-r", "nvtx_sum", "{trace}"], trace=fixture,
                 out=f"versions/{tag}_stats.txt"),
        DiffTest(name=f"schema_{tag}_steps", cmd=["steps", "{trace}"], trace=fixture, out=f"versions/{tag}_steps.txt"),
        DiffTest(name=f"schema_{tag}_memory", cmd=["memory", "{trace}"], trace=fixture,
                 out=f"versions/{tag}_memory.txt"),
        DiffTest(name=f"schema_{tag}_summarize", cmd=["summarize", "{trace}", "-o", "-"], trace=fixture,
                 out=f"versions/{tag}_summarize.json"),
        DiffTest(name=f"schema_{tag}_export", cmd=["export", "{trace}", "-o", "{tmp}/out.pftrace"], trace=fixture,
                 out=f"versions/{tag}_export.err", stderr=True),
    ]
# Schema 1.5 (the host model): its tables read back as written.
V15 = "../../fixtures/schema/v1.5_host.sqlite.gz"
TESTS += [
    DiffTest(name="schema_v1_5_thread_states", cmd=["stats", "-r", "thread_states", "{trace}"], trace=V15,
             out="versions/v1_5_thread_states.txt"),
    DiffTest(name="schema_v1_5_steps", cmd=["steps", "{trace}"], trace=V15, out="versions/v1_5_steps.txt"),
]
TESTS += [
    DiffTest(name="schema_newer_major_refused", cmd=["stats", "{trace}"], trace="versions/major2.sql",
             out="versions/major2.err", rc=2, stderr=True),
    DiffTest(name="schema_damaged_version_refused", cmd=["steps", "{trace}"], trace="versions/damaged_version.sql",
             out="versions/damaged_version.err", rc=2, stderr=True),
]
