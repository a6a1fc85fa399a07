#!/usr/bin/env python3
"""The HTML report shows the analysis library's numbers: for each trace, the
report's data block must equal what `stepscope steps`, `analyze`, `stats`
(cuda_gpu_kern_sum, gpu_time_util --buckets 500) and `memory` print.

  report_matches_cli.py STEPSCOPE [--ceilings FILE] TRACE[.sqlite|.sqlite.gz]...

--ceilings: both the report and analyze price with these bench results (the
report applies analyze's ceilings: one set of analysis options).
"""
import gzip, os, shutil, tempfile
import json, re, subprocess, sys
S = sys.argv[1]
args = sys.argv[2:]
ceil = []
if args[:1] == ['--ceilings']:
    ceil, args = args[:2], args[2:]
tmp = tempfile.mkdtemp(prefix='stepscope-report-cli-')
traces = []
for t in args:
    if t.endswith('.gz'):
        out = os.path.join(tmp, os.path.basename(t)[:-3])
        with gzip.open(t, 'rb') as f, open(out, 'wb') as g:
            shutil.copyfileobj(f, g)
        t = out
    traces.append(t)
html_path = os.path.join(tmp, 'report.html')
def cli(*a): return json.loads(subprocess.run([S, *a, '--format', 'json'], capture_output=True, text=True, check=True).stdout)
bad = 0
def eq(what, a, b, tol=0):
    global bad
    ok = abs(a - b) <= tol if isinstance(a, (int, float)) and isinstance(b, (int, float)) else a == b
    if not ok:
        bad += 1; print('  MISMATCH', what, a, b)
for t in traces:
    subprocess.run([S, 'report', '-q', '-f', *ceil, t, '-o', html_path], check=True)
    html = open(html_path).read()
    d = json.loads(re.search(r'<script type="application/json" id="stepscope-data">(.*?)</script>', html, re.S).group(1))
    steps = cli('steps', t)
    rows = steps['steps']
    eq('step count', len(d['steps']), len(rows))
    for r, s in zip(d['steps'], rows):
        b = r['breakdown']; span = b['span_ns']
        eq('step', r['number'], s['step']); eq('start', r['start_ns'], s['start_ns']); eq('dur', span, s['duration_ns'])
        eq('dur2', r['end_ns'] - r['start_ns'], s['duration_ns'])
        for k, c in [('compute_ns', 'compute_pct'), ('communication_ns', 'communication_pct'), ('memory_ns', 'memory_pct'), ('idle_ns', 'idle_pct'), ('busy_ns', 'gpu_busy_pct')]:
            eq(f'step {s["step"]} {k}', round(100 * b[k] / span, 3) if span else 0, s[c], 0.0011)
        eq('status', r['status'], s['status']); eq('gpu_ops', r['gpu_ops'], s['gpu_ops'])
    ss = steps['step_summary'][0] if steps['step_summary'] else None
    if ss:
        eq('steady', d['step_summary']['steady'], ss['steady']); eq('median', d['step_summary']['median_ns'], ss['median_ns'], 0.05)
    a = cli('analyze', *ceil, t)
    # analyze's MFU (stored roofline counters here; --model below): the same value, or none.
    mfu = a.get('mfu') or []
    eq('mfu', d['mfu_pct'], mfu[0]['mfu_pct'] if mfu else -1, 0.001)
    eq('mfu line', bool(d['mfu']), bool(mfu))
    if os.path.basename(t) == 'default.sqlite':  # the bundled train_gpt small trace, with its model
        cfg = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'plan', 'configs',
                           'train_gpt_small.json')
        model = ['--model', cfg, '--micro-batch', '8', '--seq-len', '512']
        subprocess.run([S, 'report', '-q', '-f', *ceil, *model, t, '-o', html_path], check=True)
        dm = json.loads(re.search(r'<script type="application/json" id="stepscope-data">(.*?)</script>',
                                  open(html_path).read(), re.S).group(1))
        am = cli('analyze', *ceil, *model, t)['mfu'][0]
        eq('mfu --model', dm['mfu_pct'], am['mfu_pct'], 0.001)
        eq('mfu --model line', dm['mfu'].startswith('MFU: '), True)
    eq('findings', [f['rule'] for f in d['findings']], [f['rule'] for f in a['findings']])
    for f, g in zip(d['findings'], a['findings']):
        for k in ['cost_ns', 'cost_per_step_ns', 'count', 'title', 'where', 'detail', 'fix']: eq('finding ' + k, f[k], g[k])
        eq('finding predicted step', f.get('predicted_step_ns', -1), g['step_after_ns'] if g['step_after_ns'] > 0 else -1)
    sm = a['summary'][0]
    for k in ['analyzed_ns', 'busy_ns', 'idle_ns', 'host_wait_ns', 'sync_wait_ns', 'kernel_wait_ns', 'other_idle_ns']: eq('analyzed ' + k, d['analyzed'][k], sm[k])
    # Per-step idle by cause: over the steady steps it sums to analyze's totals,
    # and no step's causes exceed its idle time.
    steady = [r for r in d['steps'] if r['status'] == 'ok']
    if sm.get('device', -1) >= 0 and steady:
        for i, k in enumerate(['host_wait_ns', 'sync_wait_ns', 'kernel_wait_ns', 'other_idle_ns']):
            eq('steady steps ' + k, sum(r['idle_by_cause_ns'][i] for r in steady), sm[k])
        for r in d['steps']:
            if sum(r['idle_by_cause_ns']) > r['breakdown']['idle_ns']:
                eq(f'step {r["number"]} idle causes <= idle', sum(r['idle_by_cause_ns']), r['breakdown']['idle_ns'])
    k = cli('stats', '--report', 'cuda_gpu_kern_sum', t)
    kr = k if isinstance(k, list) else k[list(k.keys())[0]]
    for x, y in zip(d['top_kernels'], kr):
        eq('kernel name', x['name'], y['name']); eq('kernel total', x['total_ns'], y['total_ns']); eq('kernel n', x['count'], y['instances'])
        eq('kernel pct', x['percent'], y['time_pct'], 0.0011); eq('kernel min', x['min_ns'], y['min_ns']); eq('kernel max', x['max_ns'], y['max_ns'])
    eq('kernel time', d['summary']['kernel_time_ns'], sum(y['total_ns'] for y in kr))
    # The kernel table: every row of cuda_gpu_kern_sum (up to 2000), in its order.
    eq('kernel table rows', len(d['kernels']), min(2000, len(kr)))
    for x, y in zip(d['kernels'], kr):
        eq('table name', x['name'], y['name']); eq('table total', x['total_ns'], y['total_ns']); eq('table n', x['count'], y['instances'])
        eq('table avg', x['avg_ns'], y['avg_ns'], 0.0011); eq('table median', x['median_ns'], y['med_ns'], 0.0011)
    eq('top = head of table', d['top_kernels'], d['kernels'][:len(d['top_kernels'])])
    # Utilization covers the GPU work launched in the steady steps: the same
    # --time-range reproduces it.
    rng = ['--time-range', d['utilization_range']] if d['utilization_range'] else []
    u = cli('stats', '--report', 'gpu_time_util', '--buckets', '500', *rng, t)
    u = u if isinstance(u, list) else u[list(u.keys())[0]]
    ur = [r for r in u if r['stream'] == 'all']
    us = [(s['device'], tt, v) for s in d['utilization'] for tt, v in zip(s['t_ns'], s['values'])]
    eq('util points', len(us), len(ur))
    for (dev, tt, v), r in zip(us, ur):
        eq('util', (dev, tt), (r['device'], r['start_ns'])); eq('util pct', v, r['util_pct'], 0.051)
    m = cli('memory', t)
    for p in d['memory_peaks']:
        pk = [r for r in m['peaks'] if r['place'] == p['place'] and r['series'] == 'total'][0]
        eq('peak bytes', p['peak_bytes'], pk['peak_bytes']); eq('peak at', p['peak_t_ns'] / 1e9, pk['at_s'], 2e-6)
        eq('peak step', p['step'], pk['step'] if pk['step'] != '' else -1); eq('peak range', p['range'], pk['range'])
        live = [r for r in m['live_at_peak'] if r['place'] == p['place'] and r['series'] == 'total']
        eq('live', [(g['range'], g['api'], g['count'], g['bytes']) for g in p['live']], [(r['range'], r['api'], r['count'], r['bytes']) for r in live])
        ser = [s for s in d['memory'] if s['name'] == p['place'] + ' total'][0]
        eq('series max = peak', max(ser['values']), p['peak_bytes'])
    eq('memory peaks', len(d['memory_peaks']), len([r for r in m['peaks'] if r['place'] != 'host' and r['series'] == 'total']))
    # The timeline's step is the steady step nearest the median; its GPU
    # window is that step's, and every event overlaps the shown window.
    tl = d['timeline']
    if steady:
        med = d['step_summary']['median_ns']
        best = min(abs((r['end_ns'] - r['start_ns']) - med) for r in steady)
        pick = [r for r in steady if r['number'] == tl['step']]
        eq('timeline step is a median step', len(pick) == 1 and abs((pick[0]['end_ns'] - pick[0]['start_ns']) - med) == best, True)
        if pick: eq('timeline gpu window', (tl['gpu_start_ns'], tl['gpu_end_ns']), (pick[0]['start_ns'], pick[0]['end_ns']))
        eq('timeline events overlap the window', all(e[1] < tl['end_ns'] and e[2] > tl['start_ns'] for e in tl['events']), True)
        gpu_lanes = {i for i, l in enumerate(tl['lanes']) if l['kind'] == 'gpu'}
        eq('timeline has GPU ops', any(e[0] in gpu_lanes for e in tl['events']), True)
    # GPU metrics: the gpu_metrics_sum rows over the report's range (the
    # steady steps' GPU windows); no rows, no counter lane.
    grng = ['--time-range', d['gpu_metrics_range']] if d['gpu_metrics_range'] else []
    g = cli('stats', '--report', 'gpu_metrics_sum', *grng, t)
    g = g if isinstance(g, list) else (g[list(g.keys())[0]] if g else [])
    eq('gpu metrics rows', len(d['gpu_metrics']), len(g))
    for x, y in zip(d['gpu_metrics'], g):
        for k in ('device', 'metric', 'unit', 'name', 'samples', 'covered_ns'):
            eq('gpu metric ' + k, x[k], y[k])
        for k in ('mean', 'min', 'max'):
            eq('gpu metric ' + k, x[k], y[k], 0.006 + 1e-9 * abs(y[k]))
    if not g:
        eq('no gpu metrics, no counter lane', tl.get('counters', []), [])
    print(t, 'steps', len(rows), 'gpu metrics', len(g), 'counter points', sum(len(c['t_ns']) for c in tl.get('counters', [])), 'findings', [f['rule'] for f in d['findings']], 'kernels', len(d['top_kernels']),
          'util', len(us), 'mem series', [(s['name'], len(s['t_ns'])) for s in d['memory']], 'peaks', [(p['place'], p['peak_bytes'], len(p['live'])) for p in d['memory_peaks']])
shutil.rmtree(tmp, ignore_errors=True)
print('mismatches:', bad)
sys.exit(1 if bad else 0)
