#!/usr/bin/env node
// Browser test of the HTML report: Playwright (npm playwright-core) drives
// Debian's Chromium headless, offline, over reports built by the real CLI.
//
//   node report_browser_test.mjs --stepscope BIN --make-trace BIN --out DIR [--docs-img docs/img]
//
// For each case it builds a trace from an SQL fixture, runs `stepscope report`,
// opens report.html from file:// and checks: the page finished drawing; every
// chart has data and painted pixels (or, for an empty trace, says why not);
// the console stayed clean; no request left the page (only the file itself
// was loaded); a kernel named <script>alert(1)</script> and a command line
// holding <img onerror> are shown as text while no dialog ever opens and no
// element is injected. On a real GPU trace (tests/fixtures/gpu/workers0_cpu4:
// the GPU starves for data) the findings section lists what `stepscope
// analyze` finds, in its order, and the memory chart and the live-at-peak
// table have data. The training trace also carries stored roofline rows
// (fixtures/report/roofline.sql: 3 kernels, 2 with FLOPs): the Roofline
// section draws exactly those 2 points, its roofs and ridge points, and a
// table of all 3 rows; the traces without roofline rows have no such section.
// The offload trace (1.5 s warm-up) checks that the step axis follows the
// steady steps; `report BEFORE AFTER` on workers0_cpu4 -> workers4_cpu4 checks
// the before/after section against `stepscope diff`. The kernel table filters
// and sorts; kernel labels are short names; the timeline has stream, NVTX and
// API lanes; utilization opens on the steady steps.
// Issue 37, at 1280x800: the reports of imported torch.profiler traces and an
// Nsight Systems export (tests/fixtures/public; ../shared/data's larger ones
// too where that exists) group findings of one rule and fix, fit them in the
// first screen (at most 5), stay under 6,000 px, draw every timeline lane in
// the full-page screenshot, put GPU annotations on their stream and hide the
// profiler's own host threads; before/after shows plain headers, times with
// units and collapses the unchanged rows.
// A full-page screenshot lands in DIR/<case>.png; with --docs-img DIR, small
// section screenshots (each < 300 KB) for docs/report.md land there too.
// Exits 77 (ctest: skipped) when chromium or node_modules is missing.
import { spawnSync } from 'node:child_process';
import zlib from 'node:zlib';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const SKIP = 77;
const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.resolve(here, '..', '..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const chromiumPath = process.env.STEPSCOPE_CHROMIUM || '/usr/bin/chromium';
const outDir = path.resolve(args.out || path.join(os.tmpdir(), 'stepscope-browser-test'));

if (!fs.existsSync(chromiumPath)) {
  console.log(`SKIP: ${chromiumPath} not found (apt-get install chromium; scripts/bootstrap.sh does)`);
  process.exit(SKIP);
}
let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  console.log(`SKIP: playwright-core not installed under ${src}/node_modules (run scripts/bootstrap.sh: npm ci)`);
  process.exit(SKIP);
}
if (!args.stepscope || !args['make-trace']) {
  console.log('usage: report_browser_test.mjs --stepscope BIN --make-trace BIN [--out DIR]');
  process.exit(2);
}

const HOSTILE_KERNEL = '<script>alert(1)</script>';
const HOSTILE_COMMAND = '<img src=x onerror=alert(2)>';
const CHARTS = ['chart-steps', 'chart-breakdown', 'chart-kernels', 'chart-utilization', 'chart-memory', 'chart-timeline'];
// --docs-img DIR: also save small screenshots of sections for docs/report.md.
const docsImg = args['docs-img'] ? path.resolve(args['docs-img']) : '';
const DOC_IMG_MAX = 300 * 1024;

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail ? ': ' + detail : ''}`);
  }
}

function run(cmd, argv) {
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r;
}

function buildReport(name, sqlFiles) {
  const trace = path.join(outDir, `${name}.sqlite`);
  const html = path.join(outDir, `${name}.html`);
  fs.rmSync(trace, { force: true });
  run(args['make-trace'], [trace, ...sqlFiles]);
  run(args.stepscope, ['report', '--quiet', '-f', trace, '-o', html]);
  return html;
}

// Opens `html` in a fresh offline browser profile and returns what happened.
async function openReport(html, shot, inspect, viewport) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'stepscope-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: viewport || { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const seen = { requests: [], consoleErrors: [], pageErrors: [], dialogs: [] };
  const url = pathToFileURL(html).href;
  try {
    context.on('request', (r) => { if (r.url() !== url) seen.requests.push(r.url()); });
    const page = context.pages()[0] || await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') seen.consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => seen.pageErrors.push(String(e)));
    page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    seen.result = await inspect(page);
    await page.waitForTimeout(300);  // let anything that was going to fire, fire
    await page.screenshot({ path: shot, fullPage: true });
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  return seen;
}

// Per chart: points reported by the page, series data length in ECharts, and
// how many canvas pixels are neither transparent nor white.
function chartState(ids) {
  const out = {};
  for (const id of ids) {
    const box = document.getElementById(id);
    const entry = window.stepscopeReport.charts[id] || {};
    const canvas = box.querySelector('canvas');
    let painted = 0;
    if (canvas) {
      const ctx = canvas.getContext('2d');
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < px.length; i += 4) {
        if (px[i + 3] > 0 && (px[i] < 240 || px[i + 1] < 240 || px[i + 2] < 240)) painted++;
      }
    }
    let seriesData = 0;
    if (entry.chart) {
      for (const s of entry.chart.getOption().series) seriesData += (s.data || []).length;
    }
    out[id] = { points: entry.points || 0, seriesData, painted, text: box.textContent };
  }
  return out;
}

fs.mkdirSync(outDir, { recursive: true });
const fixtures = path.join(src, 'tests', 'diff', 'fixtures', 'report');

// Case 1: a training trace with steps, hostile strings and memory.
{
  const hostileMeta = path.join(outDir, 'hostile_meta.sql');
  fs.writeFileSync(hostileMeta,
    `INSERT OR REPLACE INTO meta VALUES ('command_line', 'python3 train.py --tag "${HOSTILE_COMMAND}"');\n`);
  const html = buildReport('training', [path.join(fixtures, 'training_steps.sql'), path.join(fixtures, 'roofline.sql'),
                                        hostileMeta]);
  const shot = path.join(outDir, 'training.png');
  const seen = await openReport(html, shot, async (page) => {
    const charts = await page.evaluate(chartState, CHARTS);
    // Show the top-kernels tooltip of the hostile row: its name must arrive as text.
    const tooltip = await page.evaluate((name) => {
      const entry = window.stepscopeReport.charts['chart-kernels'];
      const rows = window.stepscopeReport.data.top_kernels.slice().reverse();
      const idx = rows.findIndex((r) => r.name === name);
      entry.chart.dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: idx });
      return idx;
    }, HOSTILE_KERNEL);
    await page.waitForTimeout(200);
    const dom = await page.evaluate((name) => ({
      tooltipText: Array.from(document.querySelectorAll('.tip')).map((t) => t.textContent).join('|'),
      summaryText: document.getElementById('summary').textContent,
      findingsText: document.getElementById('findings').textContent,
      scripts: document.querySelectorAll('script').length,
      imgs: document.querySelectorAll('img').length,
      kernelsInData: window.stepscopeReport.data.top_kernels.some((k) => k.name === name),
    }), HOSTILE_KERNEL);
    const roof = await page.evaluate(chartState, ['chart-roofline']);
    const rf = await page.evaluate(() => {
      const entry = window.stepscopeReport.charts['chart-roofline'];
      const series = entry.chart.getOption().series;
      entry.chart.dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: 0 });
      return {
        kernelPoints: series[0].name === 'kernels' ? series[0].data.length : -1,
        xAxis: entry.chart.getOption().xAxis[0].type,
        roofs: series.filter((s) => s.type === 'line').map((s) => s.name),
        ridges: (series.filter((s) => s.name === 'ridge points')[0] || { data: [] }).data.length,
        tableRows: document.querySelectorAll('#roofline-table tr').length - 1,
        tableText: document.getElementById('roofline-table').textContent,
      };
    });
    await page.waitForTimeout(200);
    rf.tooltipText = await page.evaluate(() => Array.from(document.querySelectorAll('.tip')).map((t) => t.textContent).join('|'));
    // The kernel table: filter by a piece of the hostile name, then sort by launches.
    await page.fill('#kernel-filter', 'alert');
    const filtered = await page.evaluate(() => Array.from(document.querySelectorAll('#kernel-table table tr')).slice(1)
      .map((tr) => ({ text: tr.firstChild.textContent, title: tr.firstChild.title })));
    await page.fill('#kernel-filter', '');
    await page.click('#kernel-table th[data-key="count"]');
    const byCount = await page.evaluate(() => ({
      first: Number(document.querySelector('#kernel-table table tr:nth-child(2) td:nth-child(4)').textContent.replace(/,/g, '')),
      max: Math.max(...window.stepscopeReport.data.kernels.map((k) => k.count)),
      rows: document.querySelectorAll('#kernel-table table tr').length - 1,
      all: window.stepscopeReport.data.kernels.length,
    }));
    return { charts, tooltip, dom, roof: roof['chart-roofline'], rf, filtered, byCount };
  });
  const r = seen.result;
  for (const id of CHARTS) {
    const c = r.charts[id];
    check(`training: ${id} has data`, c.points > 0 && c.seriesData > 0, JSON.stringify(c));
    check(`training: ${id} painted`, c.painted > 2000, `${c.painted} painted pixels`);
  }
  check('training: roofline chart has one point per kernel with FLOPs',
    r.roof.points === 2 && r.rf.kernelPoints === 2, JSON.stringify(r.rf));
  check('training: roofline chart painted', r.roof.painted > 2000, `${r.roof.painted} painted pixels`);
  check('training: roofline axes are logarithmic', r.rf.xAxis === 'log', r.rf.xAxis);
  check('training: roofline roofs are DRAM and the precisions used',
    JSON.stringify(r.rf.roofs) === JSON.stringify(['DRAM 3.00 TB/s', 'tensor bf16 790.0 TFLOP/s', 'fp32 (CUDA cores) 60.0 TFLOP/s']) &&
    r.rf.ridges === 2, JSON.stringify(r.rf));
  check('training: roofline table lists every stored row', r.rf.tableRows === 3, `${r.rf.tableRows} rows`);
  check('training: roofline tooltip shows the kernel, its bound and % of it',
    r.rf.tooltipText.includes('nvjet_tst_128x256_64x4_h_bz_NNT') && r.rf.tooltipText.includes('87.0% of that ceiling') &&
    r.rf.tooltipText.includes('1374.39 FLOP/B') && r.rf.tooltipText.includes('687.2 TFLOP/s'), JSON.stringify(r.rf.tooltipText));
  check('training: hostile roofline kernel name shown as text in the table',
    r.rf.tableText.includes('copy_kernel<img src=x onerror=alert(3)>'), r.rf.tableText.slice(0, 200));
  check('training: step chart has one bar per step',
    r.charts['chart-steps'].points === 6, `points ${r.charts['chart-steps'].points}`);
  check('training: kernel table filter finds the hostile kernel, as text, full name on hover',
    r.filtered.length === 1 && r.filtered[0].title === HOSTILE_KERNEL && !r.filtered[0].text.includes('script>'), JSON.stringify(r.filtered));
  check('training: kernel table sorts by launches and lists every kernel',
    r.byCount.first === r.byCount.max && r.byCount.rows === r.byCount.all, JSON.stringify(r.byCount));
  check('training: no console error', seen.consoleErrors.length === 0 && seen.pageErrors.length === 0,
    JSON.stringify([...seen.consoleErrors, ...seen.pageErrors]));
  check('training: no network request', seen.requests.length === 0, JSON.stringify(seen.requests));
  check('training: hostile kernel name reached the page as data', r.dom.kernelsInData && r.tooltip >= 0);
  check('training: hostile kernel name shown as text in the tooltip', r.dom.tooltipText.includes(HOSTILE_KERNEL),
    JSON.stringify(r.dom.tooltipText));
  check('training: hostile command line shown as text', r.dom.summaryText.includes(HOSTILE_COMMAND));
  check('training: hostile NVTX name shown as text in a finding', r.dom.findingsText.includes('forward ' + HOSTILE_COMMAND),
    JSON.stringify(r.dom.findingsText.slice(0, 300)));
  check('training: nothing injected', r.dom.scripts === 3 && r.dom.imgs === 0,
    `${r.dom.scripts} scripts, ${r.dom.imgs} imgs`);
  check('training: no dialog opened', seen.dialogs.length === 0, JSON.stringify(seen.dialogs));
  check('training: screenshot saved', fs.existsSync(shot) && fs.statSync(shot).size > 10000, shot);
}

// Case 2: an empty trace: every chart explains itself, nothing errors.
{
  const html = buildReport('empty', [path.join(fixtures, 'empty.sql')]);
  const shot = path.join(outDir, 'empty.png');
  const seen = await openReport(html, shot, async (page) => ({
    ...(await page.evaluate(chartState, CHARTS)),
    roofline: await page.evaluate(() => !!document.getElementById('roofline-section') || /oofline/.test(document.body.innerText)),
  }));
  check('empty: no roofline section, no word about it', seen.result.roofline === false);
  for (const id of CHARTS) {
    const c = seen.result[id];
    check(`empty: ${id} says why it is empty`, c.points === 0 && /No /.test(c.text), JSON.stringify(c));
  }
  check('empty: no console error', seen.consoleErrors.length === 0 && seen.pageErrors.length === 0,
    JSON.stringify([...seen.consoleErrors, ...seen.pageErrors]));
  check('empty: no network request', seen.requests.length === 0, JSON.stringify(seen.requests));
}

// A GPU fixture trace (tests/fixtures/gpu/NAME.sqlite.gz), unpacked into outDir.
function gpuTrace(name) {
  const trace = path.join(outDir, `${name}.sqlite`);
  fs.writeFileSync(trace, zlib.gunzipSync(fs.readFileSync(path.join(src, 'tests', 'fixtures', 'gpu', `${name}.sqlite.gz`))));
  return trace;
}

// Saves a screenshot of `selector` as docs/img/NAME.png (with --docs-img) and
// checks that it stays small.
async function docShot(page, selector, name) {
  if (!docsImg) return;
  fs.mkdirSync(docsImg, { recursive: true });
  const file = path.join(docsImg, `${name}.png`);
  await page.locator(selector).first().screenshot({ path: file });
  const size = fs.statSync(file).size;
  check(`docs: ${name}.png under ${DOC_IMG_MAX / 1024} KB`, size > 5000 && size < DOC_IMG_MAX, `${size} bytes`);
}

// Case 3: a real GPU trace: the findings are `stepscope analyze`'s, in its
// order (data_loading first), and device memory has a curve and a peak.
{
  const trace = gpuTrace('workers0_cpu4');
  const html = path.join(outDir, 'workers0_cpu4.html');
  run(args.stepscope, ['report', '--quiet', '-f', trace, '-o', html]);
  const analyze = JSON.parse(run(args.stepscope, ['analyze', '--format', 'json', trace]).stdout);
  const expected = analyze.findings.map((f) => f.rule);
  const shot = path.join(outDir, 'workers0_cpu4.png');
  const seen = await openReport(html, shot, async (page) => ({
    charts: await page.evaluate(chartState, CHARTS),
    dom: await page.evaluate(() => ({
      rules: Array.from(document.querySelectorAll('#findings li.finding')).map((li) => li.dataset.rule),
      firstText: (document.querySelector('#findings li.finding') || {}).textContent || '',
      liveRows: document.querySelectorAll('#memory-peaks table tr').length - 1,
      memoryNote: document.getElementById('memory-note').textContent,
      roofline: !!document.getElementById('roofline-section') || /oofline/.test(document.body.innerText),
      kernelLabels: window.stepscopeReport.charts['chart-kernels'].chart.getOption().yAxis[0].data,
      stepDetailRows: document.querySelectorAll('#step-detail table tr').length - 1,
      lanes: window.stepscopeReport.data.timeline.lanes.map((l) => l.kind),
      zoom: window.stepscopeReport.charts['chart-utilization'].chart.getOption().dataZoom[0],
      focus: [window.stepscopeReport.data.focus_start_ns / 1e6, window.stepscopeReport.data.focus_end_ns / 1e6],
      predicted: document.querySelectorAll('#findings .predicted').length,
      predictedInData: window.stepscopeReport.data.findings.filter((f) => f.predicted_step_ns >= 0).length,
    })),
  }));
  const r = seen.result;
  check('gpu: analyze finds something', expected.length > 0 && expected[0] === 'data_loading', JSON.stringify(expected));
  check('gpu: findings section lists the analyze findings in order',
    JSON.stringify(r.dom.rules) === JSON.stringify(expected), `${JSON.stringify(r.dom.rules)} vs ${JSON.stringify(expected)}`);
  const first = analyze.findings[0] || {};
  check('gpu: first finding shows its title and fix as text',
    r.dom.firstText.includes(first.title) && r.dom.firstText.includes(first.fix), r.dom.firstText.slice(0, 300));
  for (const id of CHARTS) {
    const c = r.charts[id];
    check(`gpu: ${id} has data`, c.points > 0 && c.seriesData > 0 && c.painted > 2000, JSON.stringify(c));
  }
  check('gpu: memory peak in the note', /peak/.test(r.dom.memoryNote), r.dom.memoryNote);
  check('gpu: live set at the peak listed', r.dom.liveRows > 0, `${r.dom.liveRows} rows`);
  check('gpu: no roofline rows, no roofline section', r.dom.roofline === false);
  check('gpu: top-kernel labels are short names (no return type, no argument list)',
    r.dom.kernelLabels.length > 0 && r.dom.kernelLabels.every((l) => !/^void |\(/.test(l) && l.length <= 64), JSON.stringify(r.dom.kernelLabels));
  check('gpu: the step detail lists the step\'s top kernels', r.dom.stepDetailRows > 0, `${r.dom.stepDetailRows} rows`);
  check('gpu: the timeline has GPU-stream, NVTX and CUDA API lanes',
    ['gpu', 'nvtx', 'api'].every((k) => r.dom.lanes.includes(k)), JSON.stringify(r.dom.lanes));
  const span = r.dom.focus[1] - r.dom.focus[0];
  check('gpu: utilization opens on the steady steps',
    r.dom.zoom.startValue <= r.dom.focus[0] && r.dom.zoom.endValue >= r.dom.focus[1] - 0.001 &&
    r.dom.zoom.endValue - r.dom.zoom.startValue <= 1.1 * span,
    JSON.stringify([r.dom.zoom.startValue, r.dom.zoom.endValue, r.dom.focus]));
  check('gpu: a predicted step time is shown for each finding that has one (what-if)',
    r.dom.predicted === r.dom.predictedInData, `${r.dom.predicted} shown, ${r.dom.predictedInData} in the data`);
  check('gpu: no console error', seen.consoleErrors.length === 0 && seen.pageErrors.length === 0,
    JSON.stringify([...seen.consoleErrors, ...seen.pageErrors]));
  check('gpu: no network request', seen.requests.length === 0, JSON.stringify(seen.requests));
}

// Case 4: the offload trace, whose warm-up step (1.5 s) is ~12x its steady
// steps: the step axis follows the steady steps and the warm-up bar is cut
// and labeled with its duration. Screenshots for docs/report.md.
{
  const trace = gpuTrace('offload');
  const html = path.join(outDir, 'offload.html');
  run(args.stepscope, ['report', '--quiet', '-f', trace, '-o', html]);
  const shot = path.join(outDir, 'offload.png');
  const seen = await openReport(html, shot, async (page) => {
    const res = await page.evaluate(() => {
      const st = window.stepscopeReport.data.steps;
      const o = window.stepscopeReport.charts['chart-steps'].chart.getOption();
      return { yMax: o.yAxis[0].max, labels: o.xAxis[0].data,
               warm: Math.max(...st.filter((s) => s.status !== 'ok').map((s) => s.breakdown.span_ns / 1e6)),
               steady: Math.max(...st.filter((s) => s.status === 'ok').map((s) => s.breakdown.span_ns / 1e6)) };
    });
    await docShot(page, 'header', 'report_header');
    await docShot(page, '#findings-section', 'report_findings');
    await docShot(page, 'section:has(#chart-steps)', 'report_steps');
    await docShot(page, 'section:has(#chart-timeline)', 'report_timeline');
    await docShot(page, 'section:has(#chart-utilization)', 'report_utilization');
    await docShot(page, 'section:has(#chart-memory)', 'report_memory');
    await docShot(page, '.row', 'report_breakdown_kernels');
    await page.fill('#kernel-filter', 'elementwise');
    await docShot(page, '#kernel-table-section', 'report_kernel_table');
    return res;
  });
  const r = seen.result;
  check('offload: the step axis is the steady steps\' scale, not the warm-up\'s',
    r.yMax >= r.steady && r.yMax < 2 * r.steady && r.warm > r.yMax, JSON.stringify(r));
  check('offload: the cut warm-up bar is labeled with its duration',
    r.labels.some((l) => /warm-up 1\.\d\d s/.test(l)), JSON.stringify(r.labels));
  check('offload: no console error', seen.consoleErrors.length === 0 && seen.pageErrors.length === 0,
    JSON.stringify([...seen.consoleErrors, ...seen.pageErrors]));
  check('offload: no network request', seen.requests.length === 0, JSON.stringify(seen.requests));
}

// Case 5: `report BEFORE AFTER` on the data-loading fix (0 -> 4 DataLoader
// workers): the before/after section shows `stepscope diff`'s speedup and
// tables, and the data_loading finding before and after.
{
  const before = gpuTrace('workers0_cpu4');
  const after = gpuTrace('workers4_cpu4');
  const html = path.join(outDir, 'compare.html');
  run(args.stepscope, ['report', '--quiet', '-f', before, after, '-o', html]);
  const diff = JSON.parse(run(args.stepscope, ['diff', '--format', 'json', before, after]).stdout);
  const stepRow = diff.diff_summary.filter((x) => /^step time/.test(x.metric))[0];
  const speedup = stepRow.before / stepRow.after;
  const shot = path.join(outDir, 'compare.png');
  const seen = await openReport(html, shot, async (page) => {
    await docShot(page, '#compare-section', 'report_compare');
    return page.evaluate(() => ({
      big: (document.querySelector('#compare .speedup .big') || {}).textContent,
      tables: document.querySelectorAll('#compare > table').length,
      text: document.getElementById('compare').textContent,
      heads: Array.from(document.querySelectorAll('#compare th')).map((th) => th.textContent),
      shownStatus: Array.from(document.querySelectorAll('#compare > table.t-kernels tr, #compare > table.t-nvtx tr'))
        .slice(0).map((tr) => (tr.firstChild || {}).textContent),
      times: Array.from(document.querySelectorAll('#compare > table.t-kernels tr:nth-child(2) td.num')).slice(0, 3).map((td) => td.textContent),
    }));
  });
  const r = seen.result;
  check('compare: the speedup is stepscope diff\'s', r.big === speedup.toFixed(2) + '\u00d7', `${r.big} vs ${speedup}`);
  check('compare: summary, kernel, NVTX, top-5 and findings tables', r.tables === 5, `${r.tables} tables`);
  check('compare: human headers (no snake_case, no raw "(ns)")',
    r.heads.length > 0 && r.heads.every((h) => !/_|\(ns\)/.test(h)), JSON.stringify(r.heads));
  check('compare: times carry their unit', r.times.length > 0 && r.times.every((t) => / (ns|us|ms|s)$/.test(t)),
    JSON.stringify(r.times));
  check('compare: unchanged ("same") rows collapsed', !r.shownStatus.includes('same') && /unchanged/.test(r.text),
    JSON.stringify(r.shownStatus));
  check('compare: data_loading listed before and after', /data_loading/.test(r.text), r.text.slice(0, 200));
  check('compare: no console error', seen.consoleErrors.length === 0 && seen.pageErrors.length === 0,
    JSON.stringify([...seen.consoleErrors, ...seen.pageErrors]));
  check('compare: no network request', seen.requests.length === 0, JSON.stringify(seen.requests));
}


// Case 6 (issue 37): the reports of an imported torch.profiler trace and an
// Nsight Systems export, at 1280x800. The findings of one rule and fix are
// one item (analyze lists host_wait / launch_bound once per range) and every
// item fits the first screen (at most 5); the page is under 6,000 px tall
// (the host-threads table paginated, the profiler's own threads hidden, the
// counters collapsed); every lane of the timeline has drawn pixels in the
// full-page screenshot itself (no lane left blank by chunked drawing); GPU
// user annotations sit on their stream, never as a host "thread 7". The
// repository's fixtures always; ../shared/data's larger traces when present.
const ACCEPT_VIEWPORT = { width: 1280, height: 800 };
const PAGE_MAX = 6000;

// Per lane of the timeline: pixels that are not background inside the lane's
// band of the full-page screenshot `png` (decoded in the page).
async function acceptanceState(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const cv = document.createElement('canvas');
    cv.width = img.width;
    cv.height = img.height;
    const g = cv.getContext('2d', { willReadFrequently: true });
    g.drawImage(img, 0, 0);
    const scale = img.width / document.documentElement.clientWidth;
    const lanes = [];
    const entry = window.stepscopeReport.charts['chart-timeline'];
    const tl = window.stepscopeReport.data.timeline;
    if (entry && entry.chart) {
      const box = document.getElementById('chart-timeline').getBoundingClientRect();
      const grid = entry.chart.getModel().getComponent('grid').coordinateSystem.getRect();
      const band = Math.max(4, Math.floor(grid.height / tl.lanes.length * 0.7));
      tl.lanes.forEach((l, i) => {
        const y = entry.chart.convertToPixel({ yAxisIndex: 0 }, i);
        // Inside the grid, right of the axis line.
        const x0 = Math.round((box.left + window.scrollX + grid.x + 2) * scale);
        const y0 = Math.round((box.top + window.scrollY + y - band / 2) * scale);
        const px = g.getImageData(x0, y0, Math.round((grid.width - 4) * scale), Math.round(band * scale)).data;
        let n = 0;
        for (let k = 0; k < px.length; k += 4) if (px[k] < 200 || px[k + 1] < 200 || px[k + 2] < 200) n++;
        lanes.push({ name: l.name, kind: l.kind, painted: n });
      });
    }
    const items = Array.from(document.querySelectorAll('#findings li.finding'));
    const host = document.getElementById('host-section');
    return {
      height: document.body.scrollHeight,
      findings: items.length,
      inFirstScreen: items.filter((li) => li.getBoundingClientRect().bottom + window.scrollY <= window.innerHeight).length,
      members: items.map((li) => Number(li.dataset.members)),
      notPriced: items.filter((li) => /not priced \(evidence only/.test(li.textContent)).map((li) => li.dataset.rule),
      lanes,
      summary: document.getElementById('summary').textContent,
      gpuMetricRows: document.querySelectorAll('#gpu-metrics-section tbody tr').length,
      host: host ? {
        rowsShown: host.querySelectorAll(':scope > table.threads > tbody > tr').length,
        heads: Array.from(host.querySelectorAll('th')).map((th) => th.textContent),
        hidden: Array.from(host.querySelectorAll('details.more > summary')).map((x) => x.textContent),
      } : null,
    };
  }, png.toString('base64'));
}

async function acceptance(name, input, opts) {
  const trace = path.join(outDir, `${name}.sqlite`);
  fs.rmSync(trace, { force: true });
  if (opts.native) fs.writeFileSync(trace, zlib.gunzipSync(fs.readFileSync(input)));  // a stepscope trace
  else run(args.stepscope, ['import', '-q', input, '-o', trace]);
  const html = path.join(outDir, `${name}.html`);
  run(args.stepscope, ['report', '--quiet', '-f', trace, '-o', html]);
  const analyze = JSON.parse(run(args.stepscope, ['analyze', '--format', 'json', trace]).stdout).findings;
  const groups = new Set(analyze.map((f) => f.rule + '\u0000' + f.fix)).size;
  const shot = path.join(outDir, `${name}.png`);
  const seen = await openReport(html, shot, async (page) => {
    const png = await page.screenshot({ fullPage: true });
    const state = await acceptanceState(page, png);
    if (opts.print) {
      // Printing opens every collapsed part (the page's beforeprint handler
      // runs first) and closes them again afterwards.
      await page.evaluate(() => {
        window.__closedAtPrint = [];
        window.addEventListener('beforeprint', () => window.__closedAtPrint.push(document.querySelectorAll('details:not([open])').length));
      });
      state.closedBefore = await page.evaluate(() => document.querySelectorAll('details:not([open])').length);
      await page.pdf({ path: path.join(outDir, `${name}.pdf`) });
      state.closedAtPrint = await page.evaluate(() => window.__closedAtPrint);
      state.closedAfter = await page.evaluate(() => document.querySelectorAll('details:not([open])').length);
    }
    return state;
  }, ACCEPT_VIEWPORT);
  const r = seen.result;
  console.log(`     ${name}: ${r.height} px, ${r.findings} findings (${analyze.length} by analyze), ` +
              `${r.inFirstScreen} in the first screen, ${r.lanes.filter((l) => l.painted === 0).length} of ` +
              `${r.lanes.length} lanes empty`);
  check(`${name}: one finding per rule and fix (${analyze.length} -> ${groups})`,
    r.findings === groups && r.members.reduce((a, b) => a + b, 0) === analyze.length, JSON.stringify(r.members));
  check(`${name}: at most 5 findings, all in the first screen`,
    r.findings <= 5 && r.inFirstScreen === r.findings, `${r.inFirstScreen} of ${r.findings}`);
  check(`${name}: page under ${PAGE_MAX} px`, r.height < PAGE_MAX, `${r.height} px`);
  check(`${name}: the timeline has lanes`, r.lanes.length > 0 || opts.noTimeline, JSON.stringify(r.lanes));
  check(`${name}: every timeline lane drawn in the full-page screenshot`, r.lanes.every((l) => l.painted > 0),
    JSON.stringify(r.lanes.filter((l) => l.painted === 0)));
  if (opts.annotations) {
    check(`${name}: GPU annotations on their stream, no host "thread ${opts.annotations}"`,
      r.lanes.some((l) => l.kind === 'gpu_annotation' && / stream \d+ annotations$/.test(l.name)) &&
      !r.lanes.some((l) => l.name.startsWith(`thread ${opts.annotations} `)), JSON.stringify(r.lanes.map((l) => l.name)));
  }
  const metricLanes = r.lanes.filter((l) => l.kind === 'gpu_metric');
  check(`${name}: ${opts.gpuMetrics || 0} GPU metrics lanes, drawn, and ${opts.gpuMetricRows || 0} rows in their section`,
    metricLanes.length === (opts.gpuMetrics || 0) && metricLanes.every((l) => l.painted > 0) &&
    r.gpuMetricRows === (opts.gpuMetricRows || 0), JSON.stringify([metricLanes, r.gpuMetricRows]));
  check(`${name}: evidence-only findings say "not priced": ${JSON.stringify(opts.notPriced || [])}`,
    JSON.stringify(r.notPriced) === JSON.stringify(opts.notPriced || []), JSON.stringify(r.notPriced));
  if (opts.host) {
    check(`${name}: host threads one row per thread, times with units, at most 12 shown`,
      r.host && r.host.rowsShown > 0 && r.host.rowsShown <= 12 && !r.host.heads.some((h) => /\(ns\)/.test(h)),
      JSON.stringify(r.host));
    check(`${name}: the profiler's own threads hidden with a count`,
      r.host && r.host.hidden.some((h) => /^\d+ profiler threads? hidden: .*NSys/.test(h)), JSON.stringify(r.host && r.host.hidden));
  }
  if (opts.print) {
    check(`${name}: printing opens every collapsed part, then closes them again`,
      r.closedBefore > 0 && JSON.stringify(r.closedAtPrint) === '[0]' && r.closedAfter === r.closedBefore,
      JSON.stringify([r.closedBefore, r.closedAtPrint, r.closedAfter]));
  }
  check(`${name}: no console error`, seen.consoleErrors.length === 0 && seen.pageErrors.length === 0,
    JSON.stringify([...seen.consoleErrors, ...seen.pageErrors]));
  check(`${name}: no network request`, seen.requests.length === 0, JSON.stringify(seen.requests));
}

{
  const pub = path.join(src, 'tests', 'fixtures', 'public');
  await acceptance('kineto_annotations', path.join(pub, 'hta', 'with_gpu_user_annotation_step_based_trace_2543932.json.gz'),
                   { annotations: 7 });
  await acceptance('kineto_sampled', path.join(pub, 'hta', 'timeline_analysis_sampled_rank-0.json.gz'), {});
  // A stepscope trace with GPU metrics (PM sampling on an H200): three counter lanes under GPU 0's stream.
  await acceptance('h200_pm_fp32', path.join(src, 'tests', 'fixtures', 'gpu', 'h200_pm_small_fp32_s2_7.sqlite.gz'),
                   { native: true, gpuMetrics: 3, gpuMetricRows: 10, notPriced: ['tensor_idle'] });
  await acceptance('nsys_fuser_h100', path.join(pub, 'nsys', 'fuser_h100_report1.sqlite'), { host: true, print: true });
  // The larger traces of the issue, where ../shared/data exists.
  const shared = path.resolve(src, '..', 'shared', 'data');
  const big = [['kineto_gpt_small', path.join(shared, 'kineto_gpt_small_3steps.json.gz'), {}],
               ['nsys_fuser_h200', path.join(shared, 'public', 'nsys', 'fuser_h200_report1.sqlite'), { host: true }]];
  for (const [name, file, opts] of big) {
    if (fs.existsSync(file)) await acceptance(name, file, opts);
    else console.log(`skip ${name}: ${file} not found`);
  }
}

console.log(`screenshots: ${outDir}/{training,empty,workers0_cpu4,offload,compare,kineto_*,nsys_*}.png` + (docsImg ? ` and ${docsImg}/report_*.png` : ''));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
