# stepscope export and report: timeline files and the CLI's handling of bad input.
# The .pftrace's structure is checked by decoding it (src/export/timeline_test.cc);
# here the Chrome JSON of a small trace is compared whole, so every event can be
# checked by hand against tests/diff/fixtures/export/small.sql.
TESTS = [
    DiffTest(name="export_chrome_small",
             cmd=["export", "--timeline-format", "chrome", "--util-bucket", "1us", "-q", "{trace}", "-o", "{tmp}/out.json"],
             trace="export/small.sql", out="export/small_chrome.json",
             post=["python3", "-c", "import json,sys; d=json.load(open('out.json')); "
                   "print(json.dumps(d, indent=0, sort_keys=True))"]),
    # Labels from the trace (issue 37): an imported torch.profiler trace's process is named as the trace
    # names it (python3, not "process"), its threads keep their names; meta.process_name holds it.
    DiffTest(name="export_imported_names",
             cmd=["import", "-q", "{trace}", "-o", "{tmp}/k.sqlite"], trace="import/kineto_names.json",
             out="export/imported_names.txt",
             post=["sh", "-c", "{stepscope} export -q --timeline-format chrome {tmp}/k.sqlite -o {tmp}/k.json && "
                   "python3 -c \"import json, sqlite3; d = json.load(open('k.json')); "
                   "ev = d['traceEvents'] if isinstance(d, dict) else d; "
                   "print(sorted({(e['name'], e['pid'], e.get('tid', 0), e['args']['name']) for e in ev "
                   "if e.get('ph') == 'M' and e['name'] in ('process_name', 'thread_name') and e['pid'] == 681})); "
                   "print(sqlite3.connect('k.sqlite').execute('SELECT value FROM meta WHERE key = ?', "
                   "('process_name',)).fetchall())\""]),
    # GPU user annotations (issue 37): Kineto's gpu_user_annotation ranges (stored as NVTX rows whose
    # tid is the stream) land on a track of that stream under its GPU, named so, never on a host
    # "thread 7". Prints every track name and where each NVTX slice landed.
    DiffTest(name="export_gpu_annotations",
             cmd=["import", "-q", "{trace}", "-o", "{tmp}/k.sqlite"], trace="import/kineto_small.json",
             out="export/gpu_annotations.txt",
             post=["sh", "-c", "{stepscope} export -q --timeline-format chrome {tmp}/k.sqlite -o {tmp}/k.json && "
                   "python3 -c \"import json; d = json.load(open('k.json')); "
                   "ev = d['traceEvents'] if isinstance(d, dict) else d; "
                   "names = {(e['pid'], e.get('tid', 0)): e['args']['name'] for e in ev "
                   "if e.get('ph') == 'M' and e['name'] == 'thread_name'}; "
                   "print(sorted(names.items())); "
                   "print(sorted({(e['name'], names.get((e['pid'], e['tid']), '?')) for e in ev "
                   "if e.get('cat') == 'nvtx' and e.get('ph') == 'X'}))\""]),
    DiffTest(name="export_perfetto_summary",
             cmd=["export", "{trace}", "-o", "{tmp}/out.pftrace"],
             trace="report/training_steps.sql", out="export/training_perfetto.err", stderr=True),
    DiffTest(name="export_not_a_trace_is_exit_2",
             cmd=["export", "{trace}", "-o", "{tmp}/out.pftrace"], trace="export/not_a_trace.json",
             out="export/not_a_trace.err", rc=2, stderr=True, post=["ls", "{tmp}"]),
    DiffTest(name="export_missing_output_is_exit_2", cmd=["export", "{trace}"], trace="export/small.sql",
             out="export/missing_output.err", rc=2, stderr=True),
    DiffTest(name="export_bad_format_is_exit_2", cmd=["export", "--timeline-format", "svg", "{trace}", "-o", "{tmp}/x"],
             trace="export/small.sql", out="export/bad_format.err", rc=2, stderr=True),
    DiffTest(name="report_not_a_trace_is_exit_2",
             cmd=["report", "{trace}", "-o", "{tmp}/report.html"], trace="export/not_a_trace.json",
             out="export/report_not_a_trace.err", rc=2, stderr=True, post=["ls", "{tmp}"]),
    DiffTest(name="report_writes_one_file",
             cmd=["report", "{trace}", "-o", "{tmp}/report.html"],
             trace="report/training_steps.sql", out="export/report_training.err", stderr=True,
             post=["ls", "{tmp}"]),
]
