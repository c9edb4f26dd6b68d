(function () {
  var el = KV.el, fmt = KV.fmt, main = document.getElementById('main'), live = document.getElementById('live');
  var current = null, searches = [], view = null, deviceHistory = {};
  function get(path) {
    return fetch(path, {credentials: 'same-origin', cache: 'no-store'}).then(function (r) {
      if (!r.ok) return r.text().then(function (t) { throw new Error(r.status + ' ' + t); });
      return r.json();
    });
  }
  function control(id, what) {
    fetch('/api/search/' + encodeURIComponent(id) + '/' + what, {method: 'POST', credentials: 'same-origin'})
      .then(function (r) { return r.json(); })
      .then(function (j) { live.textContent = j.ok || j.error; refresh(); });
  }
  function controls(s) {
    var d = el('span');
    ['pause', 'resume', 'cancel'].forEach(function (w) {
      if (s.state !== 'running' && s.state !== 'paused') return;
      if ((w === 'pause' && s.state === 'paused') || (w === 'resume' && s.state === 'running')) return;
      d.appendChild(el('button', {text: w, 'data-action': w, onclick: function (e) {
        e.preventDefault();
        if (w !== 'cancel' || confirm('Stop search ' + s.id + ' for good?')) control(s.id, w);
      }}));
    });
    return d;
  }
  function searchesView() {
    main.textContent = '';
    var t = el('table', {id: 'searches'}, el('tr', {}, ['search', 'problem', 'strategy', 'backend / device class',
      'state', 'evaluated', 'correct', 'failed', 'best (vs eager)', 'best vs torch.compile', 'evals/min',
      'ETA to budget', ''].map(function (h) {
        return el('th', {text: h}); })));
    searches.forEach(function (s) {
      if (s.error) {  // its nodes could not be read: say so instead of counts
        t.appendChild(el('tr', {'data-search': s.id},
          el('td', {}, el('a', {href: '#/search/' + encodeURIComponent(s.id), text: s.id})),
          el('td', {text: s.problem}), el('td', {text: s.strategy}),
          el('td', {class: 'error', colspan: '10', text: 'unreadable: ' + s.error})));
        return;
      }
      t.appendChild(el('tr', {'data-search': s.id},
        el('td', {}, el('a', {href: '#/search/' + encodeURIComponent(s.id), text: s.id})),
        el('td', {text: s.problem}), el('td', {text: s.strategy}),
        el('td', {text: s.backend + (s.device_class ? ' / ' + s.device_class : '')}),
        el('td', {class: 'state', text: s.state}), el('td', {class: 'n evaluated', text: String(s.evaluated)}),
        el('td', {class: 'n', text: String(s.correct)}), el('td', {class: 'n', text: String(s.failed)}),
        el('td', {class: 'n', text: fmt(s.best_fitness) + 'x' + (s.best_node ? ' (node ' + s.best_node + ')' : '')}),
        el('td', {class: 'n vs-compile', text: s.best_vs_compile ? fmt(s.best_vs_compile) + 'x' : 'not measured'}),
        el('td', {class: 'n', text: fmt(s.per_minute, 1)}), el('td', {class: 'n', text: KV.duration(s.eta_s)}),
        el('td', {}, controls(s))));
    });
    main.appendChild(el('h2', {text: 'Searches'}));
    main.appendChild(searches.length ? t : el('p', {text: 'No searches in this node\'s store.'}));
  }
  function searchPage(id, node) {
    get('/api/search/' + encodeURIComponent(id)).then(function (s) {
      if (view && current && current.kind === 'search' && current.id === id && main.firstChild) {
        view.update(s);
      } else {
        main.textContent = '';
        var bar = el('div');
        main.appendChild(bar);
        var root = el('div');
        main.appendChild(root);
        view = KV.searchView(root, s, function (n) {
          return get('/api/search/' + encodeURIComponent(id) + '/node/' + n);
        });
        view.bar = bar;
        if (node) view.pick(node);
      }
      current = {kind: 'search', id: id};
      view.bar.textContent = '';
      view.bar.appendChild(el('a', {href: '#/', text: '< all searches'}));
      view.bar.appendChild(document.createTextNode(' '));
      view.bar.appendChild(controls(s));
    }, function (e) { main.textContent = String(e); });
  }
  function sparkline(values) {
    var s = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    s.setAttribute('width', 120); s.setAttribute('height', 24);
    var p = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    p.setAttribute('points', values.map(function (v, i) { return (i * 120 / 59) + ',' + (22 - 20 * v); }).join(' '));
    p.setAttribute('fill', 'none'); p.setAttribute('stroke', '#1565c0');
    s.appendChild(p);
    return s;
  }
  function devicesView() {
    get('/api/devices').then(function (ds) {
      main.textContent = '';
      main.appendChild(el('h2', {text: 'Devices'}));
      if (!ds.length) { main.appendChild(el('p', {text: 'No evaluator device has joined this node.'})); return; }
      var t = el('table', {id: 'devices'}, el('tr', {}, ['device', 'backend', 'model', 'class', 'state', 'current job',
        'evaluated', 'utilisation', 'recent'].map(function (h) { return el('th', {text: h}); })));
      var now = Date.now();
      ds.forEach(function (d) {
        var key = d.host + ':' + d.pid + '/' + d.index, h = deviceHistory[key] = deviceHistory[key] || [];
        h.push(d.busy ? 1 : 0);
        while (h.length > 60) h.shift();
        t.appendChild(el('tr', {}, el('td', {text: key}), el('td', {text: d.backend}), el('td', {text: d.name}),
          el('td', {text: d.device_class}), el('td', {text: d.alive ? (d.busy ? 'busy' : 'idle') : 'gone'}),
          el('td', {text: d.current}), el('td', {class: 'n', text: String(d.evaluated)}),
          el('td', {class: 'n', text: fmt(100 * d.utilisation, 1) + ' %'}), el('td', {}, sparkline(h))));
      });
      main.appendChild(t);
      main.appendChild(el('p', {class: 'kv-muted', text: 'utilisation: busy time since the device joined; recent: ' +
                                                         'busy (up) or idle at each refresh'}));
    }, function (e) { main.textContent = String(e); });
  }
  function route() {
    var h = location.hash.replace(/^#/, '') || '/', m;
    if ((m = h.match(/^\/search\/([^\/]+)(?:\/node\/(\d+))?$/))) {
      var id = decodeURIComponent(m[1]);
      if (!current || current.kind !== 'search' || current.id !== id) view = null;
      return searchPage(id, m[2] ? +m[2] : 0);
    }
    view = null;
    if (h === '/devices') { current = {kind: 'devices'}; return devicesView(); }
    current = {kind: 'searches'};
    searchesView();
  }
  var lastRefresh = 0;
  function refresh() {
    lastRefresh = Date.now();
    if (!current || current.kind === 'searches') searchesView();
    else if (current.kind === 'search') searchPage(current.id, 0);
    else devicesView();
  }
  // An event or a poll: the view the address names is drawn (the first answer may come from either).
  function onSearches(list) {
    searches = list;
    if (!current) return route();
    if (Date.now() - lastRefresh > 1500) refresh();
  }
  window.addEventListener('hashchange', route);
  get('/api/searches').then(function (l) { searches = l; if (!current) route(); },
                            function (e) { main.textContent = String(e); });
  // A browser under automation (navigator.webdriver) polls instead: a headless browser's virtual time waits
  // for every pending request. Every other browser uses the event stream, whose connection ends after each
  // event (the server's `retry` brings the next one), so no open tab holds a connection.
  if (window.EventSource && !navigator.webdriver) {
    var es = new EventSource('/api/events'), lastEvent = Date.now();
    es.addEventListener('searches', function (e) {
      lastEvent = Date.now();
      live.textContent = 'live';
      onSearches(JSON.parse(e.data));
    });
    es.addEventListener('error', function (e) {  // an `event: error` from the server carries its reason
      if (e.data) { lastEvent = Date.now(); live.textContent = 'error: ' + e.data; }
    });
    // Each event's connection closes by design: "reconnecting" is said only when no event came for 6 s.
    setInterval(function () { if (Date.now() - lastEvent > 6000) live.textContent = 'reconnecting'; }, 1000);
  } else {
    setInterval(function () { get('/api/searches').then(onSearches); }, 3000);
  }
})();
