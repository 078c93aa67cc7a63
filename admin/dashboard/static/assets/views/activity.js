// Activity: the account's requests from the request log, with filters,
// a detail panel, more pages on demand and CSV or JSON Lines export;
// Usage: totals by day, model, key or end user over a date range.

import { path } from '../api.js';
import { h, replace, uid } from '../dom.js';
import { announce, busy, card, emptyState, errorBox } from '../ui.js';
import * as fmt from '../format.js';

const PAGE = 50;

// The request log entry's fields in the detail panel, in order.
const DETAIL = [
  ['Time', (e) => `${fmt.dateTime(e.created_at)} (${fmt.utc(e.created_at)})`],
  ['Request id', (e) => e.request_id],
  ['Log id', (e) => e.id],
  ['Key', (e) => e.key_id],
  ['End user', (e) => e.end_user || '—'],
  ['Route', (e) => `${e.method} ${e.path} (${e.route})`],
  ['Model asked', (e) => e.model_asked || '—'],
  ['Model that answered', (e) => e.model_served || '—'],
  ['Upstream', (e) => e.upstream || '—'],
  ['Status', (e) => String(e.status)],
  ['Error code', (e) => e.error_code || '—'],
  ['Stream', (e) => (e.stream ? 'yes' : 'no')],
  ['Prompt tokens', (e) => fmt.number(e.prompt_tokens)],
  ['Completion tokens', (e) => fmt.number(e.completion_tokens)],
  ['Estimated', (e) => (e.estimated ? 'yes: the backend reported no usage, the counts are estimated' : 'no')],
  ['Cost', (e) => fmt.money(e.cost_cents)],
  ['Tools run', (e) => String(e.tool_calls)],
  ['Latency', (e) => ms(e.latency_ms)],
  ['Time to first byte', (e) => (e.first_byte_ms === null ? '—' : ms(e.first_byte_ms))],
];

function ms(v) {
  const n = Number(v || 0);
  return n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`;
}

function statusBadge(status) {
  const kind = status >= 500 ? 'badge-danger' : status >= 400 ? 'badge-warning' : 'badge-success';
  return h('span', { class: ['badge', kind] }, String(status));
}

// input builds a labelled filter control.
function control(label, el) {
  el.id = el.id || uid('filter');
  return h('div', { class: 'field field-compact' }, h('label', { for: el.id, class: 'label' }, label), el);
}

export async function activity(body, ctx) {
  const base = path('accounts', ctx.account, 'activity');
  const keys = await ctx.client.getAll(path('accounts', ctx.account, 'keys')).catch(() => ({ data: [] }));
  if (!ctx.current()) return;
  const keyHint = new Map((keys.data || []).map((k) => [k.id, k.label ? `${k.label} (${k.hint})` : k.hint]));

  const f = {
    key: h('select', { class: 'select', name: 'key' }, h('option', { value: '' }, 'All keys'),
      (keys.data || []).map((k) => h('option', { value: k.id }, keyHint.get(k.id)))),
    model: h('input', { class: 'input', name: 'model', type: 'text', autocomplete: 'off', placeholder: 'any' }),
    status: h('select', { class: 'select', name: 'status' },
      [['', 'Any'], ['2xx', 'Succeeded (2xx)'], ['4xx', 'Refused (4xx)'], ['5xx', 'Failed (5xx)'], ['429', 'Rate limited (429)'], ['402', 'No balance (402)']]
        .map(([v, t]) => h('option', { value: v }, t))),
    user: h('input', { class: 'input', name: 'user', type: 'text', autocomplete: 'off', placeholder: 'any' }),
    since: h('input', { class: 'input', name: 'since', type: 'date' }),
    until: h('input', { class: 'input', name: 'until', type: 'date' }),
  };
  const apply = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply filters');
  const reset = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Clear');
  const csv = h('button', { type: 'button', class: 'btn btn-secondary', 'data-testid': 'export-csv' }, 'Export CSV');
  const jsonl = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Export JSON Lines');
  const form = h('form', { class: 'filters', 'aria-label': 'Filter requests' },
    control('Key', f.key), control('Model', f.model), control('Status', f.status), control('End user', f.user),
    control('From (day)', f.since), control('To (day, included)', f.until),
    h('div', { class: 'filters-actions' }, apply, reset));

  const results = h('div', { 'aria-live': 'polite' });
  const detail = h('div');
  replace(body,
    card('Requests', { aside: h('div', { class: 'form-actions' }, csv, jsonl) },
      h('div', { class: 'card-body' }, form), results),
    detail);

  // The days are the browser's: since is the first day's midnight and
  // until the midnight after the last day, in Unix seconds as the API
  // takes them.
  const query = () => {
    const q = new URLSearchParams();
    for (const [name, el] of Object.entries(f)) {
      const v = el.value.trim();
      if (!v) continue;
      if (name === 'since' || name === 'until') {
        const s = fmt.startOfLocalDay(v, name === 'until' ? 1 : 0);
        if (s !== null) q.set(name, String(s));
      } else q.set(name, v);
    }
    return q;
  };
  let rows = [];
  let selected = '';

  const showDetail = (e) => {
    selected = e.id;
    for (const tr of results.querySelectorAll('tr[data-id]')) {
      if (tr.dataset.id === e.id) tr.setAttribute('aria-selected', 'true'); else tr.removeAttribute('aria-selected');
    }
    const close = h('button', { type: 'button', class: 'btn btn-secondary btn-small' }, 'Close');
    const c = card('Request details', { class: 'card-detail', aside: close },
      h('dl', { class: 'detail-list', 'data-testid': 'activity-detail' },
        DETAIL.map(([name, value]) => [h('dt', {}, name), h('dd', {}, value(e))])));
    close.addEventListener('click', () => { replace(detail); selected = ''; draw(false); });
    replace(detail, c);
    c.querySelector('.card-title').setAttribute('tabindex', '-1');
    c.querySelector('.card-title').focus();
  };

  const draw = (more) => {
    if (rows.length === 0) {
      replace(results, emptyState('No requests',
        query().toString() ? 'No request matches these filters.' : 'Requests made with this account’s keys appear here a moment after they finish.'));
      return;
    }
    const table = h('table', { class: 'table table-compact table-activity' },
      h('caption', { class: 'sr-only' }, 'Requests, newest first. Choose one to see all its details.'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Time'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Model'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Key'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'End user'),
        h('th', { scope: 'col', class: 'num hide-narrow' }, 'Tokens in / out'),
        h('th', { scope: 'col', class: 'num' }, 'Cost'),
        h('th', { scope: 'col', class: 'num hide-narrow' }, 'Latency'),
        h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Details')))),
      h('tbody', {}, rows.map((e) => {
        const open = h('button', { type: 'button', class: 'btn btn-secondary btn-small', 'aria-label': `Details of request ${e.request_id}` }, 'Details');
        open.addEventListener('click', () => showDetail(e));
        const model = e.model_served && e.model_served !== e.model_asked ? `${e.model_asked || '—'} → ${e.model_served}` : (e.model_asked || e.model_served || '—');
        return h('tr', { 'data-id': e.id, 'data-request-id': e.request_id, 'aria-selected': e.id === selected ? 'true' : null },
          h('td', { class: 'nowrap' }, fmt.dateTime(e.created_at)),
          h('td', {}, statusBadge(e.status), e.error_code ? h('span', { class: 'muted small error-code' }, ` ${e.error_code}`) : null),
          h('td', {}, model),
          h('td', { class: 'hide-narrow' }, keyHint.get(e.key_id) || e.key_id),
          h('td', { class: 'hide-narrow' }, e.end_user || '—'),
          h('td', { class: 'num hide-narrow nowrap' }, `${fmt.number(e.prompt_tokens)} / ${fmt.number(e.completion_tokens)}${e.estimated ? ' *' : ''}`),
          h('td', { class: 'num nowrap' }, fmt.money(e.cost_cents)),
          h('td', { class: 'num hide-narrow nowrap' }, ms(e.latency_ms)),
          h('td', { class: 'actions' }, open));
      })));
    const foot = h('div', { class: 'card-foot form-actions' },
      h('span', { class: 'muted small' }, `${rows.length} ${rows.length === 1 ? 'request' : 'requests'} shown. * estimated token counts.`));
    if (more) {
      const next = h('button', { type: 'button', class: 'btn btn-secondary btn-small' }, 'Load more');
      next.addEventListener('click', () => busy(next, 'Loading…', () => load(true)));
      foot.append(next);
    }
    replace(results, h('div', { class: 'table-wrap table-wrap-activity' }, table), foot);
  };

  let hasMore = false;
  const load = async (append) => {
    const q = query();
    q.set('limit', String(PAGE));
    if (append && rows.length) q.set('after', rows[rows.length - 1].id);
    try {
      const res = await ctx.client.get(`${base}?${q}`);
      if (!ctx.current()) return;
      rows = append ? rows.concat(res.data || []) : (res.data || []);
      hasMore = Boolean(res.has_more);
      draw(hasMore);
    } catch (err) {
      if (ctx.current()) replace(results, h('div', { class: 'card-body' }, errorBox(err, 'The requests could not be loaded')));
    }
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    replace(detail);
    selected = '';
    busy(apply, 'Loading…', () => load(false));
  });
  reset.addEventListener('click', () => {
    for (const el of Object.values(f)) el.value = '';
    replace(detail);
    load(false);
  });
  const exportAs = (format, button, type) => busy(button, 'Exporting…', async () => {
    const q = query();
    q.set('format', format);
    try {
      const text = await ctx.client.getText(`${base}?${q}`);
      const url = URL.createObjectURL(new Blob([text], { type }));
      const a = h('a', { href: url, download: `activity-${ctx.account}.${format}`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      announce(`Exported ${format.toUpperCase()}`);
    } catch (err) {
      announce(`The export failed: ${err.message}`, 'error');
    }
  });
  csv.addEventListener('click', () => exportAs('csv', csv, 'text/csv'));
  jsonl.addEventListener('click', () => exportAs('jsonl', jsonl, 'application/jsonl'));

  await load(false);
}

const GROUPS = [['day', 'Day'], ['model', 'Model'], ['key', 'Key'], ['user', 'End user']];

export async function usage(body, ctx) {
  const base = path('accounts', ctx.account, 'usage');
  const today = new Date();
  const from = new Date(today.getTime() - 30 * 86400000);
  const by = h('select', { class: 'select', name: 'by' }, GROUPS.map(([v, t]) => h('option', { value: v }, t)));
  const since = h('input', { class: 'input', type: 'date', name: 'since', value: fmt.isoDay(from) });
  const until = h('input', { class: 'input', type: 'date', name: 'until', value: fmt.isoDay(today) });
  const show = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Show');
  const form = h('form', { class: 'filters', 'aria-label': 'Usage report' },
    control('Group by', by), control('From (UTC day)', since), control('To (UTC day)', until),
    h('div', { class: 'filters-actions' }, show));
  const results = h('div', { 'aria-live': 'polite' });
  replace(body, card('Totals', {}, h('div', { class: 'card-body' }, form), results));

  const load = async () => {
    const q = new URLSearchParams({ by: by.value });
    if (since.value) q.set('since', since.value);
    if (until.value) q.set('until', until.value);
    try {
      const res = await ctx.client.get(`${base}?${q}`);
      if (!ctx.current()) return;
      draw(res);
    } catch (err) {
      if (ctx.current()) replace(results, h('div', { class: 'card-body' }, errorBox(err, 'The report could not be loaded')));
    }
  };
  const groupOf = (r) => {
    if (r.day !== undefined) return fmt.day(r.day);
    if (r.model !== undefined) return r.model || '—';
    if (r.key_id !== undefined) return r.key_hint ? `${r.key_hint} (${r.key_id})` : r.key_id || '—';
    return r.end_user || '(none named)';
  };
  const draw = (res) => {
    const rows = res.data || [];
    if (rows.length === 0) {
      replace(results, emptyState('No usage', `No charged request between ${res.since} and ${res.until}.`));
      return;
    }
    const total = rows.reduce((t, r) => ({
      requests: t.requests + r.requests, prompt: t.prompt + r.prompt_tokens,
      completion: t.completion + r.completion_tokens, cost: t.cost + r.cost_cents,
    }), { requests: 0, prompt: 0, completion: 0, cost: 0 });
    const label = GROUPS.find(([v]) => v === res.by)[1];
    replace(results, h('div', { class: 'table-wrap' }, h('table', { class: 'table table-compact', 'data-testid': 'usage-table' },
      h('caption', { class: 'sr-only' }, `Usage by ${label.toLowerCase()} from ${res.since} to ${res.until}`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, label),
        h('th', { scope: 'col', class: 'num' }, 'Requests'),
        h('th', { scope: 'col', class: 'num' }, 'Prompt tokens'),
        h('th', { scope: 'col', class: 'num' }, 'Completion tokens'),
        h('th', { scope: 'col', class: 'num' }, 'Cost'))),
      h('tbody', {}, rows.map((r) => h('tr', {},
        h('th', { scope: 'row' }, groupOf(r)),
        h('td', { class: 'num' }, fmt.number(r.requests)),
        h('td', { class: 'num' }, fmt.number(r.prompt_tokens)),
        h('td', { class: 'num' }, fmt.number(r.completion_tokens)),
        h('td', { class: 'num' }, fmt.money(r.cost_cents))))),
      h('tfoot', {}, h('tr', {},
        h('th', { scope: 'row' }, 'Total'),
        h('td', { class: 'num' }, fmt.number(total.requests)),
        h('td', { class: 'num' }, fmt.number(total.prompt)),
        h('td', { class: 'num' }, fmt.number(total.completion)),
        h('td', { class: 'num' }, fmt.money(total.cost)))))));
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(show, 'Loading…', load);
  });
  await load();
}
