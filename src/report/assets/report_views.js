// The report's interactive views, loaded before report.js in the same script
// block: short kernel names, the per-step detail, the sortable and filterable
// kernel table, the timeline of the median step and the before/after
// comparison. Same contract as report.js: strings from the trace reach the
// DOM only through textContent and the title property (el() of the context),
// or canvas text; nothing here computes a number the CLI does not print.
var stepscopeViews = (function () {
  'use strict';

  // Splits `s` at top level: the text outside <...>, (...) and {...}, and the
  // template arguments of the last top-level <...>.
  function topLevel(s) {
    var out = '', tmpl = '', depth = 0, open = '';
    for (var i = 0; i < s.length; i++) {
      var ch = s[i];
      if (ch === '<' || ch === '(' || ch === '{') {
        if (depth === 0) { open = ch; if (ch === '<') tmpl = ''; }
        else if (open === '<') tmpl += ch;
        depth++;
      } else if ((ch === '>' || ch === ')' || ch === '}') && depth > 0) {
        depth--;
        if (depth > 0 && open === '<') tmpl += ch;
        if (depth === 0 && open === '<') out += '<\u2026>';
      } else if (depth === 0) {
        out += ch;
      } else if (open === '<') {
        tmpl += ch;
      }
    }
    return { out: out, tmpl: tmpl };
  }

  // What a generic kernel was instantiated for, most telling first: the
  // PyTorch op (direct_copy_kernel_cuda -> direct_copy), a functor, an epilogue.
  var WHAT = [/\b(\w+?)_kernel_cuda\b/, /\b(\w+(?:_functor|Functor))\b/, /\b(\w+Epilogue)\b/,
              /\b((?!ReduceOp\b)\w+Op)\b/];

  // "void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4,
  // at::native::FillFunctor<float>, ...>(int, ...)" ->
  // "vectorized_elementwise_kernel<…> · FillFunctor": no return type, scope,
  // argument list or template arguments, but the functor or op a generic
  // kernel was instantiated for, when its template arguments name one.
  // Names in brackets ("[CUDA memcpy HtoD]") stay as they are.
  function shortName(name) {
    if (!name || name[0] === '[') return name;
    var s = name.replace(/\(anonymous namespace\)::/g, '');
    var t = topLevel(s);
    var words = t.out.trim().split(/\s+/);
    var base = words[words.length - 1] || s;
    if (base === '<\u2026>' && words.length > 1) base = words[words.length - 2] + base;
    var parts = base.split('::');
    var shortBase = parts[parts.length - 1] || base;
    if (/^operator/.test(shortBase) && parts.length > 1) shortBase = parts[parts.length - 2] + '::' + shortBase;
    var what = '';
    for (var k = 0; k < WHAT.length && !what; k++) {
      var m = t.tmpl.match(WHAT[k]);
      if (m && shortBase.indexOf(m[1]) < 0) what = m[1];
    }
    var r = shortBase + (what ? ' \u00b7 ' + what : '');
    return r.length > 64 ? r.slice(0, 63) + '\u2026' : r;
  }

  // A table from rows of cells; a cell is text or [text, class, title].
  function table(ctx, headers, rows, cls) {
    var t = ctx.el('table', null, cls);
    var head = ctx.el('tr');
    headers.forEach(function (h) { head.appendChild(ctx.el('th', h)); });
    t.appendChild(head);
    rows.forEach(function (r) {
      var tr = ctx.el('tr');
      r.forEach(function (c) {
        var td = Array.isArray(c) ? ctx.el('td', c[0], c[1]) : ctx.el('td', c);
        if (Array.isArray(c) && c[2]) td.title = c[2];
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    return t;
  }

  // Findings of one rule with the same fix (host_wait per aten op,
  // launch_bound per range) shown as one: the report groups what `analyze`
  // lists apart, it changes no finding. The group's title is the members'
  // common words with the part that differs replaced by "N places"; its
  // places are a table. Its cost is the sum of the members' costs, each
  // priced alone by replay (their waits are disjoint), except when every
  // member carries the same cost and predicted step: then they are one fix
  // priced once (launch_bound's stretches), and the sum would count it N times.
  function groupFindings(list) {
    var groups = [], byKey = {};
    list.forEach(function (f, i) {
      var key = f.rule + '\u0000' + f.fix;
      if (!byKey[key]) { byKey[key] = { key: key, members: [] }; groups.push(byKey[key]); }
      byKey[key].members.push(f);
    });
    var out = groups.map(function (g) {
      var m = g.members;
      if (m.length === 1) return Object.assign({ members: m, places: null, shared: false }, m[0]);
      var shared = m.every(function (x) { return x.cost_ns === m[0].cost_ns && x.predicted_step_ns === m[0].predicted_step_ns; });
      var sum = function (k) { return m.reduce(function (n, x) { return n + x[k]; }, 0); };
      var split = splitTitles(m.map(function (x) { return x.title; }));
      var sameWhere = m.every(function (x) { return x.where === m[0].where; });
      return {
        rule: m[0].rule, fix: m[0].fix, members: m, shared: shared,
        title: split ? split.prefix + m.length + ' places' + split.suffix : m[0].title + ' (and ' + (m.length - 1) + ' more like it)',
        places: m.map(function (x, i) { return split ? split.parts[i] : x.title; }),
        where: sameWhere ? m[0].where : '',
        detail: '',
        cost_ns: shared ? m[0].cost_ns : sum('cost_ns'),
        cost_per_step_ns: shared ? m[0].cost_per_step_ns : sum('cost_per_step_ns'),
        cost_pct: shared ? m[0].cost_pct : sum('cost_pct'),
        count: sum('count'),
        predicted_step_ns: shared ? m[0].predicted_step_ns : -1,
        evidence_only: m.every(function (x) { return x.evidence_only; }),
        examples: m[0].examples
      };
    });
    // In analyze's order (by cost, causes before their symptoms): a group
    // stands where its first, costliest member stood.
    return out;
  }

  // The words the titles share before and after the part that differs:
  // "GPU idle waiting for the host in `aten::mm`" -> prefix "GPU idle waiting
  // for the host in ", parts ["`aten::mm`", ...], suffix "". Null when they
  // share nothing.
  function splitTitles(titles) {
    var a = titles[0];
    var p = a.length, s = a.length;
    titles.forEach(function (t) {
      var i = 0;
      while (i < p && i < t.length && t[i] === a[i]) i++;
      p = i;
      var j = 0;
      while (j < s && j < t.length && t[t.length - 1 - j] === a[a.length - 1 - j]) j++;
      s = j;
    });
    // Whole words: back to the last space of the prefix, on to the first of the suffix.
    var prefix = a.slice(0, p);
    prefix = prefix.slice(0, prefix.lastIndexOf(' ') + 1);
    var suffix = a.slice(a.length - s);
    var sp = suffix.indexOf(' ');
    suffix = sp >= 0 ? suffix.slice(sp) : '';
    if (!prefix && !suffix) return null;
    var parts = titles.map(function (t) { return t.slice(prefix.length, t.length - suffix.length); });
    // Punctuation every part ends with belongs to the suffix ("`aten::mm`:").
    while (parts.every(function (x) { return x.length > 1 && /[:;,.]/.test(x[x.length - 1]) && x[x.length - 1] === parts[0][parts[0].length - 1]; })) {
      suffix = parts[0][parts[0].length - 1] + suffix;
      parts = parts.map(function (x) { return x.slice(0, -1); });
    }
    return { prefix: prefix, suffix: suffix, parts: parts.map(function (x) { return x.replace(/^`(.*)`$/, '$1'); }) };
  }

  // The step at index i of data.steps: its split and top kernels.
  function stepDetail(ctx, i) {
    var box = document.getElementById('step-detail');
    var s = ctx.data.steps[i];
    box.textContent = '';
    if (!s) return;
    box.dataset.step = String(s.number);
    var span = s.breakdown.span_ns;
    box.appendChild(ctx.el('h3', s.name + (s.status === 'ok' ? '' : ' (' + s.status + ')') + ': ' +
      ctx.fmtNs(span) + ', ' + ctx.fmtCount(s.gpu_ops) + ' GPU ops'));
    var p = ctx.stepParts(s);
    var split = ctx.el('div', null, 'split');
    ctx.STEP_SERIES.forEach(function (c) {
      if (!(p[c[0]] > 0)) return;
      var item = ctx.el('span', null, 'splititem');
      var dot = ctx.el('span', null, 'dot');
      dot.style.background = ctx.COLORS[c[0]];
      item.appendChild(dot);
      item.appendChild(ctx.el('span', c[1] + ' ' + ctx.fmtNs(p[c[0]]) + ' (' + ctx.pct(p[c[0]], span) + ')'));
      split.appendChild(item);
    });
    box.appendChild(split);
    if (!s.top_kernels.length) return;
    box.appendChild(table(ctx, ['top kernels of this step', 'time', 'share of the step', 'launches'],
      s.top_kernels.map(function (k) {
        return [[shortName(k.name), 'kname', k.name], [ctx.fmtNs(k.total_ns), 'num'], [ctx.pct(k.total_ns, span), 'num'],
                [ctx.fmtCount(k.count), 'num']];
      }), 'steptop'));
  }

  var KCOLS = [
    ['kernel', 'name', false], ['total', 'total_ns', true], ['% of kernel time', 'percent', true],
    ['launches', 'count', true], ['avg', 'avg_ns', true], ['median', 'median_ns', true],
    ['min', 'min_ns', true], ['max', 'max_ns', true]];
  var KMAX_ROWS = 300;

  // Every kernel name of cuda_gpu_kern_sum: filter by a substring of the full
  // name, sort by any column (click its header twice to reverse).
  function kernelTable(ctx) {
    var rows = ctx.data.kernels;
    var box = document.getElementById('kernel-table');
    var note = document.getElementById('kernel-table-note');
    if (!rows.length) { box.appendChild(ctx.el('p', 'No kernels in this trace.', 'note')); return; }
    var state = { key: 'total_ns', desc: true, filter: '' };
    var input = ctx.el('input', null, 'filter');
    input.type = 'search';
    input.placeholder = 'filter kernels by name';
    input.id = 'kernel-filter';
    box.appendChild(input);
    var holder = ctx.el('div', null, 'tablebox');
    box.appendChild(holder);
    function draw() {
      var f = state.filter.toLowerCase();
      var shown = rows.filter(function (r) { return !f || r.name.toLowerCase().indexOf(f) >= 0; });
      shown.sort(function (a, b) {
        var x = a[state.key], y = b[state.key];
        var c = typeof x === 'string' ? x.localeCompare(y) : x - y;
        return state.desc ? -c : c;
      });
      note.textContent = 'Every kernel by name (the cuda_gpu_kern_sum recipe of stepscope stats, over the whole ' +
        'trace): ' + shown.length + ' of ' + rows.length + ' shown' + (shown.length > KMAX_ROWS ? ' (first ' + KMAX_ROWS + ')' : '') +
        '. Click a column to sort; hover a name for the full one.';
      var t = table(ctx, [], shown.slice(0, KMAX_ROWS).map(function (r) {
        return [[shortName(r.name), 'kname', r.name], [ctx.fmtNs(r.total_ns), 'num'], [r.percent.toFixed(2) + '%', 'num'],
                [ctx.fmtCount(r.count), 'num'], [ctx.fmtNs(r.avg_ns), 'num'], [ctx.fmtNs(r.median_ns), 'num'],
                [ctx.fmtNs(r.min_ns), 'num'], [ctx.fmtNs(r.max_ns), 'num']];
      }), 'kernels');
      var head = t.firstChild;
      KCOLS.forEach(function (c) {
        var th = ctx.el('th', c[0] + (state.key === c[1] ? (state.desc ? ' \u25bc' : ' \u25b2') : ''), 'sortable');
        th.dataset.key = c[1];
        th.addEventListener('click', function () {
          state.desc = state.key === c[1] ? !state.desc : c[2];
          state.key = c[1];
          draw();
        });
        head.appendChild(th);
      });
      holder.textContent = '';
      holder.appendChild(t);
    }
    input.addEventListener('input', function () { state.filter = input.value; draw(); });
    draw();
  }

  var LANE_H = 26;
  var CAT_COLOR = { compute: '#2f6fdf', communication: '#9b59b6', memory: '#e6a23c', nvtx: '#26a269',
                    api: '#8a93a6', sync: '#e05d5d', gpu_annotation: '#3d9970', finding: '#c01c28' };
  // The findings lane (report_timeline.cc): each finding's own intervals in
  // this step, colored by what they are.
  var FINDING_COLOR = { data_loading: '#c01c28', host_sync: '#e69100', sync_memcpy: '#e69100',
                        data_dependent_sync: '#e69100', pageable_memcpy: '#e69100', collective_wait: '#7b3fa0',
                        host_wait: '#e07070', launch_bound: '#8a6d3b', host_bound: '#8a93a6' };

  // The median step as lanes of recorded events (report_timeline.cc): GPU
  // streams, then per launching thread its NVTX ranges (nested by depth)
  // and CUDA API calls (blocking ones red). Wheel/drag zooms, hover names.
  function timeline(ctx) {
    var tl = ctx.data.timeline;
    var box = document.getElementById('chart-timeline');
    var note = document.getElementById('timeline-note');
    if (!tl.events.length) {
      ctx.chart('chart-timeline', 0, 'No step to show: no steps and no GPU work were found in this trace.', {});
      return;
    }
    var whole = tl.step < 0;  // no steps: the GPU span of the trace
    if (whole) document.querySelector('#timeline-section h2').textContent = 'Timeline of the GPU work (no steps found)';
    var marks = tl.lanes.some(function (l) { return l.kind === 'finding'; });
    note.textContent = (whole ? 'No steps were found: the trace from its first GPU op to its last, ' +
      ctx.fmtNs(tl.end_ns - tl.start_ns) + '. '
      : 'Step ' + tl.step + ' (the steady step nearest the median), ' + ctx.fmtNs(tl.end_ns - tl.start_ns) +
      ' from its first host call to its last GPU op; the shaded band is its window on the GPU. ') +
      (marks ? 'Top lane: where stepscope analyze\u2019s findings fall in this ' + (whole ? 'window' : 'step') + ' (data loading, syncs, collective ' +
               'waits, host waits; hover for the rule). ' : '') + tl.events.length +
      ' events' + (tl.dropped ? ' (' + tl.dropped + ' shortest left out)' : '') + ' as recorded: GPU ops per stream ' +
      '(blue compute, purple NCCL, orange memcpy/memset), GPU-side annotations of a stream (teal), NVTX ranges (green) ' +
      'and CUDA API calls (grey; red: blocking) of the threads that launched them. Scroll to zoom, drag to pan, hover for names.' +
      counterNote(ctx, tl.counters || []);
    var depth = {};
    tl.events.forEach(function (e) { depth[e[0]] = Math.max(depth[e[0]] || 0, e[4]); });
    box.style.height = (tl.lanes.length * LANE_H + 110) + 'px';
    var cats = Object.keys(CAT_COLOR);
    var t0 = tl.start_ns;
    var rows = tl.events.map(function (e) {
      return [e[0], ctx.ms(e[1] - t0), ctx.ms(e[2] - t0), e[3], e[4], cats.indexOf(e[5]), e[6] || ''];
    });
    function render(params, api) {
      var lane = api.value(0);
      var a = api.coord([api.value(1), lane]), b = api.coord([api.value(2), lane]);
      var band = api.size([0, 1])[1] * 0.8;
      var levels = (depth[lane] || 0) + 1;
      var h = band / levels;
      var y = a[1] - band / 2 + api.value(4) * h;
      var rect = echarts.graphic.clipRectByRect(
        { x: a[0], y: y, width: Math.max(1, b[0] - a[0]), height: Math.max(2, h - 1) },
        { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height });
      if (!rect) return null;
      var cat = cats[api.value(5)];
      var rule = rows[params.dataIndex][6];
      var fill = cat === 'finding' ? FINDING_COLOR[rule] || CAT_COLOR.finding : CAT_COLOR[cat] || '#999';
      if (cat !== 'finding' || rect.width < 60) return { type: 'rect', shape: rect, style: { fill: fill } };
      // A finding wide enough for its name carries it.
      return { type: 'group', children: [
        { type: 'rect', shape: rect, style: { fill: fill } },
        { type: 'text', style: { text: tl.names[rows[params.dataIndex][3]], x: rect.x + 3, y: rect.y + rect.height / 2,
                                 verticalAlign: 'middle', fill: '#fff', fontSize: 11, width: rect.width - 6, overflow: 'truncate' } }] };
    }
    var counters = tl.counters || [];
    var crows = counters.map(function (c, i) { return [c.lane, 0, ctx.ms(tl.end_ns - t0), i]; });
    // A GPU metrics lane: its points as a filled step function, scaled to the
    // lane's height (100% for %, the largest point for B/s), clipped to the grid.
    function renderCounter(params, api) {
      var c = counters[api.value(3)];
      var cs = params.coordSys;
      var mid = api.coord([0, c.lane])[1];
      var band = api.size([0, 1])[1] * 0.8;
      var base = mid + band / 2;
      function X(ns) { return Math.min(cs.x + cs.width, Math.max(cs.x, api.coord([ctx.ms(ns - t0), c.lane])[0])); }
      function Y(v) { return base - band * Math.max(0, Math.min(1, v / (c.max || 1))); }
      var pts = [[X(c.t_ns[0]), base]];
      c.t_ns.forEach(function (t, i) {
        var y = Y(c.values[i]);
        pts.push([X(t), y], [X(i + 1 < c.t_ns.length ? c.t_ns[i + 1] : c.end_ns), y]);
      });
      pts.push([pts[pts.length - 1][0], base]);
      var color = COUNTER_COLOR[c.metric] || '#5b6476';
      return { type: 'polygon', shape: { points: pts }, style: { fill: color, stroke: color, lineWidth: 1, opacity: 0.55 } };
    }
    ctx.report.timelineCounters = counters.reduce(function (n, c) { return n + c.t_ns.length; }, 0);
    ctx.chart('chart-timeline', rows.length, '', {
      grid: { left: 190, right: 20, top: 10, bottom: 70 },
      tooltip: { trigger: 'item', formatter: function (p) {
        if (p.seriesIndex === 1) return ctx.tip(counterTip(ctx, tl, counters[p.dataIndex]));
        var r = rows[p.dataIndex];
        return ctx.tip([tl.names[r[3]], tl.lanes[r[0]].name + (r[6] ? ' (' + r[6] + ')' : ''), 'at ' + ctx.fmtNs(tl.events[p.dataIndex][1]) +
          ' for ' + ctx.fmtNs(tl.events[p.dataIndex][2] - tl.events[p.dataIndex][1])]);
      } },
      xAxis: { type: 'value', name: whole ? 'ms since the first GPU op' : 'ms since the step\u2019s first host call', nameLocation: 'middle', nameGap: 26,
               min: 0, max: ctx.ms(tl.end_ns - t0), axisLabel: { formatter: function (v) { return String(Number(v.toPrecision(4))); } } },
      yAxis: { type: 'category', inverse: true, data: tl.lanes.map(function (l) { return l.name; }),
               axisLabel: { width: 180, overflow: 'truncate' } },
      dataZoom: [{ type: 'inside', filterMode: 'weakFilter' },
                 { type: 'slider', filterMode: 'weakFilter', height: 18, bottom: 6 }],
      series: [{ type: 'custom', renderItem: render, encode: { x: [1, 2], y: 0 }, data: rows, progressive: 0, progressiveThreshold: 1e9,
                 markArea: { silent: true, itemStyle: { color: 'rgba(47,111,223,0.06)' },
                             data: [[{ xAxis: ctx.ms(tl.gpu_start_ns - t0) }, { xAxis: ctx.ms(tl.gpu_end_ns - t0) }]] } },
               { type: 'custom', renderItem: renderCounter, encode: { x: [1, 2], y: 0 }, data: crows, progressive: 0,
                 progressiveThreshold: 1e9 }]
    });
  }

  // The GPU metrics lanes (report_gpu_metrics.cc): what they draw and how
  // they were thinned.
  var COUNTER_COLOR = { tensor_active: '#2f6fdf', sm_active: '#26a269', 'dram_read_bw+dram_write_bw': '#e6a23c' };
  function fmtMetric(v, unit) {
    if (unit === '%') return v.toFixed(1) + '%';
    var p = ['', 'k', 'M', 'G', 'T', 'P'], i = 0;
    while (Math.abs(v) >= 1000 && i < p.length - 1) { v /= 1000; i++; }
    return v.toFixed(i ? 2 : 0) + ' ' + p[i] + unit;
  }
  function counterNote(ctx, counters) {
    if (!counters.length) return '';
    var thinned = counters.filter(function (c) { return c.bucket_ns > 0; });
    return ' GPU metrics lanes (CUPTI PM sampling, profile --gpu-metrics): tensor_active and sm_active in % of the ' +
      'lane\u2019s height, DRAM read+write in bytes/s up to the lane\u2019s largest value; each sample held over its ' +
      'interval' + (thinned.length ? ' (past ' + Math.max.apply(null, thinned.map(function (c) { return c.t_ns.length; })) +
      ' samples, time-weighted means of ' + ctx.fmtNs(thinned[0].bucket_ns) + ' buckets)' : '') + '.';
  }
  function counterTip(ctx, tl, c) {
    return [tl.lanes[c.lane].name, 'largest ' + fmtMetric(c.max === 100 && c.unit === '%' ? Math.max.apply(null, c.values) : c.max, c.unit) +
            ' in the shown window', c.samples + ' samples' + (c.bucket_ns ? ', drawn as ' + c.t_ns.length +
            ' time-weighted means of ' + ctx.fmtNs(c.bucket_ns) : '')];
  }

  // `report BEFORE AFTER`: stepscope diff's tables and the findings of both.
  function compare(ctx) {
    var c = ctx.data.compare;
    var box = document.getElementById('compare');
    document.getElementById('compare-note').textContent = 'Before: ' + c.before_path + '. After: this report (' +
      ctx.data.summary.trace_path + '). ' + c.basis + ' ' + ctx.fmtNs(c.before_ns) + ' \u2192 ' + ctx.fmtNs(c.after_ns) +
      (c.speedup > 0 ? ': ' + c.speedup.toFixed(2) + '\u00d7 ' + (c.speedup >= 1 ? 'faster' : 'slower') : '') +
      '. Same tables as stepscope diff BEFORE AFTER.';
    var head = ctx.el('div', null, 'speedup');
    head.appendChild(ctx.el('span', c.speedup > 0 ? c.speedup.toFixed(2) + '\u00d7' : '?', 'big'));
    head.appendChild(ctx.el('span', c.basis + ': ' + ctx.fmtNs(c.before_ns) + ' before, ' + ctx.fmtNs(c.after_ns) + ' after'));
    box.appendChild(head);
    var titles = { summary: 'Summary', kernels: 'Kernels that changed (GPU time per step)',
                   nvtx: 'NVTX ranges that changed (average duration)', top5: 'Top 5 kernels after, and their rank before' };
    c.tables.forEach(function (t) {
      if (!t.rows.length) return;
      box.appendChild(ctx.el('h3', titles[t.name] || t.name));
      var cols = t.columns;
      var statusCol = cols.indexOf('status');
      var changed = t.rows.filter(function (r) { return statusCol < 0 || r[statusCol] !== 'same'; });
      var same = statusCol < 0 ? [] : t.rows.filter(function (r) { return r[statusCol] === 'same'; });
      var heads = cols.map(function (n, i) { return compareHead(t.name, n, (t.titles || [])[i]); });
      // Changed rows first (up to 15); the unchanged ones behind a count.
      if (changed.length) {
        box.appendChild(table(ctx, heads, changed.slice(0, 15).map(function (r) { return compareRow(ctx, t, r); }),
                              'compare t-' + t.name));
      }
      var rest = same.concat(changed.slice(15));
      if (rest.length) {
        var more = ctx.el('details', null, 'more');
        more.appendChild(ctx.el('summary', (changed.length > 15 ? (changed.length - 15) + ' more changed and ' : '') +
          same.length + ' unchanged (\u2018same\u2019: within the diff\u2019s threshold)'));
        more.appendChild(table(ctx, heads, rest.map(function (r) { return compareRow(ctx, t, r); }), 'compare t-' + t.name));
        box.appendChild(more);
      }
    });
    var before = groupFindings(c.before_findings), after = groupFindings(ctx.data.findings);
    var rules = {}, names = [];
    function add(list, side) {
      list.forEach(function (f) {
        var k = f.rule + '\u0000' + f.fix;
        if (!rules[k]) { rules[k] = {}; names.push(k); }
        rules[k][side] = f;
      });
    }
    add(before, 'before');
    add(after, 'after');
    if (!names.length) return;
    box.appendChild(ctx.el('h3', 'Findings before and after (cost per step)'));
    function cost(f) {
      if (f.evidence_only) return 'not priced';
      return (f.cost_per_step_ns > 0 ? ctx.fmtNs(f.cost_per_step_ns) : ctx.fmtNs(f.cost_ns)) + ' (' + f.cost_pct.toFixed(1) + '%)';
    }
    box.appendChild(table(ctx, ['rule', 'before', 'after', 'title (after, else before)'], names.map(function (n) {
      var r = rules[n];
      return [(r.after || r.before).rule, [r.before ? cost(r.before) : 'not found', 'num'], [r.after ? cost(r.after) : 'gone', 'num'],
              (r.after || r.before).title];
    }), 'compare findings'));
  }

  // Human column headers of stepscope diff's tables (the CLI's titles carry
  // "(ns)": the page shows times with their unit instead).
  var HEADS = { status: 'status', delta_ns: 'change', change_pct: 'change (%)', name: 'kernel', range: 'NVTX range',
                before_per_step_ns: 'before, per step', after_per_step_ns: 'after, per step',
                before_avg_ns: 'before, average', after_avg_ns: 'after, average', rank: 'rank',
                rank_before: 'rank before', share_pct: 'of kernel time (%)', metric: 'metric', before: 'before',
                after: 'after', change: 'change', delta: 'change', unit: 'unit' };
  function compareHead(table, name, title) {
    if (name === 'before_count_per_step') return table === 'nvtx' ? 'calls per step before' : 'launches per step before';
    if (name === 'after_count_per_step') return table === 'nvtx' ? 'calls per step after' : 'launches per step after';
    if (HEADS[name]) return HEADS[name];
    return (title || name).replace(/\s*\(ns\)/, '').replace(/_/g, ' ');
  }
  // One row of a diff table: times (columns named *_ns, and the summary's rows
  // whose unit is ns) with their unit, the kernel's short name, numbers right.
  function compareRow(ctx, t, r) {
    var cols = t.columns;
    var unitCol = cols.indexOf('unit');
    var timeRow = t.name === 'summary' && unitCol >= 0 && r[unitCol] === 'ns';
    return r.map(function (cell, i) {
      var n = cols[i];
      if (n === 'name') return [shortName(cell), 'kname', cell];
      if (n === 'unit' && timeRow) return 'time';
      var num = cell !== '' && !isNaN(Number(cell));
      var isTime = num && (/_ns$/.test(n) || (timeRow && (n === 'before' || n === 'after' || n === 'delta')));
      var signed = n === 'delta_ns' || n === 'delta';
      if (isTime) return [(signed && Number(cell) > 0 ? '+' : '') + ctx.fmtNs(Number(cell)), 'num'];
      if (signed && num && Number(cell) > 0) return ['+' + cell, 'num'];
      return [cell, /^[-+0-9.]/.test(cell) ? 'num' : ''];
    });
  }

  return { shortName: shortName, groupFindings: groupFindings, table: table, stepDetail: stepDetail, kernelTable: kernelTable, timeline: timeline, compare: compare };
})();
