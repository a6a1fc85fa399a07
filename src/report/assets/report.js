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

  var COLORS = { compute: '#2f6fdf', communication: '#9b59b6', memcpy: '#e6a23c', idle: '#c7ccd6' };

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
    if (data.steps.length) item('steps', data.steps.length);
  }

  function findings() {
    var box = document.getElementById('findings');
    if (!data.findings.length) {
      box.appendChild(el('p', data.findings_note || 'No finding: nothing costs a notable share of the time.', 'note'));
      return;
    }
    var t = el('table');
    var head = el('tr');
    ['cost', 'severity', 'finding', 'where', 'fix'].forEach(function (h) { head.appendChild(el('th', h)); });
    t.appendChild(head);
    data.findings.forEach(function (f) {
      var tr = el('tr');
      tr.appendChild(el('td', fmtNs(f.cost_ns), 'num'));
      var sev = el('td');
      sev.appendChild(el('span', f.severity, 'sev ' + f.severity.toLowerCase()));
      tr.appendChild(sev);
      var what = el('td');
      what.appendChild(el('b', f.title));
      if (f.what) what.appendChild(el('div', f.what));
      tr.appendChild(what);
      tr.appendChild(el('td', f.where));
      tr.appendChild(el('td', f.fix, 'fix'));
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  var CATS = [['compute', 'compute'], ['communication', 'communication'], ['memcpy', 'memcpy/memset'], ['idle', 'idle']];

  function steps() {
    var st = data.steps;
    document.getElementById('steps-note').textContent = st.length
      ? st.length + ' steps from ' + data.steps_source + '; each bar is the step\u2019s wall time split by what the GPU did.'
      : 'No steps found: ' + data.steps_source + '.';
    chart('chart-steps', st.length, 'No training steps were found in this trace.', {
      grid: { left: 60, right: 20, top: 36, bottom: 40 },
      legend: { top: 0 },
      tooltip: {
        trigger: 'axis',
        formatter: function (p) {
          var s = st[p[0].dataIndex];
          var lines = [s.name, 'duration ' + fmtNs(s.end_ns - s.start_ns)];
          CATS.forEach(function (c) { lines.push(c[1] + ' ' + fmtNs(s.breakdown[c[0] + '_ns'])); });
          return tip(lines);
        }
      },
      xAxis: { type: 'category', name: 'step', nameLocation: 'middle', nameGap: 26,
               data: st.map(function (s) { return String(s.number); }) },
      yAxis: { type: 'value', name: 'ms' },
      series: CATS.map(function (c) {
        return { name: c[1], type: 'bar', stack: 'step', color: COLORS[c[0]],
                 data: st.map(function (s) { return ms(s.breakdown[c[0] + '_ns']); }) };
      })
    });
  }

  function breakdown() {
    var b = data.breakdown;
    var total = b.compute_ns + b.communication_ns + b.memcpy_ns + b.idle_ns;
    document.getElementById('breakdown-note').textContent =
      'Over ' + data.breakdown_window + ' (' + fmtNs(total) + '): at each instant the first of compute, ' +
      'communication, memcpy/memset that the GPU was doing, else idle.';
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
                    fmtCount(r.count) + ' launches, avg ' + fmtNs(r.total_ns / r.count),
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
      return { name: 'GPU ' + s.device, type: 'line', showSymbol: false, step: 'end',
               data: s.t_ns.map(function (t, i) { return [ms(t), s.values[i] * scale]; }) };
    });
  }
  function countPoints(list) { return list.reduce(function (n, s) { return n + s.t_ns.length; }, 0); }

  function utilization() {
    document.getElementById('util-note').textContent = data.utilization.length
      ? 'Share of each ' + fmtNs(data.utilization_bucket_ns) + ' bucket with at least one kernel running, per GPU.'
      : '';
    chart('chart-utilization', countPoints(data.utilization), 'No kernels in this trace.', {
      grid: { left: 60, right: 20, top: 30, bottom: 40 },
      legend: { top: 0 },
      tooltip: { trigger: 'axis', formatter: function (p) {
        return tip(['t = ' + fmtNs(p[0].value[0] * 1e6)].concat(p.map(function (x) {
          return x.seriesName + ': ' + x.value[1].toFixed(1) + '%';
        })));
      } },
      xAxis: { type: 'value', name: 'ms since the trace start', nameLocation: 'middle', nameGap: 26, min: 0 },
      yAxis: { type: 'value', name: '%', min: 0, max: 100 },
      dataZoom: [{ type: 'inside' }],
      series: lineSeries(data.utilization, 1)
    });
  }

  function memory() {
    var m = data.memory;
    var gib = m.some(function (s) { return s.peak >= Math.pow(1024, 3); });
    var scale = 1 / Math.pow(1024, gib ? 3 : 2);
    var unit = gib ? 'GiB' : 'MiB';
    var note = m.map(function (s) {
      return 'GPU ' + s.device + ' peak ' + fmtBytes(s.peak) + ' at ' + fmtNs(s.peak_t_ns) +
        (s.capacity ? ' of ' + fmtBytes(s.capacity) : '');
    }).join('; ');
    if (data.memory_unknown_frees) note += ' (' + data.memory_unknown_frees + ' frees of memory allocated before the trace ignored)';
    document.getElementById('memory-note').textContent = note;
    var series = lineSeries(m, scale);
    series.forEach(function (s, i) {
      s.markPoint = { symbolSize: 36, label: { formatter: 'peak' },
                      data: [{ coord: [ms(m[i].peak_t_ns), m[i].peak * scale] }] };
    });
    chart('chart-memory', countPoints(m), 'No device memory allocations were recorded.', {
      grid: { left: 70, right: 20, top: 30, bottom: 40 },
      legend: { top: 0 },
      tooltip: { trigger: 'axis', formatter: function (p) {
        return tip(['t = ' + fmtNs(p[0].value[0] * 1e6)].concat(p.map(function (x) {
          return x.seriesName + ': ' + fmtBytes(x.value[1] / scale);
        })));
      } },
      xAxis: { type: 'value', name: 'ms since the trace start', nameLocation: 'middle', nameGap: 26, min: 0 },
      yAxis: { type: 'value', name: unit, min: 0 },
      dataZoom: [{ type: 'inside' }],
      series: series
    });
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
  stats();
  window.addEventListener('resize', function () {
    Object.keys(report.charts).forEach(function (id) { if (report.charts[id].chart) report.charts[id].chart.resize(); });
  });
  document.body.dataset.ready = '1';
})();
