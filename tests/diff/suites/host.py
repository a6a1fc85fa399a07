# The host model (docs/host.md): the host recipes, analyze's host split and the
# Python lines of its findings on host/host.sql, and the nsys import of the host
# tables on host/nsys_host.db.sql. host/gen_host.py writes both fixtures and
# prints the expected numbers, computed independently: thread 100 running 60%,
# blocked_io 30%, blocked_cuda 10%; osrt read 5 x 6 ms, pthread_cond_wait 100 ms;
# Python self time _next_data 30 ms, collate 20, log_metrics 20; per step Python
# 11.95 ms, CUDA API 0.05, sync 2, DataLoader 6; the sync issued at
# train.py:152 train_step.
TESTS = [
    DiffTest(name=f"host_{r}", cmd=["stats", "-r", r, "{trace}"], trace="host/host.sql", out=f"host/{r}.txt")
    for r in ["thread_states", "osrt_sum", "python_hotspots"]
] + [
    DiffTest(name="host_thread_states_json", cmd=["stats", "-r", "thread_states", "--format", "json", "{trace}"],
             trace="host/host.sql", out="host/thread_states.json"),
    DiffTest(name="host_thread_states_step", cmd=["stats", "-r", "thread_states", "--step", "2", "{trace}"],
             trace="host/host.sql", out="host/thread_states_step2.txt"),
    DiffTest(name="host_analyze", cmd=["analyze", "{trace}"], trace="host/host.sql", out="host/analyze.txt"),
    DiffTest(name="host_analyze_json", cmd=["analyze", "--format", "json", "{trace}"], trace="host/host.sql",
             out="host/analyze.json"),
    # No host model: python_hotspots says so; thread_states and osrt_sum are empty; analyze has no host table.
    DiffTest(name="host_python_hotspots_none", cmd=["stats", "-r", "python_hotspots", "{trace}"],
             trace="analysis/sync_memcpy.sql", out="host/python_hotspots_none.txt"),
    DiffTest(name="host_osrt_sum_none", cmd=["stats", "-r", "osrt_sum", "{trace}"],
             trace="analysis/sync_memcpy.sql", out="host/osrt_sum_none.txt"),
    # A schema 1.2 trace: the host tables read as empty.
    DiffTest(name="host_old_trace", cmd=["stats", "-r", "thread_states", "-r", "osrt_sum", "{trace}"],
             trace="../../fixtures/schema/v1.2_nvtx_app.sqlite.gz", out="host/old_trace.txt"),
    # nsys: SCHED_EVENTS -> thread_sched (block reasons -> states, an unpaired event counted),
    # OSRT_API + OSRT_CALLCHAINS -> osrt with a native stack, COMPOSITE_EVENTS + SAMPLING_CALLCHAINS -> samples,
    # ThreadNames of the process's threads.
    DiffTest(name="host_nsys_import", cmd=["import", "{trace}", "-o", "{tmp}/out.sqlite"],
             trace="host/nsys_host.db.sql", out="host/nsys_import.out",
             post=["sqlite3", "{tmp}/out.sqlite",
                   "SELECT 'sched', start_ns, end_ns, tid, cpu, state FROM thread_sched ORDER BY tid, start_ns;"
                   " SELECT 'osrt', start_ns, end_ns, tid, n.value, callsite_id, source FROM osrt"
                   " LEFT JOIN strings n ON n.id = osrt.name_id ORDER BY start_ns;"
                   " SELECT 'sample', ts_ns, tid, state, callsite_id, cpu_ns FROM samples ORDER BY ts_ns;"
                   " SELECT 'frame', f.id, f.kind, fn.value, fi.value FROM frames f LEFT JOIN strings fn ON"
                   " fn.id = f.function_id LEFT JOIN strings fi ON fi.id = f.file_id ORDER BY f.id;"
                   " SELECT 'callsite', id, parent_id, frame_id, depth FROM callsites ORDER BY id;"
                   " SELECT 'thread', t.tid, s.value FROM threads t LEFT JOIN strings s ON s.id = t.name_id"
                   " ORDER BY t.tid;"
                   " SELECT name, value FROM stats WHERE name LIKE 'host_%' OR name LIKE 'nsys_rows_%' ORDER BY name;"]),
    DiffTest(name="host_nsys_thread_states", cmd=["import", "-q", "{trace}", "-o", "{tmp}/out.sqlite"],
             trace="host/nsys_host.db.sql", out="host/nsys_thread_states.txt",
             post=["{stepscope}", "stats", "-r", "thread_states", "-r", "osrt_sum", "{tmp}/out.sqlite"]),
]
TESTS += [
    # torch.profiler with_stack=True: python_function ranges nest into stacks; each CUDA call gets the stack
    # open at its start (api_callsite); the sync finding names train.py:152; hotspots from the spans' self time.
    DiffTest(name="host_kineto_import", cmd=["import", "-q", "{fixtures}/host/kineto_stack.json", "-o",
                                             "{tmp}/k.sqlite"],
             out="host/kineto_import.out",
             post=["sqlite3", "{tmp}/k.sqlite",
                   "SELECT a.correlation, n.value, c.id, c.parent_id, c.depth, f.kind, fn.value, fi.value, f.line"
                   " FROM api_callsite a JOIN api ON api.correlation = a.correlation"
                   " JOIN strings n ON n.id = api.name_id JOIN callsites c ON c.id = a.callsite_id"
                   " JOIN frames f ON f.id = c.frame_id LEFT JOIN strings fn ON fn.id = f.function_id"
                   " LEFT JOIN strings fi ON fi.id = f.file_id ORDER BY a.correlation;"
                   " SELECT name, value FROM stats WHERE name = 'kineto_api_with_python_stack';"]),
    DiffTest(name="host_kineto_analyze", cmd=["import", "-q", "{fixtures}/host/kineto_stack.json", "-o",
                                              "{tmp}/k.sqlite"],
             out="host/kineto_analyze.txt",
             post=["{stepscope}", "analyze", "{tmp}/k.sqlite"]),
    DiffTest(name="host_kineto_python_hotspots", cmd=["import", "-q", "{fixtures}/host/kineto_stack.json", "-o",
                                                      "{tmp}/k.sqlite"],
             out="host/kineto_python_hotspots.txt",
             post=["{stepscope}", "stats", "-r", "python_hotspots", "{tmp}/k.sqlite"]),
]
TESTS += [
    # Export: per thread a samples track (runs of one state at one stack, the stack in args) and an OS-runtime
    # track; nsys scheduling rows make a CPU-state track.
    DiffTest(name="host_export_chrome", cmd=["export", "--timeline-format", "chrome", "{trace}", "-o", "{tmp}/out.json"],
             trace="host/host.sql", out="host/export_chrome.txt", stderr=True,
             post=["python3", "-c", "import json; d=json.load(open('out.json')); ev=d['traceEvents'];"
                   " names={(e['pid'], e['tid']): e['args']['name'] for e in ev if e.get('ph') == 'M'};"
                   " [print(names.get((e['pid'], e['tid'])), e['cat'], e['ts'], e['dur'], e['name'],"
                   " json.dumps(e.get('args', {}), sort_keys=True))"
                   " for e in ev if e.get('cat') in ('samples', 'osrt', 'cpu_state') and e['ts'] < 21000]"]),
    DiffTest(name="host_export_nsys_cpu_state", cmd=["import", "-q", "{trace}", "-o", "{tmp}/out.sqlite"],
             trace="host/nsys_host.db.sql", out="host/export_nsys.txt",
             post=["sh", "-c", "{stepscope} export -q --timeline-format chrome {tmp}/out.sqlite -o {tmp}/out.json && "
                   "python3 -c \"import json; ev=json.load(open('{tmp}/out.json'))['traceEvents'];"
                   " names={(e['pid'], e['tid']): e['args']['name'] for e in ev if e.get('ph') == 'M'};"
                   " [print(names.get((e['pid'], e['tid'])), e['cat'], e['ts'], e['dur'], e['name'],"
                   " json.dumps(e.get('args', {}), sort_keys=True))"
                   " for e in ev if e.get('cat') in ('samples', 'osrt', 'cpu_state')]\""]),
    DiffTest(name="host_export_perfetto", cmd=["export", "{trace}", "-o", "{tmp}/out.pftrace"],
             trace="host/host.sql", out="host/export_perfetto.err", stderr=True),
]
