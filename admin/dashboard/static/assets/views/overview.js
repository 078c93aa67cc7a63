// Overview: balance, adding funds (a direct top-up for operators, a
// payment page for owners when the gateway takes payments), usage per
// day, recent ledger entries and payment receipts, and auto top-up with
// a saved card when the gateway takes payments.

import { path } from '../api.js';
import { h, replace, uid } from '../dom.js';
import { announce, busy, card, emptyState, errorBox, field } from '../ui.js';
import { barChart, dataTable } from '../chart.js';
import * as fmt from '../format.js';

const DAYS = 30;
const PRESETS = [10, 25, 50, 100];

export async function overview(body, ctx) {
  const acct = path('accounts', ctx.account);
  const since = new Date(Date.now() - (DAYS - 1) * 86400000);
  const [account, usage, ledger, receipts] = await Promise.all([
    ctx.client.get(acct),
    ctx.client.get(`${acct}/usage?since=${fmt.isoDay(since)}&by=day`).catch((err) => ({ error: err })),
    ctx.client.get(`${acct}/ledger?limit=8`).catch((err) => ({ error: err })),
    ctx.client.get(`${acct}/receipts?limit=10`).catch((err) => ({ error: err })),
  ]);
  if (!ctx.current()) return;

  const balance = balanceCard(account);
  const activity = h('div');
  const refreshActivity = async () => {
    const fresh = await ctx.client.get(`${acct}/ledger?limit=8`).catch((err) => ({ error: err }));
    if (ctx.current()) replace(activity, ledgerCard(fresh));
  };
  replace(activity, ledgerCard(ledger));
  // The API says how this token may add funds (GET /admin/me): an
  // operator's credits the balance directly (can_top_up); any other goes
  // through the payment provider's page when the gateway has one
  // (can_checkout); otherwise an operator adds funds.
  let topup;
  if (ctx.me && ctx.me.can_top_up) {
    topup = topUpCard(ctx, acct, (res) => {
      balance.update(res);
      refreshActivity();
    });
  } else if (ctx.me && ctx.me.can_checkout) {
    topup = checkoutCard(ctx, acct, account);
  } else {
    topup = fundsNoteCard();
  }
  const usageSection = usageCard(usage, since, ctx);
  // Auto top-up charges a card saved at the payment provider, so it is
  // offered where the gateway takes payments (can_checkout).
  let auto = null;
  if (ctx.me && ctx.me.can_checkout) {
    const settings = await ctx.client.get(`${acct}/autotopup`).catch((err) => ({ error: err }));
    if (!ctx.current()) return;
    auto = autoTopUpCard(ctx, acct, settings);
  }

  replace(body,
    checkoutNotice(),
    h('div', { class: 'grid grid-2' }, balance.el, topup),
    auto,
    usageSection,
    activity,
    receiptsCard(receipts));
}

// checkoutNotice tells what happened on the payment page the user comes
// back from (?checkout=success or cancelled), once: the query is removed.
function checkoutNotice() {
  const params = new URLSearchParams(location.search);
  const outcome = params.get('checkout');
  if (!outcome) return null;
  history.replaceState(null, '', location.pathname + location.hash);
  if (outcome === 'success') {
    return h('div', { class: 'alert alert-info', role: 'status', 'data-testid': 'checkout-notice' },
      h('p', {}, 'Thank you: the payment was made. It is added to the balance as soon as the payment provider confirms it, usually within seconds; reload to see it.'));
  }
  return h('div', { class: 'alert alert-info', role: 'status', 'data-testid': 'checkout-notice' },
    h('p', {}, 'The payment was cancelled. Nothing was charged.'));
}

function balanceCard(account) {
  const amount = h('p', { class: 'stat-value', 'data-testid': 'balance' });
  const reserved = h('p', { class: 'stat-note' });
  const update = (a) => {
    const cents = a.balance_cents ?? 0;
    amount.textContent = fmt.money(cents);
    amount.dataset.cents = String(cents);
    const held = a.reserved_cents ?? 0;
    reserved.textContent = held > 0
      ? `${fmt.money(held)} is held for requests in progress.`
      : 'Requests are charged from this balance as they finish.';
  };
  update(account);
  const el = card('Balance', { class: 'card-stat' },
    h('div', { class: 'card-body' }, amount, reserved,
      account.created_at ? h('p', { class: 'stat-note muted' }, `Account created ${fmt.date(account.created_at)}`) : null));
  return { el, update: (res) => { if (res && res.balance_cents !== undefined) update(res); } };
}

// checkoutCard asks the admin API for a payment page for the amount and
// goes there; the balance is credited when the provider confirms the
// payment, not by this page.
// amountForm asks for an amount in dollars, with suggested amounts: a
// valid one is sent with request (the button busy meanwhile) and its
// answer handed to done; a failure of either is shown under the form.
// The top-up and checkout cards differ only in these.
function amountForm(ctx, { hint, action, busyLabel, failTitle, testid, request, done }) {
  const input = h('input', {
    type: 'text', inputmode: 'decimal', class: 'input input-amount', name: 'usd', autocomplete: 'off',
    placeholder: '25.00',
  });
  const f = field({ label: 'Amount (USD)', input, hint, prefix: '$' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, action);
  const result = h('div', { class: 'form-error-slot' });
  const presets = h('div', { class: 'chips', role: 'group', 'aria-label': 'Suggested amounts' },
    PRESETS.map((v) => h('button', {
      type: 'button', class: 'chip', onclick: () => { input.value = `${v}.00`; f.setError(''); input.focus(); },
    }, `$${v}`)));
  const form = h('form', { class: 'form', novalidate: true, 'data-testid': testid }, presets, f.el, result, h('div', { class: 'form-actions' }, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(result);
    const amount = fmt.parseTopUp(input.value);
    if (amount.error) {
      f.setError(amount.error);
      input.focus();
      return;
    }
    f.setError('');
    try {
      const res = await busy(submit, busyLabel, () => request(amount));
      if (!ctx.current()) return;
      done(res, amount, input);
    } catch (err) {
      if (!ctx.current()) return;
      replace(result, errorBox(err, failTitle));
      input.focus();
    }
  });
  return { form, submit, result };
}

function checkoutCard(ctx, acct, account) {
  const { form, submit, result } = amountForm(ctx, {
    hint: 'Between $5.00 and $1,000.00. You pay on the payment provider’s page.',
    action: 'Continue to payment',
    busyLabel: 'Opening the payment page…',
    failTitle: 'The payment page could not be opened',
    testid: 'checkout-form',
    request: (amount) => ctx.client.post(`${acct}/checkout`, {
      usd: amount.usd, return_url: location.origin + location.pathname,
    }),
    done: (res, amount) => {
      // Only a web page: the URL comes from the API, and a javascript:
      // one must never be followed.
      const to = new URL(res.url);
      if (to.protocol !== 'https:' && to.protocol !== 'http:') throw new Error('The payment provider answered an address that is not a web page.');
      announce(`Opening the payment page for ${fmt.money(amount.cents)}.`, 'info');
      location.assign(to.href);
    },
  });
  if (account && account.disabled) {
    submit.disabled = true;
    replace(result, h('p', { class: 'hint' }, 'This account is disabled: an operator must enable it before funds can be added.'));
  }
  return card('Add funds', {}, h('div', { class: 'card-body' }, form));
}

// autoTopUpCard shows and saves the account's auto top-up (GET and PUT
// .../autotopup). Saving replaces the settings, as PUT does; the card is
// saved by the next payment made on the payment page while it is on.
function autoTopUpCard(ctx, acct, s) {
  if (s.error) return card('Auto top-up', {}, h('div', { class: 'card-body' }, errorBox(s.error, 'Auto top-up could not be loaded')));
  const enabled = h('input', { type: 'checkbox', name: 'enabled' });
  const threshold = h('input', { type: 'text', class: 'input', name: 'threshold_usd', inputmode: 'decimal', autocomplete: 'off', placeholder: '5.00' });
  const amount = h('input', { type: 'text', class: 'input', name: 'amount_usd', inputmode: 'decimal', autocomplete: 'off', placeholder: '20.00' });
  const fields = {
    threshold: field({ label: 'When the balance falls below (USD)', input: threshold, prefix: '$' }),
    amount: field({ label: 'Add (USD)', input: amount, prefix: '$', hint: 'Between $5.00 and $1,000.00.' }),
  };
  const state = h('p', { class: 'stat-note', 'data-testid': 'autotopup-state' });
  const fill = (x) => {
    enabled.checked = !!x.enabled;
    threshold.value = x.threshold_cents ? (x.threshold_cents / 100).toFixed(2) : '';
    amount.value = x.amount_cents ? (x.amount_cents / 100).toFixed(2) : '';
    let text;
    if (!x.enabled) {
      text = x.failures >= x.max_failures && x.last_error
        ? `Off: turned off after ${x.failures} failed payments in a row (${x.last_error}).`
        : 'Off.';
    } else if (!x.payment_method_saved) {
      text = 'On, but no card is saved yet: the next payment made with “Add funds” saves its card for auto top-up.';
    } else {
      text = `On: when a charge leaves the balance below ${fmt.money(x.threshold_cents)}, the saved card is charged ${fmt.money(x.amount_cents)}.`;
      if (x.failures > 0) text += ` ${x.failures} of ${x.max_failures} payments in a row failed (${x.last_error}).`;
    }
    state.textContent = text;
  };
  fill(s);
  const readAmount = (input, x, required) => {
    const t = input.value.trim().replace(/^\$/, '').replace(/,/g, '');
    if (t === '' && !required) return null;
    if (!/^\d{1,7}(\.\d{1,2})?$/.test(t)) {
      x.setError('Enter an amount in dollars, like 5 or 12.50.');
      input.focus();
      return undefined;
    }
    return t;
  };
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save auto top-up');
  const result = h('div', { class: 'form-error-slot' });
  const form = h('form', { class: 'form', novalidate: true, 'data-testid': 'autotopup-form' },
    h('label', { class: 'check' }, enabled, ' Top up automatically with the saved card'),
    fields.threshold.el, fields.amount.el, result, h('div', { class: 'form-actions' }, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(result);
    for (const x of Object.values(fields)) x.setError('');
    const body = { enabled: enabled.checked };
    const t = readAmount(threshold, fields.threshold, enabled.checked);
    if (t === undefined) return;
    if (t !== null) body.threshold_usd = t;
    if (enabled.checked || amount.value.trim() !== '') {
      // The top-up bounds, as for Add funds.
      const a = fmt.parseTopUp(amount.value);
      if (a.error) {
        fields.amount.setError(a.error);
        amount.focus();
        return;
      }
      body.amount_usd = a.usd;
    }
    try {
      const fresh = await busy(submit, 'Saving…', () => ctx.client.put(`${acct}/autotopup`, body));
      if (!ctx.current()) return;
      fill(fresh);
      announce('Auto top-up saved');
    } catch (err) {
      if (ctx.current()) replace(result, errorBox(err, 'Auto top-up was not saved'));
    }
  });
  return card('Auto top-up', {}, h('div', { class: 'card-body' }, state, form));
}

const PROVIDER = { stripe: 'Stripe', generic: 'Payment' };

// receiptsCard lists the entries payments made: paid top-ups, refunds
// and lost disputes, with the provider's reference.
function receiptsCard(receipts) {
  if (receipts.error) return card('Receipts', {}, h('div', { class: 'card-body' }, errorBox(receipts.error, 'Receipts could not be loaded')));
  const rows = receipts.data || [];
  if (rows.length === 0) {
    return card('Receipts', {}, emptyState('No payments yet', 'Funds added through a payment, and their refunds, are listed here with the payment provider’s reference.'));
  }
  return card('Receipts', {},
    h('div', { class: 'table-wrap' }, h('table', { class: 'table', 'data-testid': 'receipts' },
      h('caption', { class: 'sr-only' }, 'Payments, refunds and disputes, newest first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Date'),
        h('th', { scope: 'col' }, 'Entry'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Reference'),
        h('th', { scope: 'col', class: 'num' }, 'Amount'))),
      h('tbody', {}, rows.map((e) => {
        const amount = Number(e.amount_cents ?? 0);
        return h('tr', {},
          h('td', {}, h('span', { class: 'nowrap' }, fmt.date(e.created_at)), h('span', { class: 'cell-sub' }, fmt.time(e.created_at))),
          h('td', {}, `${PROVIDER[e.provider] || e.provider || ''} ${(KIND[e.kind] || e.kind || '').toLowerCase()}`.trim()),
          h('td', { class: 'hide-narrow' }, h('code', { class: 'ref' }, e.reference || '')),
          h('td', { class: ['num', amount >= 0 ? 'positive' : null] }, `${amount > 0 ? '+' : ''}${fmt.money(amount)}`));
      })))));
}

function fundsNoteCard() {
  return card('Funds', {}, h('div', { class: 'card-body' },
    h('p', { class: 'stat-note', 'data-testid': 'funds-note' },
      'Funds are added to this balance by an operator of this gateway, which takes no payments online. Ask your operator to top up the account.')));
}

function topUpCard(ctx, acct, onDone) {
  const { form } = amountForm(ctx, {
    hint: 'Between $5.00 and $1,000.00.',
    action: 'Add funds',
    busyLabel: 'Adding…',
    failTitle: 'The top-up did not go through',
    request: (amount) => ctx.client.post(`${acct}/topups`, { usd: amount.usd }),
    done: (res, amount, input) => {
      input.value = '';
      onDone(res);
      announce(`Added ${fmt.money(amount.cents)}. The balance is now ${fmt.money(res.balance_cents)}.`);
    },
  });
  return card('Top up', {}, h('div', { class: 'card-body' }, form));
}

const METRICS = {
  cents: {
    title: 'Cost', format: (v) => fmt.moneyShort(v), total: (v) => fmt.money(v),
    value: (r) => Number(r.cost_cents ?? r.cents ?? 0),
  },
  requests: {
    title: 'Requests', format: (v) => fmt.numberShort(v), total: (v) => fmt.number(v),
    value: (r) => Number(r.requests ?? 0),
  },
  tokens: {
    title: 'Tokens', format: (v) => fmt.numberShort(v), total: (v) => fmt.number(v),
    value: (r) => Number(r.prompt_tokens ?? 0) + Number(r.completion_tokens ?? 0),
  },
};

function usageCard(usage, since, ctx) {
  if (usage.error) return card('Usage', {}, h('div', { class: 'card-body' }, errorBox(usage.error, 'Usage could not be loaded')));
  const byDay = new Map((usage.data || []).map((r) => [String(r.day ?? r.period ?? '').slice(0, 10), r]));
  const days = [];
  for (let i = 0; i < DAYS; i += 1) {
    const key = fmt.isoDay(new Date(since.getTime() + i * 86400000));
    days.push({ key, row: byDay.get(key) || {} });
  }

  const totals = {};
  for (const [k, m] of Object.entries(METRICS)) totals[k] = days.reduce((sum, d) => sum + m.value(d.row), 0);
  const summary = h('dl', { class: 'summary' },
    Object.entries(METRICS).map(([k, m]) => h('div', { class: 'summary-item' },
      h('dt', {}, m.title), h('dd', { 'data-testid': `usage-${k}` }, m.total(totals[k])))));

  const chartBox = h('div', { class: 'chart' });
  const tableBox = h('div', { class: 'table-wrap' });
  let metric = 'cents';
  let stop = () => {};
  const draw = () => {
    stop();
    const m = METRICS[metric];
    if (totals.requests === 0) {
      stop = () => {};
      replace(chartBox, emptyState('No usage in the last 30 days', 'Requests made with this account’s keys show up here as they finish.'));
    } else {
      stop = barChart(chartBox, {
        label: `${m.title} per day for the last ${DAYS} days; total ${m.total(totals[metric])}.`,
        format: m.format,
        points: days.map((d) => ({
          key: d.key, label: fmt.day(d.key), value: m.value(d.row),
          title: `${fmt.day(d.key)}: ${m.total(m.value(d.row))}`,
        })),
      });
    }
    replace(tableBox, dataTable(`Usage per day for the last ${DAYS} days`, [
      { title: 'Day', value: (d) => fmt.day(d.key) },
      { title: 'Requests', num: true, value: (d) => fmt.number(METRICS.requests.value(d.row)) },
      { title: 'Tokens', num: true, value: (d) => fmt.number(METRICS.tokens.value(d.row)) },
      { title: 'Cost', num: true, value: (d) => fmt.money(METRICS.cents.value(d.row)) },
    ], days.filter((d) => METRICS.requests.value(d.row) > 0).reverse()));
  };
  ctx.onCleanup(() => stop());

  const name = uid('metric');
  const toggle = h('fieldset', { class: 'segmented' },
    h('legend', { class: 'sr-only' }, 'Chart shows'),
    Object.entries(METRICS).map(([k, m]) => {
      const id = `${name}-${k}`;
      const radio = h('input', { type: 'radio', name, id, value: k, checked: k === metric, class: 'segmented-input' });
      radio.addEventListener('change', () => { metric = k; draw(); });
      return [radio, h('label', { for: id, class: 'segmented-label' }, m.title)];
    }));

  const section = card('Usage', { aside: toggle },
    h('div', { class: 'card-body' },
      h('p', { class: 'card-sub' }, `Last ${DAYS} days, by UTC day.`),
      summary,
      chartBox,
      totals.requests > 0
        ? h('details', { class: 'details' }, h('summary', {}, 'Show the numbers as a table'), tableBox)
        : null));
  // The chart measures its container, so draw once it is in the page.
  requestAnimationFrame(() => { if (ctx.current()) draw(); });
  return section;
}

const KIND = { topup: 'Top-up', charge: 'Usage charge', refund: 'Refund', adjustment: 'Adjustment' };

function ledgerCard(ledger) {
  if (ledger.error) return card('Recent activity', {}, h('div', { class: 'card-body' }, errorBox(ledger.error, 'Activity could not be loaded')));
  const rows = ledger.data || [];
  if (rows.length === 0) {
    return card('Recent activity', {}, emptyState('No activity yet', 'Top-ups and usage charges will be listed here.'));
  }
  return card('Recent activity', {},
    h('div', { class: 'table-wrap' }, h('table', { class: 'table' },
      h('caption', { class: 'sr-only' }, 'The latest ledger entries, newest first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Date'),
        h('th', { scope: 'col' }, 'Entry'),
        h('th', { scope: 'col', class: 'num' }, 'Amount'),
        h('th', { scope: 'col', class: 'num hide-narrow' }, 'Balance after'))),
      h('tbody', {}, rows.map((e) => {
        const amount = Number(e.amount_cents ?? 0);
        return h('tr', {},
          h('td', {}, h('span', { class: 'nowrap' }, fmt.date(e.created_at)), h('span', { class: 'cell-sub' }, fmt.time(e.created_at))),
          h('td', {}, KIND[e.kind] || e.kind || 'Entry', e.note ? h('span', { class: 'cell-sub hide-narrow' }, e.note) : null),
          h('td', { class: ['num', amount >= 0 ? 'positive' : null] }, `${amount > 0 ? '+' : ''}${fmt.money(amount)}`),
          h('td', { class: 'num hide-narrow' }, e.balance_after_cents === undefined ? '—' : fmt.money(e.balance_after_cents)));
      })))));
}
