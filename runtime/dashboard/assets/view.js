var KV = (function () {
  var SVG = 'http://www.w3.org/2000/svg';
  var COLOURS = {ok: '#2e7d32', compile_error: '#ef6c00', incorrect: '#c62828', rejected: '#6a1b9a',
                 in_flight: '#9e9e9e'};
  function colour(status) { return COLOURS[status] || '#5d4037'; }
  function el(tag, props) {
    var e = document.createElement(tag);
    for (var k in (props || {})) {
      if (k === 'text') e.textContent = props[k];
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), props[k]);
      else e.setAttribute(k, props[k]);
    }
    var add = function (c) {
      if (c === null || c === undefined) return;
      if (Array.isArray(c)) return c.forEach(add);
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    };
    for (var i = 2; i < arguments.length; i++) add(arguments[i]);
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(x, d) { return (x === null || x === undefined) ? '-' : Number(x).toFixed(d === undefined ? 3 : d); }
  function duration(s) {
    if (s === null || s === undefined) return '-';
    if (s < 90) return Math.round(s) + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }
  function legend() {
    var d = el('div', {class: 'kv-legend'});
    ['ok', 'incorrect', 'compile_error', 'rejected', 'in_flight', 'other failure'].forEach(function (s) {
      var i = el('i'); i.style.background = colour(s);
      d.appendChild(el('span', {}, i, s.replace('_', ' ')));
    });
    return d;
  }

  // Best-so-far over evaluations, drawn by Chart.js (vendored: runtime/dashboard/vendor/chart.js): both axes
  // titled, the baselines dashed, a point per improvement (clicking one picks its node). One chart per view,
  // its data replaced on every update.
  function curve(search, onPick, state) {
    // The curve runs to the latest evaluation, not only to the latest improvement.
    var pts = search.curve || [], last = Math.max(1, pts.length ? pts[pts.length - 1][0] : 0, search.evaluated || 0);
    var best = [{x: 0, y: 0, node: 0}], prev = 0;
    pts.forEach(function (p) { best.push({x: p[0], y: p[1], node: p[2]}); prev = p[1]; });
    best.push({x: last, y: prev, node: 0});
    var sets = [{label: 'best speedup', data: best, stepped: 'after', borderColor: '#2e7d32',
                 backgroundColor: '#2e7d32', borderWidth: 2, pointHoverRadius: 6,
                 pointRadius: best.map(function (p) { return p.node ? 4 : 0; })}];
    (search.baselines || []).forEach(function (b, i) {
      var c = i ? '#1565c0' : '#c62828';
      sets.push({label: b.name + ' ' + fmt(b.speedup, 2) + 'x', data: [{x: 0, y: b.speedup}, {x: last, y: b.speedup}],
                 borderColor: c, backgroundColor: c, borderDash: [5, 4], borderWidth: 1.5, pointRadius: 0});
    });
    if (!state.curve) {
      var canvas = el('canvas', {width: 680, height: 260, 'aria-label': 'best speedup over evaluations'});
      var chart = new Chart(canvas, {type: 'line', data: {datasets: sets}, options: {
        animation: false, responsive: false,
        scales: {x: {type: 'linear', min: 0, max: last, title: {display: true, text: 'evaluations'}},
                 y: {min: 0, title: {display: true, text: 'best speedup'},
                     ticks: {callback: function (v) { return v + 'x'; }}}},
        plugins: {legend: {position: 'right'}, tooltip: {callbacks: {label: function (c) {
          var p = c.raw;
          return c.datasetIndex ? c.dataset.label
                                : (p.node ? 'node ' + p.node + ': ' : '') + fmt(p.y) + 'x at evaluation ' + p.x;
        }}}},
        onClick: function (e, hits) {
          hits.forEach(function (h) {
            var p = h.datasetIndex === 0 ? chart.data.datasets[0].data[h.index] : null;
            if (p && p.node) onPick(p.node);
          });
        }}});
      state.curve = {box: el('div', {class: 'kv-curve'}, canvas), chart: chart};
    } else {
      state.curve.chart.data.datasets = sets;
      state.curve.chart.options.scales.x.max = last;
      state.curve.chart.update('none');
    }
    return state.curve.box;
  }

  // The statuses of the evaluations, slice by slice (Chart.js stacked bars, in percent of the slice).
  function mix(search, state) {
    var slices = search.mix || [], lo = 0, labels = [], statuses = {};
    slices.forEach(function (m) {
      labels.push((lo + 1) + '-' + m.upto);
      Object.keys(m.counts).forEach(function (k) { statuses[k] = true; });
      lo = m.upto;
    });
    var sets = Object.keys(statuses).sort().map(function (k) {
      var from = 0;
      return {label: k.replace('_', ' '), backgroundColor: colour(k), data: slices.map(function (m) {
        var n = m.upto - from; from = m.upto;
        return n > 0 ? 100 * (m.counts[k] || 0) / n : 0;
      }), counts: slices.map(function (m) { return m.counts[k] || 0; })};
    });
    if (!state.mix) {
      var canvas = el('canvas', {width: 680, height: 120, 'aria-label': 'verdicts over evaluations'});
      var chart = new Chart(canvas, {type: 'bar', data: {labels: labels, datasets: sets}, options: {
        animation: false, responsive: false,
        scales: {x: {stacked: true, title: {display: true, text: 'evaluations'}},
                 y: {stacked: true, min: 0, max: 100, ticks: {callback: function (v) { return v + '%'; }}}},
        plugins: {legend: {position: 'right'}, tooltip: {callbacks: {label: function (c) {
          return c.dataset.label + ': ' + c.dataset.counts[c.dataIndex] + ' (' + fmt(c.raw, 0) + '%)';
        }}}}}});
      state.mix = {box: el('div', {class: 'kv-mix'}, canvas), chart: chart};
    } else {
      state.mix.chart.data.labels = labels;
      state.mix.chart.data.datasets = sets;
      state.mix.chart.update('none');
    }
    return state.mix.box;
  }

  // The tree, laid out by d3-hierarchy (vendored): d3.stratify() over each node's first parent (a crossover's
  // other parents are drawn as extra edges), d3.tree() as a tidy tree with depth left to right. Several roots
  // (the seeds) hang under one hidden root. Returns positions in tree units: x = depth, y = row.
  function layout(nodes) {
    var byId = {}, pos = {}, depth = 0, rows = 1, ROOT = '__kv_root__';
    nodes.forEach(function (n) { byId[n.id] = n; });
    var table = [{id: ROOT, parent: ''}];
    nodes.forEach(function (n) {
      var p = n.parents.length && byId[n.parents[0]] ? n.parents[0] : ROOT;
      table.push({id: String(n.id), parent: String(p)});
    });
    if (nodes.length) {
      var root = d3.stratify().id(function (r) { return r.id; })
                   .parentId(function (r) { return r.parent || null; })(table);
      root.sort(function (a, b) { return Number(a.id) - Number(b.id); });
      d3.tree().nodeSize([1, 1]).separation(function (a, b) { return a.parent === b.parent ? 1 : 1.25; })(root);
      var lo = Infinity, hi = -Infinity;
      root.each(function (d) { if (d.id !== ROOT) { lo = Math.min(lo, d.x); hi = Math.max(hi, d.x); } });
      root.each(function (d) {
        if (d.id === ROOT) return;
        pos[d.id] = {x: d.depth - 1, y: d.x - lo};
        depth = Math.max(depth, d.depth - 1);
      });
      rows = Math.max(1, hi - lo + 1);
    }
    return {pos: pos, rows: rows, depth: depth, byId: byId};
  }

  function tree(search, state, onPick) {
    var lay = layout(search.nodes || []), DX = 70, DY = 16;
    var w = (lay.depth + 1) * DX + 40, h = lay.rows * DY + 20;
    var s = sv('svg', {class: 'kv-tree'});
    var g = sv('g');
    s.appendChild(g);
    var px = function (id) { return 20 + lay.pos[id].x * DX; }, py = function (id) { return 10 + lay.pos[id].y * DY; };
    (search.nodes || []).forEach(function (n) {
      n.parents.forEach(function (p, i) {
        if (!lay.pos[p]) return;
        g.appendChild(sv('line', {x1: px(p), y1: py(p), x2: px(n.id), y2: py(n.id),
                                  stroke: i ? '#1565c0' : '#bbb', 'stroke-dasharray': i ? '3 3' : ''}));
      });
    });
    (search.nodes || []).forEach(function (n) {
      var best = n.id === search.best_node, sel = n.id === state.selected;
      var c = sv('circle', {cx: px(n.id), cy: py(n.id), r: 4 + Math.min(6, (n.fitness || 0) * 1.5),
                            fill: colour(n.status), 'data-node': n.id, style: 'cursor:pointer',
                            stroke: best ? '#000' : sel ? '#fbc02d' : 'none', 'stroke-width': best || sel ? 3 : 0});
      if (best) c.setAttribute('class', 'kv-best');
      c.appendChild(sv('title', {}, 'node ' + n.id + ' (' + n.op + ') ' + n.status + ' ' + fmt(n.fitness) + 'x'));
      c.addEventListener('click', function (e) { e.stopPropagation(); onPick(n.id); });
      g.appendChild(c);
    });
    // Zoom (wheel, around the pointer) and pan (drag) through the viewBox; kept across refreshes in `state`.
    if (!state.box) state.box = [0, 0, Math.max(w, 300), Math.max(h, 200)];
    var apply = function () { s.setAttribute('viewBox', state.box.join(' ')); };
    apply();
    s.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = s.getBoundingClientRect(), b = state.box, k = e.deltaY > 0 ? 1.15 : 1 / 1.15;
      var mx = b[0] + b[2] * (e.clientX - r.left) / r.width, my = b[1] + b[3] * (e.clientY - r.top) / r.height;
      state.box = [mx - (mx - b[0]) * k, my - (my - b[1]) * k, b[2] * k, b[3] * k];
      apply();
    }, {passive: false});
    var drag = null;
    s.addEventListener('pointerdown', function (e) { drag = [e.clientX, e.clientY, state.box.slice()]; });
    s.addEventListener('pointermove', function (e) {
      if (!drag) return;
      var r = s.getBoundingClientRect(), b = drag[2];
      state.box = [b[0] - (e.clientX - drag[0]) * b[2] / r.width, b[1] - (e.clientY - drag[1]) * b[3] / r.height,
                   b[2], b[3]];
      apply();
    });
    ['pointerup', 'pointerleave'].forEach(function (t) { s.addEventListener(t, function () { drag = null; }); });
    return s;
  }

  // The profile in a few lines: bandwidth against the measured copy ceiling, then the profile's lines a kernel
  // engineer looks for first (achieved rates, where the evaluation's time went, registers, spills, occupancy).
  function profileSummary(n) {
    var items = [];
    var t = n.timing;
    if (t && t.gbps > 0)
      items.push(fmt(t.gbps, 1) + ' GB/s' + (t.peak_gbps > 0 ? ', ' + fmt(100 * t.gbps / t.peak_gbps, 1) +
                 ' % of the measured copy bandwidth (' + fmt(t.peak_gbps, 0) + ' GB/s)' : ''));
    var want = /^(achieved|timeline|on the device|evaluation phases|time per phase|registers|resources|.*spill|.*waves\/SIMD)/i;
    (n.profile || '').split('\n').forEach(function (l) {
      l = l.trim();
      if (l && want.test(l) && items.length < 8) items.push(l.length > 220 ? l.slice(0, 220) + '...' : l);
    });
    if (!items.length) return null;
    return el('div', {class: 'kv-profile-summary'}, el('b', {text: 'profile summary'}),
              el('ul', {}, items.map(function (i) { return el('li', {text: i}); })));
  }

  // Line diff (longest common subsequence); null when too large to compare here.
  function diff(a, b) {
    var x = (a || '').split('\n'), y = (b || '').split('\n'), n = x.length, m = y.length;
    if (n * m > 4e6) return null;
    var L = [];
    for (var i = 0; i <= n; i++) L.push(new Int32Array(m + 1));
    for (i = n - 1; i >= 0; i--)
      for (var j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    var out = [];
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { out.push([' ', x[i]]); i++; j++; }
      else if (j < m && (i >= n || L[i][j + 1] >= L[i + 1][j])) { out.push(['+', y[j]]); j++; }
      else { out.push(['-', x[i]]); i++; }
    }
    return out;
  }

  function section(title, text, open) {
    if (text === null || text === undefined || text === '') return null;
    var d = el('details', open ? {open: ''} : {}, el('summary', {text: title}), el('pre', {text: text}));
    return d;
  }

  function timings(t) {
    if (!t) return null;
    var tb = el('table', {}, el('tr', {}, el('th', {text: ''}), el('th', {text: 'p10 ms'}),
                                 el('th', {text: 'median ms'}), el('th', {text: 'p90 ms'}), el('th', {text: 'runs'})));
    ['candidate', 'reference', 'compiled'].forEach(function (k) {
      var r = t[k];
      if (!r) return;
      tb.appendChild(el('tr', {}, el('td', {text: k === 'compiled' ? 'torch.compile' : k}),
                        el('td', {class: 'n', text: fmt(r.p10_ms, 4)}), el('td', {class: 'n', text: fmt(r.median_ms, 4)}),
                        el('td', {class: 'n', text: fmt(r.p90_ms, 4)}), el('td', {class: 'n', text: String(r.samples)})));
    });
    return tb;
  }

  function details(n) {
    var box = el('div', {class: 'kv-box kv-node', 'data-node': n.id});
    box.appendChild(el('h3', {text: 'node ' + n.id + ' (' + n.op + ')' +
                                    (n.parents.length ? ' from ' + n.parents.join(', ') : '')}));
    box.appendChild(el('div', {}, el('b', {text: n.status}), ' ' + (n.reason ? '[' + n.reason + '] ' : '') +
                       'fitness ' + fmt(n.fitness) + 'x' + (n.candidate_ms ? ', ' + fmt(n.candidate_ms, 4) +
                       ' ms vs reference ' + fmt(n.reference_ms, 4) + ' ms' : '') +
                       (n.device_class ? ' on ' + n.device_class : '')));
    if (n.message) box.appendChild(el('pre', {text: n.message}));
    var t = timings(n.timing);
    if (t) box.appendChild(t);
    if (n.timing && n.timing.compile_speedup) box.appendChild(el('div', {text: 'vs torch.compile: ' +
                                                                                fmt(n.timing.compile_speedup) + 'x'}));
    var ps = profileSummary(n);
    if (ps) box.appendChild(ps);
    if (n.parent_source !== null && n.parent_source !== undefined && n.source) {
      var d = diff(n.parent_source, n.source), pre = el('pre', {class: 'kv-diff'});
      if (!d) pre.textContent = 'too large to compare here';
      else d.forEach(function (l) {
        pre.appendChild(el('span', {class: l[0] === '+' ? 'kv-add' : l[0] === '-' ? 'kv-del' : 'kv-same',
                                    text: l[0] + ' ' + l[1]}));
      });
      box.appendChild(el('details', {open: ''}, el('summary', {text: 'diff against node ' + n.parents[0]}), pre));
    }
    [['source', n.source, true], ['diagnosis', n.diagnosis, true], ['profile', n.profile],
     ['evaluation report', n.report], ['compile log', n.compile_log], ['runner log', n.runner_log],
     ['prompt', n.prompt], ['reply', n.reply]].forEach(function (s) {
      var d = section(s[0], s[1], s[2]);
      if (d) box.appendChild(d);
    });
    return box;
  }

  // The whole search view in `root`. getNode(id) -> Promise of the node's JSON. Returns {update(search)}.
  function searchView(root, search, getNode) {
    var state = {selected: 0, box: null};
    var head = el('div'), charts = el('div', {class: 'kv-left'}), side = el('div', {class: 'kv-details'});
    root.appendChild(head);
    root.appendChild(el('div', {class: 'kv-row'}, charts, side));
    side.appendChild(el('p', {class: 'kv-muted', text: 'Click a node of the tree or a point of the curve.'}));
    function pick(id) {
      state.selected = id;
      getNode(id).then(function (n) {
        side.textContent = '';
        side.appendChild(n ? details(n) : el('p', {text: 'node ' + id + ': no details stored'}));
        draw(search);
      }, function (e) { side.textContent = 'node ' + id + ': ' + e; });
    }
    function draw(s) {
      search = s;
      head.textContent = '';
      head.appendChild(el('h2', {text: s.id}));
      head.appendChild(el('div', {class: 'kv-summary', text: s.problem + ' | ' + s.strategy + ' | ' + s.backend +
        (s.device_class ? ' | ' + s.device_class : '') + ' | ' + s.state + ' | evaluated ' + s.evaluated +
        ' (correct ' + s.correct + ', failed ' + s.failed + ', in flight ' + s.in_flight + ') | best ' +
        fmt(s.best_fitness) + 'x (node ' + s.best_node + ')' +
        (s.best_vs_compile ? ', ' + fmt(s.best_vs_compile) + 'x vs torch.compile' : '') + ' | ' +
        fmt(s.per_minute, 1) + ' evaluations/min' +
        (s.eta_s !== null && s.eta_s !== undefined ? ' | budget in ' + duration(s.eta_s) : '')}));
      charts.textContent = '';
      charts.appendChild(el('h3', {text: 'Best speedup over evaluations'}));
      charts.appendChild(curve(s, pick, state));
      charts.appendChild(el('h3', {text: 'Verdicts over evaluations'}));
      charts.appendChild(mix(s, state));
      charts.appendChild(el('h3', {text: 'Search tree (wheel: zoom, drag: pan; black ring: best)'}));
      if (s.nodes_shown < s.nodes_total)
        charts.appendChild(el('p', {class: 'kv-muted kv-shown', text: 'showing ' + s.nodes_shown + ' of ' +
          s.nodes_total + ' nodes: the best line, the fittest, the latest, and their ancestors'}));
      charts.appendChild(legend());
      charts.appendChild(tree(s, state, pick));
    }
    draw(search);
    if (search.best_node) pick(search.best_node);
    return {update: draw, pick: pick};
  }

  return {el: el, fmt: fmt, duration: duration, colour: colour, diff: diff, searchView: searchView};
})();
