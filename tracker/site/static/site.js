// The site's behaviour: the method search (from the index in search-index.js, so it works from
// file:// with no server) and the matrix filters. Without JavaScript both stay hidden and every
// page still reads in full.
(function () {
  'use strict';
  const root = document.body.dataset.root || '';
  const methods = window.TRACKER_METHODS || [];

  // arXiv ids are found with or without "arXiv:" and a version suffix
  function normalise(text) {
    return text.trim().toLowerCase().replace(/^arxiv:\s*/, '').replace(/(\d{4}\.\d{4,5})v\d+$/, '$1');
  }

  // how well a method matches: exact id or arXiv id first, then prefixes, then anywhere
  function rank(method, query) {
    const id = method.id, name = method.name.toLowerCase(), arxiv = method.arxiv;
    const spaced = id.replace(/_/g, ' ');
    if (id === query || arxiv === query || name === query) return 0;
    if (id.startsWith(query) || name.startsWith(query) || (arxiv && arxiv.startsWith(query))) return 1;
    if (id.includes(query) || spaced.includes(query) || name.includes(query)) return 2;
    return -1;
  }

  function setUpSearch() {
    const form = document.querySelector('form.search');
    const input = document.getElementById('search');
    const list = document.getElementById('search-results');
    if (!form || !input || !list) return;
    form.hidden = false;
    function show() {
      const query = normalise(input.value);
      list.replaceChildren();
      if (!query) return;
      const found = methods
        .map(m => [rank(m, query), m])
        .filter(([r]) => r >= 0)
        .sort((a, b) => a[0] - b[0] || b[1].count - a[1].count || a[1].id.localeCompare(b[1].id))
        .slice(0, 12);
      if (!found.length) {
        const li = document.createElement('li');
        li.className = 'none';
        li.textContent = 'No method matches “' + input.value.trim() + '”.';
        list.append(li);
        return;
      }
      for (const [, m] of found) {
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
        list.append(li);
      }
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
