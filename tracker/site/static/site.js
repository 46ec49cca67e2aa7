// The site's behaviour: the method search (from the index in search-index.js, so it works from
// file:// with no server) and the matrix filters. Without JavaScript both stay hidden and every
// page still reads in full.
(function () {
  'use strict';
  const root = document.body.dataset.root || '';
  const methods = window.TRACKER_METHODS || [];

  // The query's side of the one matcher, line for line as tracker/search.py has it (which
  // also makes each method's keys in the index): tests/test_search.py checks they agree.
  function words(text) {
    text = text.toLowerCase().replace(/\+/g, ' p ').replace(/\*/g, ' star ').replace(/iz/g, 'is');
    return (text.match(/[a-z0-9]+/g) || []).map(w => (w === 'plus' ? 'p' : w));
  }
  const compact = text => words(text).join('');
  function initials(text) {
    const found = words(text);
    return found.length >= 3 ? found.map(w => w[0]).join('') : '';
  }
  const ARXIV = /(?:^|arxiv\.org\/(?:abs|pdf)\/|^arxiv:\s*)(\d{4}\.\d{4,5})(?:v\d+)?(?:\.pdf)?\/?$/;
  function arxivId(text) {
    const found = ARXIV.exec(text.trim().toLowerCase());
    return found ? found[1] : null;
  }
  function distance(a, b) {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const above = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] !== b[j - 1] ? 1 : 0));
        diagonal = above;
      }
    }
    return row[b.length];
  }
  const read = text => ({ paper: arxivId(text), spelled: compact(text), letters: initials(text) });
  function rank(method, query) {
    const keys = method.keys;
    if ((query.paper && method.arxiv === query.paper) || query.spelled === keys[0]) return 0;
    if (keys.includes(query.spelled)) return 1;
    if (query.letters && query.letters === keys[0]) return 2;
    if (keys.includes(query.letters)) return 3;
    if (query.spelled && keys.some(key => key.includes(query.spelled))) return 4;
    return -1;
  }
  const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const order = (a, b) => a[0] - b[0] || b[1].count - a[1].count || byId(a[1], b[1]);
  function nearest(spelled) {
    const allowed = Math.max(1, Math.floor(spelled.length / 3));
    return methods
      .map(m => [Math.min(...m.keys.map(k => distance(spelled, k))), m])
      .filter(([d]) => d <= allowed)
      .sort(order)
      .slice(0, 5)
      .map(([, m]) => m);
  }

  function item(m) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = root + 'methods/' + m.id + '.html';
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = m.name;
    a.append(name);
    const hint = document.createElement('small');
    hint.className = 'hint';
    hint.textContent = [m.id, m.arxiv && 'arXiv ' + m.arxiv, m.family,
      'in ' + m.count + ' framework' + (m.count === 1 ? '' : 's')].filter(Boolean).join(' · ');
    a.append(hint);
    li.append(a);
    return li;
  }

  function setUpSearch() {
    const form = document.querySelector('form.search');
    const input = document.getElementById('search');
    const list = document.getElementById('search-results');
    if (!form || !input || !list) return;
    form.hidden = false;
    function show() {
      list.replaceChildren();
      if (!input.value.trim()) return;
      const query = read(input.value);
      const found = methods
        .map(m => [rank(m, query), m])
        .filter(([r]) => r >= 0)
        .sort(order)
        .slice(0, 12)
        .map(([, m]) => m);
      if (!found.length) {
        const near = nearest(query.spelled);
        const li = document.createElement('li');
        li.className = 'none';
        li.textContent = 'No method matches “' + input.value.trim() + '”' +
          (near.length ? '; the nearest:' : '.');
        list.append(li, ...near.map(item));
        return;
      }
      list.append(...found.map(item));
    }
    input.addEventListener('input', show);
    form.addEventListener('submit', event => {
      event.preventDefault();
      const first = list.querySelector('a');
      if (first) window.location.href = first.href;
    });
    document.addEventListener('keydown', event => {
      if (event.key === 'Escape') list.replaceChildren();
    });
  }

  function setUpFilters() {
    const table = document.getElementById('methods');
    const form = document.querySelector('form.filters');
    if (!table || !form) return;
    form.hidden = false;
    const family = document.getElementById('filter-family');
    const tier = document.getElementById('filter-tier');
    const framework = document.getElementById('filter-framework');
    const shown = document.getElementById('shown');
    const groups = Array.from(table.tBodies);
    const total = table.querySelectorAll('tr.method').length;
    function apply() {
      let count = 0;
      for (const group of groups) {
        let visible = 0;
        for (const row of group.querySelectorAll('tr.method')) {
          const cells = Array.from(row.querySelectorAll('td.cell[data-tier]')).filter(cell =>
            (!framework.value || cell.dataset.framework === framework.value)
            && (!tier.value || cell.dataset.tier === tier.value));
          const ok = (!family.value || row.dataset.family === family.value)
            && (!(framework.value || tier.value) || cells.length > 0);
          row.hidden = !ok;
          if (ok) visible += 1;
        }
        group.hidden = visible === 0;
        count += visible;
      }
      shown.textContent = count + ' of ' + total + ' methods';
    }
    for (const select of [family, tier, framework]) select.addEventListener('change', apply);
    apply();
  }

  setUpSearch();
  setUpFilters();
})();
