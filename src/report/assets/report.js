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

  var COLORS = { compute: '#2f6fdf', communication: '#9b59b6', memory: '#e6a23c', idle: '#c7ccd6' };

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
    item('GPUs', s.devices.join(', ') || 'none recorded');
    item('duration', fmtNs(s.duration_ns));
    item('kernels', fmtCount(s.kernels) + ' (' + fmtNs(s.kernel_time_ns) + ')');
    item('memcpy / memset', fmtCount(s.memcpys) + ' / ' + fmtCount(s.memsets));
    item('CUDA API calls', fmtCount(s.api_calls));
    item('NVTX ranges', fmtCount(s.nvtx_ranges));
    if (data.steps.length) {
      var ss = data.step_summary;
      item('steps', data.steps.length + (ss.steady ? ', median ' + fmtNs(ss.median_ns) : ''));
    }
    item('findings', data.findings.length);
  }

  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(1) + '%' : '0%'; }

  // The findings of `stepscope analyze`, ranked by cost; every string as text.
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
    if (!data.findings.length) {
      box.appendChild(el('p', data.findings_note || 'No finding: nothing costs a notable share of the time.', 'note'));
      return;
    }
    var list = el('ol', null, 'findings');
    data.findings.forEach(function (f) {
      var li = el('li', null, 'finding');
      li.dataset.rule = f.rule;
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
      cost.appendChild(el('span', (f.cost_per_step_ns > 0 ? fmtNs(f.cost_per_step_ns) + ' per step, ' : '') +
        fmtNs(f.cost_ns) + ' in all (' + f.cost_pct.toFixed(1) + '% of the step: what the fix saves, by replay)'));
      li.appendChild(cost);
      var dl = el('dl');
      function row(k, v, cls) {
        if (!v) return;
        dl.appendChild(el('dt', k));
        dl.appendChild(el('dd', v, cls));
      }
      row('where', f.where);
      row('what', f.detail);
      row('fix', f.fix, 'fix');
      if (f.examples.length) {
        row('e.g.', f.examples.map(function (e) {
          return (e.step >= 0 ? 'step ' + e.step + ' ' : '') + 'at ' + fmtNs(e.start_ns) +
            (e.end_ns > e.start_ns ? ' (' + fmtNs(e.end_ns - e.start_ns) + ')' : '') +
            (e.nvtx ? ' in ' + e.nvtx : '');
        }).join('; '));
      }
      li.appendChild(dl);
      list.appendChild(li);
    });
    box.appendChild(list);
  }

  var CATS = [['compute', 'compute'], ['communication', 'communication'], ['memory', 'memcpy/memset'], ['idle', 'idle']];

  function steps() {
    var st = data.steps;
    var ss = data.step_summary;
    var cv = ss.mean_ns > 0 ? (100 * ss.stddev_ns / ss.mean_ns).toFixed(1) : '0';
    document.getElementById('steps-note').textContent = st.length
      ? st.length + ' steps (' + ss.steady + ' steady) found by ' + ss.method + ' \u2018' + short(ss.pattern, 60) +
        '\u2019; median ' + fmtNs(ss.median_ns) + ', CV ' + cv + '%. Each bar is the step\u2019s window on the GPU ' +
        'timeline (from the end of the previous step\u2019s GPU work to the end of its own), split by what the GPU ' +
        'did; faded bars are warm-up or unfinished steps, left out of the statistics. Same numbers as stepscope steps.'
      : 'No steps found: no \u2018step N\u2019 or \u2018ProfilerStep#N\u2019 NVTX ranges and no repeating kernel sequence.';
    chart('chart-steps', st.length, 'No training steps were found in this trace.', {
      grid: { left: 60, right: 20, top: 36, bottom: 40 },
      legend: { top: 0 },
      tooltip: {
        trigger: 'axis',
        formatter: function (p) {
          var s = st[p[0].dataIndex];
          var span = s.breakdown.span_ns;
          var lines = [s.name + (s.status === 'ok' ? '' : ' (' + s.status + ')'),
                       'duration ' + fmtNs(span) + ', ' + fmtCount(s.gpu_ops) + ' GPU ops'];
          CATS.forEach(function (c) {
            lines.push(c[1] + ' ' + fmtNs(s.breakdown[c[0] + '_ns']) + ' (' + pct(s.breakdown[c[0] + '_ns'], span) + ')');
          });
          if (s.top_kernels.length) lines.push('top kernel: ' + short(s.top_kernels[0].name, 80));
          return tip(lines);
        }
      },
      xAxis: { type: 'category', name: 'step', nameLocation: 'middle', nameGap: 26,
               data: st.map(function (s) { return String(s.number); }) },
      yAxis: { type: 'value', name: 'ms' },
      series: CATS.map(function (c) {
        return { name: c[1], type: 'bar', stack: 'step', color: COLORS[c[0]],
                 data: st.map(function (s) {
                   var v = ms(s.breakdown[c[0] + '_ns']);
                   return s.status === 'ok' ? v : { value: v, itemStyle: { opacity: 0.4 } };
                 }) };
      })
    });
  }

  function breakdown() {
    var b = data.breakdown;
    document.getElementById('breakdown-note').textContent =
      'Over ' + data.breakdown_window + ' (' + fmtNs(b.span_ns) + '): at each instant the first of compute, ' +
      'communication (NCCL), memcpy/memset that the GPU was doing, else idle.';
    var items = CATS.map(function (c) { return { name: c[1], value: ms(b[c[0] + '_ns']), itemStyle: { color: COLORS[c[0]] } }; })
      .filter(function (x) { return x.value > 0; });
    chart('chart-breakdown', items.length, 'No GPU activity in this trace.', {
      tooltip: { trigger: 'item', formatter: function (p) {
        return tip([p.name, fmtNs(p.value * 1e6) + ' (' + p.percent.toFixed(1) + '%)']);
      } },
      legend: { bottom: 0 },
      series: [{ type: 'pie', radius: ['38%', '68%'], center: ['50%', '45%'], data: items,
                 label: { formatter: '{b}\n{d}%' } }]
    });
  }

  function kernels() {
    var k = data.top_kernels.slice().reverse();  // largest on top
    chart('chart-kernels', k.length, 'No kernels in this trace.', {
      grid: { left: 250, right: 40, top: 10, bottom: 30 },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, formatter: function (p) {
        var r = k[p[0].dataIndex];
        return tip([r.name, 'total ' + fmtNs(r.total_ns) + ' (' + r.percent.toFixed(1) + '% of kernel time)',
                    fmtCount(r.count) + ' launches, avg ' + fmtNs(r.avg_ns) + ', median ' + fmtNs(r.median_ns),
                    'min ' + fmtNs(r.min_ns) + ', max ' + fmtNs(r.max_ns)]);
      } },
      xAxis: { type: 'value', name: 'ms' },
      yAxis: { type: 'category', data: k.map(function (r) { return short(r.name, 40); }),
               axisLabel: { width: 240, overflow: 'truncate' } },
      series: [{ type: 'bar', color: COLORS.compute, data: k.map(function (r) { return ms(r.total_ns); }) }]
    });
  }

  function lineSeries(list, scale) {
    return list.map(function (s) {
      return { name: s.name, type: 'line', showSymbol: false, step: 'end',
               data: s.t_ns.map(function (t, i) { return [ms(t), s.values[i] * scale]; }) };
    });
  }
  // Utilization and memory share one time axis: the whole trace.
  function timeAxis() {
    return { type: 'value', name: 'ms since the trace start', nameLocation: 'middle', nameGap: 26, min: 0,
             max: Math.max(1e-6, ms(data.summary.duration_ns)) };
  }
  function countPoints(list) { return list.reduce(function (n, s) { return n + s.t_ns.length; }, 0); }

  function utilization() {
    document.getElementById('util-note').textContent = data.utilization.length
      ? 'Share of each ' + fmtNs(data.utilization_bucket_ns) + ' bucket in which the GPU ran a kernel, memcpy or ' +
        'memset, per GPU (the gpu_time_util recipe of stepscope stats).'
      : '';
    chart('chart-utilization', countPoints(data.utilization), 'No kernels in this trace.', {
      grid: { left: 60, right: 20, top: 30, bottom: 40 },
      legend: { top: 0 },
      tooltip: { trigger: 'axis', formatter: function (p) {
        return tip(['t = ' + fmtNs(p[0].value[0] * 1e6)].concat(p.map(function (x) {
          return x.seriesName + ': ' + x.value[1].toFixed(1) + '%';
        })));
      } },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: '%', min: 0, max: 100 },
      dataZoom: [{ type: 'inside' }],
      series: lineSeries(data.utilization, 1)
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
    if (m.length) note += '. Same numbers as stepscope memory.';
    document.getElementById('memory-note').textContent = note;
    var series = lineSeries(m, scale);
    series.forEach(function (s) {  // bytes stay in use until the next event: hold the last value to the end
      var last = s.data[s.data.length - 1];
      if (last && last[0] < ms(data.summary.duration_ns)) s.data.push([ms(data.summary.duration_ns), last[1]]);
    });
    series.forEach(function (s, i) {
      var p = peaks.filter(function (x) { return s.name === x.place + ' total'; })[0];
      if (!p) return;
      s.markPoint = { symbolSize: 40, label: { formatter: 'peak', fontSize: 10 },
                      data: [{ coord: [ms(p.peak_t_ns), p.peak_bytes * scale] }] };
    });
    chart('chart-memory', countPoints(m), 'No device memory allocations were recorded.', {
      grid: { left: 70, right: 30, top: 44, bottom: 40 },
      legend: { top: 0 },
      tooltip: { trigger: 'axis', formatter: function (p) {
        return tip(['t = ' + fmtNs(p[0].value[0] * 1e6)].concat(p.map(function (x) {
          return x.seriesName + ': ' + fmtBytes(x.value[1] / scale);
        })));
      } },
      xAxis: timeAxis(),
      yAxis: { type: 'value', name: unit, min: 0 },
      dataZoom: [{ type: 'inside' }],
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

  function stats() {
    var section = document.getElementById('stats-section');
    if (!data.stats.length) { section.hidden = true; return; }
    var t = el('table');
    var head = el('tr');
    ['counter', 'value', 'meaning'].forEach(function (h) { head.appendChild(el('th', h)); });
    t.appendChild(head);
    data.stats.forEach(function (r) {
      var tr = el('tr');
      tr.appendChild(el('td', r.name));
      tr.appendChild(el('td', fmtCount(r.value), 'num'));
      tr.appendChild(el('td', r.doc));
      t.appendChild(tr);
    });
    document.getElementById('stats').appendChild(t);
  }

  summary();
  findings();
  steps();
  breakdown();
  kernels();
  utilization();
  memory();
  roofline();
  stats();
  window.addEventListener('resize', function () {
    Object.keys(report.charts).forEach(function (id) { if (report.charts[id].chart) report.charts[id].chart.resize(); });
  });
  document.body.dataset.ready = '1';
})();
