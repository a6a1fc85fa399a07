// The report page: reads the JSON data block and draws every section.
// Contract with html_report.cc: data arrives only through
// <script id="stepscope-data" type="application/json">; every string from the
// trace reaches the DOM through textContent (el() below) or canvas text, never
// through innerHTML, so a kernel named "<script>..." is shown, not run.
// Tests read window.stepscopeReport.charts[id].points and body[data-ready].
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('stepscope-data').textContent);
  var report = { data: data, charts: {} };
  window.stepscopeReport = report;

  var COLORS = { compute: '#2f6fdf', communication: '#9b59b6', memory: '#e6a23c', idle: '#c7ccd6',
                 host_wait: '#e05d5d', sync_wait: '#f2b84b', kernel_wait: '#9aa5b8', other_idle: '#c7ccd6',
                 edge_idle: '#e3e6eb' };
  // Idle by cause (gaps.h), in the order of StepRow::idle_by_cause_ns.
  var CAUSES = [['host_wait', 'idle: waiting for the host'], ['sync_wait', 'idle: after a sync'],
                ['kernel_wait', 'idle: launch latency'], ['other_idle', 'idle: other']];

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function fmtNs(ns) {
    var a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + ' ns';
    if (a < 1e6) return (ns / 1e3).toFixed(2) + ' us';
    if (a < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  }
  function fmtBytes(b) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(2) : b.toFixed(0)) + ' ' + units[i];
  }
  function fmtCount(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function ms(ns) { return ns / 1e6; }
  // A tooltip body built from text lines (the first one bold): DOM, not HTML.
  function tip(lines) {
    var box = el('div', null, 'tip');
    lines.forEach(function (line, i) { box.appendChild(el(i ? 'div' : 'b', line)); });
    return box;
  }
  function short(name, n) { return name.length > n ? name.slice(0, n - 1) + '\u2026' : name; }
  var shortName = stepscopeViews.shortName;

  // Draws a chart into #id, or an explanation when there is nothing to draw.
  function chart(id, points, emptyText, option) {
    var box = document.getElementById(id);
    box.dataset.points = String(points);
    if (!points) {
      box.classList.add('empty');
      box.textContent = emptyText;
      report.charts[id] = { points: 0, chart: null };
      return;
    }
    var c = echarts.init(box, null, { renderer: 'canvas' });
    option.animation = false;
    option.tooltip = Object.assign({ confine: true, renderMode: 'html' }, option.tooltip || {});
    c.setOption(option);
    report.charts[id] = { points: points, chart: c };
  }

  function summary() {
    var s = data.summary;
    var box = document.getElementById('summary');
    function item(k, v) {
      if (v === '' || v === undefined || v === null) return;
      var d = el('div');
      d.appendChild(el('span', k, 'k'));
      d.appendChild(el('span', v, 'v'));
      box.appendChild(d);
    }
    item('trace', s.trace_path);
    item('source', s.source + (s.finalized ? '' : ' (cut off: not finalized)'));
    item('command', s.command_line);
    item('host', s.host);
    if (s.rank !== '') item('rank', s.rank + (s.world_size ? ' of ' + s.world_size : ''));
    // "0: NVIDIA H100 (79.11 GiB)" x 8 -> "8 x NVIDIA H100 (79.11 GiB) (0-7)".
    var kinds = [];
    s.devices.forEach(function (d) {
      var m = /^(\d+): (.*)$/.exec(d) || [d, '', d];
      var k = kinds.filter(function (x) { return x.name === m[2]; })[0];
      if (!k) { k = { name: m[2], ids: [] }; kinds.push(k); }
      k.ids.push(m[1]);
    });
    item('GPUs', kinds.map(function (k) {
      return k.ids.length > 1 ? k.ids.length + ' \u00d7 ' + k.name + ' (' + k.ids[0] + '\u2013' + k.ids[k.ids.length - 1] + ')'
                              : (k.ids[0] !== '' ? k.ids[0] + ': ' : '') + k.name;
    }).join(', ') || 'none recorded');
    item('duration', fmtNs(s.duration_ns));
    item('kernels', fmtCount(s.kernels) + ' (' + fmtNs(s.kernel_time_ns) + ')');
    item('memcpy / memset', fmtCount(s.memcpys) + ' / ' + fmtCount(s.memsets));
    item('CUDA API calls', fmtCount(s.api_calls));
    item('NVTX ranges', fmtCount(s.nvtx_ranges));
    if (data.steps.length) {
      var ss = data.step_summary;
      item('steps', data.steps.length + (ss.steady ? ', median ' + fmtNs(ss.median_ns) : ''));
    }
    var ng = report.findingGroups.length;
    item('findings', ng + (ng < data.findings.length ? ' (' + data.findings.length + ' by stepscope analyze, grouped by rule and fix)' : ''));
  }

  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(1) + '%' : '0%'; }

  // A grouped finding's places: the costliest rows, the rest behind "N more".
  var PLACES_SHOWN = 3;
  function placesTable(f) {
    var box = el('div', null, 'places');
    function rows(list) {
      return list.map(function (x, i) {
        return [[f.places[f.members.indexOf(x)], 'place'],
                [x.cost_per_step_ns > 0 ? fmtNs(x.cost_per_step_ns) : '', 'num'], [fmtNs(x.cost_ns), 'num'],
                [x.cost_pct.toFixed(1) + '%', 'num'], [x.detail, 'pdetail', x.where]];
      });
    }
    var heads = ['place', 'per step', 'in all', '% of the step', 'what'];
    // Without steps there is no per-step cost: no empty column.
    var perStep = f.members.some(function (x) { return x.cost_per_step_ns > 0; });
    var cut = function (r) { return perStep ? r : r.slice(0, 1).concat(r.slice(2)); };
    heads = cut(heads);
    var rows0 = rows;
    rows = function (list) { return rows0(list).map(cut); };
    box.appendChild(stepscopeViews.table(ctx, heads, rows(f.members.slice(0, PLACES_SHOWN)), 'places'));
    var rest = f.members.slice(PLACES_SHOWN);
    if (rest.length) {
      var more = el('details', null, 'more');
      more.appendChild(el('summary', rest.length + ' more place' + (rest.length === 1 ? '' : 's') + ': ' +
        rest.map(function (x) { return f.places[f.members.indexOf(x)]; }).join(', ')));
      more.appendChild(stepscopeViews.table(ctx, heads, rows(rest), 'places'));
      box.appendChild(more);
    }
    return box;
  }

  // The findings of `stepscope analyze`, ranked by cost; every string as text.
  // Findings of one rule with the same fix are one item (groupFindings).
  function findings() {
    var a = data.analyzed;
    var note = document.getElementById('findings-note');
    if (a.device >= 0) {
      note.textContent = 'Analyzed ' + fmtNs(a.analyzed_ns) + ' on GPU ' + a.device +
        (a.steps ? ' over ' + a.steps + ' steady steps' : ' (no steady steps: the GPU span of the trace)') +
        ': busy ' + pct(a.busy_ns, a.analyzed_ns) + ', idle ' + pct(a.idle_ns, a.analyzed_ns) +
        (a.idle_ns ? ' (waiting for the host ' + fmtNs(a.host_wait_ns) + ', in a sync ' + fmtNs(a.sync_wait_ns) +
         ', kernel launch ' + fmtNs(a.kernel_wait_ns) + ', other ' + fmtNs(a.other_idle_ns) + ')' : '') +
        '. Same rules and numbers as stepscope analyze.';
    }
    var box = document.getElementById('findings');
    // analyze's MFU line (with --model, or stored roofline counters): as text.
    if (data.mfu) box.appendChild(el('p', data.mfu, 'note mfu'));
    if (!data.findings.length) {
      box.appendChild(el('p', data.findings_note || 'No finding: nothing costs a notable share of the time.', 'note'));
      return;
    }
    var list = el('ol', null, 'findings');
    report.findingGroups.forEach(function (f) {
      var li = el('li', null, 'finding');
      li.dataset.rule = f.rule;
      li.dataset.members = String(f.members.length);
      var head = el('div', null, 'fhead');
      head.appendChild(el('span', f.rule, 'rule'));
      head.appendChild(el('b', f.title, 'ftitle'));
      li.appendChild(head);
      var cost = el('div', null, 'cost');
      var bar = el('span', null, 'costbar');
      bar.style.width = Math.max(2, Math.min(100, f.cost_pct)) + '%';
      var track = el('span', null, 'costtrack');
      track.appendChild(bar);
      cost.appendChild(track);
      var n = f.members.length;
      if (f.evidence_only) {
        cost.appendChild(el('span', 'not priced (evidence only: no fix of its own to replay)'));
      } else cost.appendChild(el('span', (f.cost_per_step_ns > 0 ? fmtNs(f.cost_per_step_ns) + ' per step, ' : '') +
        fmtNs(f.cost_ns) + ' in all (' + f.cost_pct.toFixed(1) + '% of the step: what the fix saves, by replay' +
        (n > 1 ? (f.shared ? '; one fix for the ' + n + ' places, priced once' : '; the sum of the ' + n + ' places, each priced alone') : '') + ')'));
      // The what-if replay's step time with this fix applied.
      if (f.predicted_step_ns >= 0) {
        var ss = data.step_summary;
        cost.appendChild(el('span', 'predicted step time once fixed: ' + fmtNs(f.predicted_step_ns) +
          (ss.median_ns > 0 ? ' (now ' + fmtNs(ss.median_ns) + ')' : ''), 'predicted'));
      }
      li.appendChild(cost);
      li.appendChild(el('div', f.fix, 'fix'));
      // Where and the evidence: one line, opened below while the findings
      // still fit the first screen (fitFindings).
      var more = el('details', null, 'fdetail');
      var placeNames = f.places ? f.places.slice(0, 3).join(', ') + (n > 3 ? ', +' + (n - 3) + ' more' : '') : '';
      var sum = el('summary');
      sum.appendChild(el('span', [f.where ? 'where: ' + f.where : '', f.places ? n + ' places: ' + placeNames : '',
                                  f.detail ? 'what: ' + f.detail : ''].filter(Boolean).join(' \u00b7 '), 'oneline'));
      sum.appendChild(el('span', f.places ? 'where, the ' + n + ' places' : 'where and what', 'openlabel'));
      more.appendChild(sum);
      var dl = el('dl');
      function row(k, v, cls) {
        if (!v) return;
        dl.appendChild(el('dt', k));
        dl.appendChild(typeof v === 'string' ? el('dd', v, cls) : v);
      }
      row('where', f.where);
      row('what', f.detail);
      if (f.places) {
        var dd = el('dd');
        dd.appendChild(placesTable(f));
        row(n + ' places', dd);
      }
      if (!f.places && f.examples.length) {
        row('e.g.', f.examples.map(function (e) {
          return (e.step >= 0 ? 'step ' + e.step + ' ' : '') + 'at ' + fmtNs(e.start_ns) +
            (e.end_ns > e.start_ns ? ' (' + fmtNs(e.end_ns - e.start_ns) + ')' : '') +
            (e.nvtx ? ' in ' + e.nvtx : '');
        }).join('; '));
      }
      more.appendChild(dl);
      li.appendChild(more);
      list.appendChild(li);
    });
    box.appendChild(list);
  }
  // Opens the findings' details top-down while the whole list still ends
  // within the first screen: every finding stays visible without scrolling.
  function fitFindings() {
    var section = document.getElementById('findings-section');
    var fits = function () { return section.getBoundingClientRect().bottom + window.scrollY <= window.innerHeight; };
    var all = Array.from(document.querySelectorAll('#findings details.fdetail'));
    for (var i = 0; i < all.length; i++) {
      all[i].open = true;
      if (!fits()) { all[i].open = false; break; }
    }
  }


  // Per step: the breakdown's busy parts and its idle split by cause; an idle
  // remainder the gaps do not cover (before the first or after the last op of
  // the device) is drawn apart. -1 causes: no GPU activity, idle undivided.
  function stepParts(s) {
    var b = s.breakdown;
    var parts = { compute: b.compute_ns, communication: b.communication_ns, memory: b.memory_ns };
    if (s.idle_by_cause_ns[0] < 0) { parts.edge_idle = b.idle_ns; return parts; }
    var sum = 0;
    CAUSES.forEach(function (c, i) { parts[c[0]] = s.idle_by_cause_ns[i]; sum += s.idle_by_cause_ns[i]; });
    parts.edge_idle = Math.max(0, b.idle_ns - sum);
    return parts;
  }
  var STEP_SERIES = [['compute', 'compute'], ['communication', 'communication'], ['memory', 'memcpy/memset']]
    .concat(CAUSES).concat([['edge_idle', 'idle: other (outside gaps)']]);

  function steps() {
    var st = data.steps;
    var ss = data.step_summary;
    var cv = ss.mean_ns > 0 ? (100 * ss.stddev_ns / ss.mean_ns).toFixed(1) : '0';
    // The axis is the steady steps' scale: a warm-up step many times longer
    // is cut at the top and labeled with its duration instead of flattening them.
    var steadyMax = 0, clipped = [];
    st.forEach(function (s) { if (s.status === 'ok') steadyMax = Math.max(steadyMax, s.breakdown.span_ns); });
    var yMax = null;
    if (steadyMax > 0) {  // 1.3x the longest steady step, rounded up to a half decade
      var half = Math.pow(10, Math.floor(Math.log10(ms(steadyMax) * 1.3))) / 2;
      yMax = Math.ceil(ms(steadyMax) * 1.3 / half) * half;
    }
    st.forEach(function (s, i) { if (yMax !== null && ms(s.breakdown.span_ns) > yMax) clipped.push(i); });
    document.getElementById('steps-note').textContent = st.length
      ? st.length + ' steps (' + ss.steady + ' steady) found by ' + ss.method + ' \u2018' + short(ss.pattern, 60) +
        '\u2019; median ' + fmtNs(ss.median_ns) + ', CV ' + cv + '%. Each bar is the step\u2019s window on the GPU ' +
        'timeline (from the end of the previous step\u2019s GPU work to the end of its own), split by what the GPU ' +
        'did and, when idle, why (the gap causes of stepscope analyze); faded bars are warm-up or unfinished steps, ' +
        'left out of the statistics' + (clipped.length ? ', and cut at the top of the steady steps\u2019 scale' : '') +
        '. Click a bar for the step\u2019s top kernels. Same numbers as stepscope steps.'
      : 'No steps found: no \u2018step N\u2019 or \u2018ProfilerStep#N\u2019 NVTX ranges and no repeating kernel sequence.';
    var parts = st.map(stepParts);
    var used = STEP_SERIES.filter(function (c) { return parts.some(function (p) { return p[c[0]] > 0; }); });
    var series = used.map(function (c) {
      return { name: c[1], type: 'bar', stack: 'step', color: COLORS[c[0]], barMaxWidth: 48,
               data: st.map(function (s, i) {
                 var v = ms(parts[i][c[0]] || 0);
                 return s.status === 'ok' ? v : { value: v, itemStyle: { opacity: 0.4 } };
               }) };
    });
    chart('chart-steps', st.length, 'No training steps were found in this trace.', {
      grid: { left: 60, right: 20, top: 56, bottom: clipped.length ? 56 : 40 },
      legend: { top: 0 },
      tooltip: {
        trigger: 'axis',
        formatter: function (p) {
          var s = st[p[0].dataIndex];
          var span = s.breakdown.span_ns;
          var lines = [s.name + (s.status === 'ok' ? '' : ' (' + s.status + ')'),
                       'duration ' + fmtNs(span) + ', ' + fmtCount(s.gpu_ops) + ' GPU ops'];
          var pp = parts[p[0].dataIndex];
          STEP_SERIES.forEach(function (c) {
            if (pp[c[0]] > 0) lines.push(c[1] + ' ' + fmtNs(pp[c[0]]) + ' (' + pct(pp[c[0]], span) + ')');
          });
          if (s.top_kernels.length) lines.push('top kernel: ' + shortName(s.top_kernels[0].name));
          return tip(lines);
        }
      },
      // A step cut at the top says so, with its duration, under its bar.
      xAxis: { type: 'category', name: 'step', nameLocation: 'middle', nameGap: clipped.length ? 40 : 26,
               data: st.map(function (s, i) {
                 return String(s.number) + (clipped.indexOf(i) >= 0 ? '\n\u2191 ' + s.status + ' ' + fmtNs(s.breakdown.span_ns) : '');
               }), axisLabel: { interval: 0, hideOverlap: true } },
      yAxis: { type: 'value', name: 'ms', max: yMax === null ? undefined : yMax },
      series: series
    });
    var c = report.charts['chart-steps'].chart;
    var firstSteady = st.findIndex(function (s) { return s.status === 'ok'; });
    stepscopeViews.stepDetail(ctx, firstSteady >= 0 ? medianStepIndex() : 0);
    if (c) c.on('click', function (p) { stepscopeViews.stepDetail(ctx, p.dataIndex); });
  }
  // The steady step whose duration is nearest the median (the timeline's step).
  function medianStepIndex() {
    var st = data.steps;
    if (data.timeline.step >= 0) {
      var k = st.findIndex(function (s) { return s.number === data.timeline.step; });
      if (k >= 0) return k;
    }
    return 0;
  }

  function breakdown() {
    var b = data.breakdown;
    document.getElementById('breakdown-note').textContent =
      'Over ' + data.breakdown_window + ' (' + fmtNs(b.span_ns) + '): at each instant the first of compute, ' +
      'communication (NCCL), memcpy/memset that the GPU was doing, else idle, split by why (the steps\u2019 gap causes).';
    // The steady steps' parts summed (their breakdowns sum to data.breakdown);
    // without steady steps the undivided breakdown of the GPU span.
    var sums = {};
    var steady = data.steps.filter(function (s) { return s.status === 'ok'; });
    if (steady.length) {
      steady.forEach(function (s) {
        var p = stepParts(s);
        Object.keys(p).forEach(function (k) { sums[k] = (sums[k] || 0) + p[k]; });
      });
    } else {
      sums = { compute: b.compute_ns, communication: b.communication_ns, memory: b.memory_ns, edge_idle: b.idle_ns };
    }
    var items = STEP_SERIES.map(function (c) {
      return { name: steady.length || c[0] !== 'edge_idle' ? c[1] : 'idle', value: ms(sums[c[0]] || 0),
               itemStyle: { color: COLORS[c[0]] } };
    }).filter(function (x) { return x.value > 0; });
    var total = items.reduce(function (n, x) { return n + x.value; }, 0);
    var share = {};
    items.forEach(function (x) { share[x.name] = total > 0 ? 100 * x.value / total : 0; });
    // Shares in the legend, none on the ring: small slices never overlap.
    chart('chart-breakdown', items.length, 'No GPU activity in this trace.', {
      tooltip: { trigger: 'item', formatter: function (p) {
        return tip([p.name, fmtNs(p.value * 1e6) + ' (' + p.percent.toFixed(1) + '%)']);
      } },
      legend: { orient: 'vertical', right: 0, top: 'middle', itemGap: 6,
                formatter: function (n) { return n + '  ' + (share[n] || 0).toFixed(1) + '%'; } },
      series: [{ type: 'pie', radius: ['42%', '72%'], center: ['28%', '50%'], data: items, label: { show: false } }]
    });
  }

  function kernels() {
    var k = data.top_kernels.slice().reverse();  // largest on top
    chart('chart-kernels', k.length, 'No kernels in this trace.', {
      grid: { left: 330, right: 40, top: 10, bottom: 30 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, formatter: function (p) {
        var r = k[p[0].dataIndex];
        return tip([r.name, 'total ' + fmtNs(r.total_ns) + ' (' + r.percent.toFixed(1) + '% of kernel time)',
                    fmtCount(r.count) + ' launches, avg ' + fmtNs(r.avg_ns) + ', median ' + fmtNs(r.median_ns),
                    'min ' + fmtNs(r.min_ns) + ', max ' + fmtNs(r.max_ns)]);
      } },
      xAxis: { type: 'value', name: 'ms' },
      yAxis: { type: 'category', data: k.map(function (r) { return shortName(r.name); }),
               axisLabel: { width: 320, overflow: 'truncate' } },
      series: [{ type: 'bar', color: COLORS.compute, data: k.map(function (r) { return ms(r.total_ns); }) }]
    });
  }

  function lineSeries(list, scale) {
    return list.map(function (s) {
      return { name: s.name, type: 'line', showSymbol: false, step: 'end',
               data: s.t_ns.map(function (t, i) { return [ms(t), s.values[i] * scale]; }) };
    });
  }
  // Utilization and memory open on the analyzed steps (the focus window),
  // with the step boundaries drawn; the slider zooms out to the whole trace.
  function timeAxis() {
    return { type: 'value', name: 'ms since the trace start', nameLocation: 'middle', nameGap: 26,
             min: 0, max: Math.max(1e-6, ms(data.summary.duration_ns)),
             axisLabel: { formatter: function (v) { return String(Number(v.toPrecision(6))); } } };
  }
  function focusZoom() {
    var a = ms(data.focus_start_ns), b = ms(data.focus_end_ns), pad = (b - a) * 0.02;
    return [{ type: 'inside', filterMode: 'none', startValue: Math.max(0, a - pad), endValue: b + pad },
            { type: 'slider', filterMode: 'none', height: 18, bottom: 4, startValue: Math.max(0, a - pad), endValue: b + pad }];
  }
  // Dashed step boundaries; none past 200 steps (they would only be ink).
  function stepLines() {
    var st = data.steps;
    if (st.length > 200) return undefined;
    var show = st.length <= 16;
    var lines = st.map(function (s) {
      return { xAxis: ms(s.start_ns), name: 'step ' + s.number + (s.status === 'ok' ? '' : ' (' + s.status + ')') };
    });
    if (st.length) lines.push({ xAxis: ms(st[st.length - 1].end_ns), name: 'end' });
    return { silent: true, symbol: 'none', animation: false, lineStyle: { color: '#8a93a6', type: 'dashed', width: 1 },
             label: { show: show, position: 'insideEndTop', fontSize: 10, color: '#5b6476', formatter: '{b}' },
             data: lines };
  }
  function countPoints(list) { return list.reduce(function (n, s) { return n + s.t_ns.length; }, 0); }

  function utilization() {
    document.getElementById('util-note').textContent = data.utilization.length
      ? 'Share of each ' + fmtNs(data.utilization_bucket_ns) + ' bucket in which the GPU ran a kernel, memcpy or ' +
        'memset, per GPU, over the GPU work ' + (data.utilization_range
          ? 'launched in the steady steps (stepscope stats --report gpu_time_util --buckets 500 --time-range ' +
            data.utilization_range + ')' : 'of the trace (the gpu_time_util recipe of stepscope stats)') +
        (data.steps.length && data.steps.length <= 200 ? '. Dashed lines: step starts.' : '.')
      : '';
    var useries = lineSeries(data.utilization, 1);
    if (useries.length) useries[0].markLine = stepLines();
    chart('chart-utilization', countPoints(data.utilization), 'No kernels in this trace.', {
      grid: { left: 60, right: 20, top: 30, bottom: 62 },
      legend: { top: 0 },
      tooltip: { trigger: 'axis', formatter: function (p) {
        return tip(['t = ' + fmtNs(p[0].value[0] * 1e6)].concat(p.map(function (x) {
          return x.seriesName + ': ' + x.value[1].toFixed(1) + '%';
        })));
      } },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: '%', min: 0, max: 100 },
      dataZoom: focusZoom(),
      series: useries
    });
  }

  // `stepscope memory`: bytes in use per GPU over time, each GPU's peak
  // marked, and what was live at the peak.
  function memory() {
    var m = data.memory;
    var peaks = data.memory_peaks;
    var gib = m.some(function (s) { return s.peak >= Math.pow(1024, 3); });
    var scale = 1 / Math.pow(1024, gib ? 3 : 2);
    var unit = gib ? 'GiB' : 'MiB';
    var note = peaks.map(function (p) {
      return p.place + ' peak ' + fmtBytes(p.peak_bytes) + (p.capacity ? ' of ' + fmtBytes(p.capacity) : '') +
        ' at ' + fmtNs(p.peak_t_ns) + (p.step >= 0 ? ' in step ' + p.step : '') + (p.range ? ' (' + p.range + ')' : '');
    }).join('; ');
    if (data.memory_unknown_frees) note += ' (' + data.memory_unknown_frees + ' frees of memory allocated before the trace ignored)';
    if (m.length) note += '. Same numbers as stepscope memory. Opens on the steady steps (dashed lines: step starts); drag the slider to see the whole trace.';
    document.getElementById('memory-note').textContent = note;
    var series = lineSeries(m, scale);
    series.forEach(function (s) {  // bytes stay in use until the next event: hold the last value to the end
      var last = s.data[s.data.length - 1];
      if (last && last[0] < ms(data.summary.duration_ns)) s.data.push([ms(data.summary.duration_ns), last[1]]);
    });
    if (series.length) series[0].markLine = stepLines();
    series.forEach(function (s, i) {
      var p = peaks.filter(function (x) { return s.name === x.place + ' total'; })[0];
      if (!p) return;
      s.markPoint = { symbolSize: 40, label: { formatter: 'peak', fontSize: 10 },
                      data: [{ coord: [ms(p.peak_t_ns), p.peak_bytes * scale] }] };
    });
    chart('chart-memory', countPoints(m), 'No device memory allocations were recorded.', {
      grid: { left: 70, right: 30, top: 44, bottom: 62 },
      legend: { top: 0 },
      tooltip: { trigger: 'axis', formatter: function (p) {
        return tip(['t = ' + fmtNs(p[0].value[0] * 1e6)].concat(p.map(function (x) {
          return x.seriesName + ': ' + fmtBytes(x.value[1] / scale);
        })));
      } },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: unit, min: 0 },
      dataZoom: focusZoom(),
      series: series
    });
    var box = document.getElementById('memory-peaks');
    peaks.forEach(function (p) {
      if (!p.live.length) return;
      box.appendChild(el('h3', 'Live at the ' + p.place + ' peak (' + fmtBytes(p.peak_bytes) + '), by NVTX range and call'));
      var t = el('table', null, 'live');
      var head = el('tr');
      ['NVTX range', 'call', 'allocations', 'bytes', 'share of the peak'].forEach(function (h) { head.appendChild(el('th', h)); });
      t.appendChild(head);
      p.live.forEach(function (g) {
        var tr = el('tr');
        tr.appendChild(el('td', g.range));
        tr.appendChild(el('td', g.api));
        tr.appendChild(el('td', fmtCount(g.count), 'num'));
        tr.appendChild(el('td', fmtBytes(g.bytes), 'num'));
        tr.appendChild(el('td', g.share_pct.toFixed(1) + '%', 'num'));
        t.appendChild(tr);
      });
      box.appendChild(t);
    });
  }

  // 1e12 -> "1.00 T": SI prefixes for rates and counts that span decades.
  function fmtSi(v, digits) {
    var units = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
    var i = 0;
    while (Math.abs(v) >= 1000 && i < units.length - 1) { v /= 1000; i++; }
    return v.toFixed(digits === undefined ? 1 : digits) + ' ' + units[i];
  }
  function ceilingLabel(r) {
    if (r.key === 'dram_bw') return 'DRAM ' + (r.value / 1e12).toFixed(2) + ' TB/s';
    var name = r.key.replace(/_/g, ' ') + (/^fp/.test(r.key) ? ' (CUDA cores)' : '');
    return name + ' ' + (r.value / 1e12).toFixed(1) + ' TFLOP/s';
  }

  // The rows `stepscope roofline` stored in the trace, against the ceilings
  // stored with them: log-log, FLOP per DRAM byte on x, achieved FLOP/s on y,
  // one point per kernel (series 0), the roofs and ridge points from the data
  // block (report_roofline.cc), and a table of every row. No rows: no section
  // (html_report.cc leaves it out) and nothing here.
  function roofline() {
    var rf = data.roofline;
    if (!rf || !document.getElementById('roofline-section')) return;
    var pts = rf.kernels.filter(function (k) { return k.on_chart; });
    var off = rf.kernels.length - pts.length;
    document.getElementById('roofline-note').textContent =
      rf.kernels.length + ' kernel' + (rf.kernels.length === 1 ? '' : 's') +
      (rf.step >= 0 ? ' of step ' + rf.step : '') + ' profiled with hardware counters by stepscope roofline' +
      (rf.device ? ' on ' + rf.device : '') + (rf.measured_at ? '; ceilings measured ' + rf.measured_at : '') +
      '. x: FLOP per DRAM byte, y: achieved FLOP/s; the roofs are the DRAM bandwidth (slanted) and the compute ' +
      'ceilings of the precisions the kernels used (flat), diamonds their ridge points. The numbers are the rows ' +
      'stored in the trace (stepscope roofline --from TRACE shows them again).' +
      (off ? ' ' + off + ' kernel' + (off === 1 ? '' : 's') + ' without FLOPs or DRAM bytes cannot sit on a ' +
       'log-log chart: in the table only.' : '') +
      (rf.notes.length ? ' ' + rf.notes.join(' ') : '');
    var series = [{
      name: 'kernels', type: 'scatter', symbolSize: 13, color: COLORS.compute, z: 5,
      data: pts.map(function (k) { return [k.intensity, k.flops_per_s]; }),
      label: { show: true, position: 'right', formatter: function (p) { return '#' + pts[p.dataIndex].rank; } }
    }];
    var roofColors = ['#c01c28', '#e66100', '#613583', '#26a269', '#865e3c'];
    var nCompute = 0;
    rf.roofs.forEach(function (r) {
      series.push({ name: ceilingLabel(r), type: 'line', showSymbol: false,
                    color: r.memory ? '#1a5fb4' : roofColors[nCompute++ % roofColors.length], lineStyle: { width: 2 },
                    data: [[r.x0, r.y0], [r.x1, r.y1]] });
    });
    if (rf.ridges.length) {
      series.push({ name: 'ridge points', type: 'scatter', symbol: 'diamond', symbolSize: 10, color: '#5b6476',
                    data: rf.ridges.map(function (x) { return [x.intensity, x.flops_per_s]; }) });
    }
    chart('chart-roofline', pts.length, 'No kernel has both FLOPs and DRAM bytes: nothing to place on a log-log chart.', {
      grid: { left: 80, right: 40, top: 60, bottom: 50 },
      legend: { top: 0 },
      tooltip: { trigger: 'item', formatter: function (p) {
        if (p.seriesIndex === 0) {
          var k = pts[p.dataIndex];
          var n = Math.max(1, k.instances);
          return tip([k.name, '#' + k.rank + ', ' + k.launch + ', ' + k.instances + ' launch' + (n === 1 ? '' : 'es') + ' profiled',
                      'duration ' + fmtNs(k.duration_ns / n) + ' per launch',
                      'FLOPs ' + fmtSi(k.flops / n, 2) + ', DRAM bytes ' + fmtBytes(k.dram_bytes / n) + ' per launch',
                      'intensity ' + k.intensity.toFixed(2) + ' FLOP/B',
                      'achieved ' + fmtSi(k.flops_per_s) + 'FLOP/s' + (k.precision ? ' (' + k.precision + ')' : ''),
                      'bound by ' + (k.bound || '?') + (k.bound_kind ? ' (' + k.bound_kind + ')' : '') + ': ' +
                      k.pct_of_bound.toFixed(1) + '% of that ceiling']);
        }
        if (p.seriesName === 'ridge points') {
          var x = rf.ridges[p.dataIndex];
          return tip(['ridge point of ' + x.key, x.intensity.toFixed(2) + ' FLOP/B, ' + fmtSi(x.flops_per_s) + 'FLOP/s',
                      'left of it a kernel is DRAM-bound, right of it compute-bound']);
        }
        return tip([p.seriesName]);
      } },
      xAxis: { type: 'log', logBase: 10, min: rf.x_min, max: rf.x_max, name: 'FLOP per DRAM byte',
               nameLocation: 'middle', nameGap: 28, axisLabel: { formatter: function (v) { return String(v); } } },
      yAxis: { type: 'log', logBase: 10, min: rf.y_min, max: rf.y_max, name: 'FLOP/s',
               axisLabel: { formatter: function (v) { return fmtSi(v, 0); } } },
      series: series
    });
    var t = el('table', null, 'roofline');
    var head = el('tr');
    ['#', 'kernel', 'launch', 'launches', 'time per launch', 'GFLOP per launch', 'DRAM per launch', 'FLOP/B', 'TFLOP/s', 'DRAM GB/s',
     'precision', 'bound by', '% of bound', 'kind', 'on chart'].forEach(function (h) { head.appendChild(el('th', h)); });
    t.appendChild(head);
    rf.kernels.forEach(function (k) {
      var n = Math.max(1, k.instances);
      var tr = el('tr');
      var row = [[k.rank, 'num'], [k.name, 'kname'], [k.launch, 'launch'], [k.instances, 'num'], [fmtNs(k.duration_ns / n), 'num'],
       [(k.flops / n / 1e9).toFixed(3), 'num'], [fmtBytes(k.dram_bytes / n), 'num'], [k.intensity.toFixed(2), 'num'],
       [(k.flops_per_s / 1e12).toFixed(1), 'num'], [(k.dram_bytes_per_s / 1e9).toFixed(1), 'num'],
       [k.precision || '-'], [k.bound || '-'], [k.pct_of_bound.toFixed(1), 'num'], [k.bound_kind],
       [k.on_chart ? 'yes' : 'no (' + (k.flops > 0 ? '0 DRAM bytes' : '0 FLOPs') + ')']];
      row.forEach(function (c) {
        tr.appendChild(el('td', c[0], c[1]));
      });
      t.appendChild(tr);
    });
    document.getElementById('roofline-table').appendChild(t);
  }

  // The capture and import counters: the ones that say something went
  // missing (dropped, malformed, skipped, ...) shown, the rest behind a count.
  var WARN = /drop|malformed|bad|lost|skip|unknown|error|overflow|truncat|unmapped|starv/i;
  function stats() {
    var section = document.getElementById('stats-section');
    if (!data.stats.length) { section.hidden = true; return; }
    function statTable(rows) {
      var t = el('table');
      var head = el('tr');
      ['counter', 'value', 'meaning'].forEach(function (h) { head.appendChild(el('th', h)); });
      t.appendChild(head);
      rows.forEach(function (r) {
        var tr = el('tr');
        tr.appendChild(el('td', r.name));
        tr.appendChild(el('td', fmtCount(r.value), 'num'));
        tr.appendChild(el('td', r.doc));
        t.appendChild(tr);
      });
      return t;
    }
    var warn = data.stats.filter(function (r) { return r.value > 0 && WARN.test(r.name); });
    var rest = data.stats.filter(function (r) { return warn.indexOf(r) < 0; });
    var box = document.getElementById('stats');
    if (warn.length) box.appendChild(statTable(warn));
    if (rest.length) {
      var more = el('details', null, 'more');
      more.appendChild(el('summary', (warn.length ? rest.length + ' other counters' : rest.length + ' counters, none reporting a loss') +
        ' (what was read and written)'));
      more.appendChild(statTable(rest));
      box.appendChild(more);
    }
  }

  report.findingGroups = stepscopeViews.groupFindings(data.findings);
  var ctx = { data: data, report: report, el: el, fmtNs: fmtNs, fmtBytes: fmtBytes, fmtCount: fmtCount, tip: tip,
              chart: chart, pct: pct, ms: ms, COLORS: COLORS, STEP_SERIES: STEP_SERIES, stepParts: stepParts };
  summary();
  if (data.compare) stepscopeViews.compare(ctx);
  findings();
  steps();
  breakdown();
  kernels();
  utilization();
  stepscopeViews.kernelTable(ctx);
  stepscopeViews.timeline(ctx);
  memory();
  roofline();
  stats();
  fitFindings();
  window.addEventListener('resize', function () {
    Object.keys(report.charts).forEach(function (id) { if (report.charts[id].chart) report.charts[id].chart.resize(); });
  });
  // Print shows everything: collapsed parts open, then close again.
  var opened = [];
  window.addEventListener('beforeprint', function () {
    opened = Array.from(document.querySelectorAll('details:not([open])'));
    opened.forEach(function (d) { d.open = true; });
  });
  window.addEventListener('afterprint', function () { opened.forEach(function (d) { d.open = false; }); opened = []; });
  document.body.dataset.ready = '1';
})();
