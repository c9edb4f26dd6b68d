(function () {
  var data = JSON.parse(document.getElementById('kv-data').textContent), el = KV.el, fmt = KV.fmt;
  var top = document.getElementById('top');
  var t = el('table', {id: 'top-table'}, el('tr', {}, ['node', 'speedup', 'candidate ms', 'GB/s', '% of measured bandwidth',
    'device class'].map(function (h) { return el('th', {text: h}); })));
  (data.top || []).forEach(function (r) {
    var t0 = (data.nodes[String(r.node)] || {}).timing || {};
    r.gbps = t0.gbps; r.peak_gbps = t0.peak_gbps;
    t.appendChild(el('tr', {}, el('td', {}, el('a', {href: '#', text: String(r.node), onclick: function (e) {
      e.preventDefault(); view.pick(r.node); }})), el('td', {class: 'n', text: fmt(r.speedup) + 'x'}),
      el('td', {class: 'n', text: fmt(r.candidate_ms, 4)}), el('td', {class: 'n', text: r.gbps ? fmt(r.gbps, 1) : '-'}),
      el('td', {class: 'n', text: r.gbps && r.peak_gbps ? fmt(100 * r.gbps / r.peak_gbps, 1) + ' %' : '-'}),
      el('td', {text: r.device_class})));
  });
  top.appendChild(t);
  var view = KV.searchView(document.getElementById('view'), data.search, function (id) {
    return Promise.resolve(data.nodes[String(id)] || null);
  });
})();
