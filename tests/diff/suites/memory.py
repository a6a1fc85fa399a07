# stepscope memory: device/host memory timelines, peaks and their live sets,
# leaks, OOM evidence, the PyTorch allocator view. Every expected number is
# derived by hand in the comment at the top of its fixture
# (tests/diff/fixtures/memory/*.sql).
TESTS = [
    # Interleaved alloc/free across streams, an unknown free, a null free,
    # pinned memory, a stream-ordered pool.
    DiffTest(name="memory_interleaved_text", cmd=["memory", "{trace}"],
             trace="memory/interleaved.sql", out="memory/interleaved.txt"),
    DiffTest(name="memory_interleaved_json", cmd=["memory", "--format", "json", "{trace}"],
             trace="memory/interleaved.sql", out="memory/interleaved.json"),
    DiffTest(name="memory_interleaved_live_csv",
             cmd=["memory", "--section", "live_at_peak", "--format", "csv", "{trace}"],
             trace="memory/interleaved.sql", out="memory/interleaved_live.csv"),
    DiffTest(name="memory_interleaved_timeline", cmd=["memory", "--timeline", "{trace}"],
             trace="memory/interleaved.sql", out="memory/interleaved_timeline.csv"),
    DiffTest(name="memory_interleaved_top2", cmd=["memory", "--top", "2", "--section", "largest", "{trace}"],
             trace="memory/interleaved.sql", out="memory/interleaved_top2.txt"),
    # A trace cut off after an OOM (finalized = 0, open NVTX ranges). A corrupt
    # PyTorch memory file found beside the trace is noted, not fatal.
    DiffTest(name="memory_cut_off_oom", cmd=["memory", "{trace}"],
             trace=["memory/cut_off.sql", "memory/cut_off.sqlite.torch-memory.json"],
             finalize=False, out="memory/cut_off.txt"),
    # Host memory (host_alloc), per thread and NVTX range.
    DiffTest(name="memory_host_mem", cmd=["memory", "{trace}"],
             trace="memory/host_mem.sql", out="memory/host_mem.txt"),
    # The PyTorch caching-allocator view, found beside the trace.
    DiffTest(name="memory_torch_text", cmd=["memory", "{trace}"],
             trace=["memory/torch_small.sql", "memory/torch_small.sqlite.torch-memory.json"],
             out="memory/torch_small.txt"),
    DiffTest(name="memory_torch_timeline", cmd=["memory", "--timeline", "{trace}"],
             trace=["memory/torch_small.sql", "memory/torch_small.sqlite.torch-memory.json"],
             out="memory/torch_small_timeline.csv"),
    DiffTest(name="memory_torch_ignored", cmd=["memory", "--torch-memory", "none", "--section", "pytorch", "{trace}"],
             trace=["memory/torch_small.sql", "memory/torch_small.sqlite.torch-memory.json"],
             out="memory/torch_ignored.txt"),
    # Errors: one line, exit code 2.
    DiffTest(name="memory_explicit_bad_torch_file_is_exit_2",
             cmd=["memory", "--torch-memory", "{tmp}/wrong_format.torch-memory.json", "{trace}"],
             trace=["memory/host_mem.sql", "memory/wrong_format.torch-memory.json"], out="memory/bad_torch_file.err", rc=2, stderr=True),
    DiffTest(name="memory_missing_trace_is_exit_2", cmd=["memory", "{tmp}/nope.sqlite"],
             out="memory/missing_trace.err", rc=2, stderr=True),
    DiffTest(name="memory_unknown_section_is_exit_2", cmd=["memory", "--section", "bogus", "{trace}"],
             trace="memory/host_mem.sql", out="memory/unknown_section.err", rc=2, stderr=True),
]
