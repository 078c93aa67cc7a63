// Settings → Alerts: the account's balance and key spend alerts (GET and
// PUT .../alerts), whether the balance is below the threshold now, the
// webhook's signing secret, and the latest deliveries.

import { path } from '../api.js';
import { h, replace } from '../dom.js';
import { announce, busy, card, copyText, emptyState, errorBox, field } from '../ui.js';
import * as fmt from '../format.js';

export async function alerts(body, ctx) {
  const base = path('accounts', ctx.account, 'alerts');
  const [settings, log] = await Promise.all([
    ctx.client.get(base),
    ctx.client.get(`${base}/deliveries?limit=20`).catch((err) => ({ error: err })),
  ]);
  if (!ctx.current()) return;

  const statusBox = h('div');
  const logBox = h('div');
  const showStatus = (s) => replace(statusBox, statusCard(s));
  const showLog = (l) => replace(logBox, l.error ? errorBox(l.error, 'The delivery log could not be loaded') : deliveryCard(l.data || []));
  showStatus(settings);
  showLog(log);
  replace(body, h('div', { class: 'grid grid-2 grid-top' }, settingsCard(ctx, base, settings, showStatus), statusBox), logBox);
}

// settingsCard is the form. Saving replaces every setting, as PUT does: an
// empty field turns its alert off.
function settingsCard(ctx, base, s, saved) {
  const below = h('input', { type: 'text', class: 'input', name: 'below_usd', inputmode: 'decimal', autocomplete: 'off', placeholder: 'off' });
  const percent = h('input', { type: 'number', class: 'input', name: 'below_percent', min: 1, max: 100, step: 1, placeholder: 'off' });
  const keySpend = h('input', { type: 'number', class: 'input', name: 'key_spend_percent', min: 1, max: 100, step: 1, placeholder: 'off' });
  const webhook = h('input', { type: 'url', class: 'input', name: 'webhook_url', autocomplete: 'off', placeholder: 'https://' });
  const email = h('input', { type: 'email', class: 'input', name: 'email', autocomplete: 'email', placeholder: 'billing@example.com' });
  const rotate = h('input', { type: 'checkbox', name: 'rotate_secret' });
  const noEmail = !(ctx.me && ctx.me.email_alerts);
  if (noEmail && !s.email) email.disabled = true;
  const fields = {
    below: field({ label: 'Balance below (USD)', input: below, prefix: '$', hint: 'Alert when the balance falls below this amount. Empty: no amount threshold.' }),
    percent: field({ label: 'Balance below share of the latest top-up (%)', input: percent, hint: '1 to 100. With an amount too, the larger threshold applies.' }),
    keySpend: field({ label: 'Key spend alert (% of its spend limit)', input: keySpend, hint: 'Alert when a key with a spend limit has spent this share of it in its day or month. Empty: off.' }),
    webhook: field({ label: 'Webhook URL', input: webhook, hint: 'Receives a signed POST per alert. Empty: no webhook.' }),
    email: field({
      label: 'Email', input: email,
      hint: noEmail ? 'This gateway sends no email: no SMTP server is configured.' : 'Receives a message per alert. Empty: no email.',
    }),
  };
  const fill = (x) => {
    below.value = x.below_cents === null || x.below_cents === undefined ? '' : (x.below_cents / 100).toFixed(2);
    percent.value = x.below_percent ? String(x.below_percent) : '';
    keySpend.value = x.key_spend_percent ? String(x.key_spend_percent) : '';
    webhook.value = x.webhook_url || '';
    email.value = x.email || '';
    rotate.checked = false;
  };
  fill(s);

  const read = () => {
    for (const x of Object.values(fields)) x.setError('');
    const out = {
      below_usd: null, below_percent: null, key_spend_percent: null,
      webhook_url: webhook.value.trim(), email: email.value.trim(), rotate_secret: rotate.checked,
    };
    if (below.value.trim() !== '') {
      const m = /^\$?(\d{1,7})(?:\.(\d{1,2}))?$/.exec(below.value.trim());
      if (!m) {
        fields.below.setError('Enter an amount in dollars, like 10 or 12.50, or leave it empty.');
        below.focus();
        return null;
      }
      out.below_usd = below.value.trim().replace(/^\$/, '');
    }
    for (const [name, x, input] of [['below_percent', fields.percent, percent], ['key_spend_percent', fields.keySpend, keySpend]]) {
      if (input.value.trim() === '') continue;
      const n = Number(input.value);
      if (!Number.isInteger(n) || n < 1 || n > 100) {
        x.setError('Enter a whole number from 1 to 100, or leave it empty.');
        input.focus();
        return null;
      }
      out[name] = n;
    }
    return out;
  };

  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save alerts');
  const result = h('div', { class: 'form-error-slot' });
  const form = h('form', { class: 'form', novalidate: true, 'data-testid': 'alerts-form' },
    fields.below.el, fields.percent.el, fields.keySpend.el, fields.webhook.el,
    h('label', { class: 'check' }, rotate, ' Make a new webhook signing secret'),
    fields.email.el, result, h('div', { class: 'form-actions' }, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(result);
    const body = read();
    if (!body) return;
    try {
      const fresh = await busy(submit, 'Saving…', () => ctx.client.put(base, body));
      if (!ctx.current()) return;
      fill(fresh);
      saved(fresh);
      announce('Alert settings saved');
    } catch (err) {
      if (ctx.current()) replace(result, errorBox(err, 'The alert settings were not saved'));
    }
  });
  return card('Alert settings', {}, h('div', { class: 'card-body' },
    h('p', { class: 'card-sub' }, 'An alert is sent once when the balance falls below the threshold, and again only after a top-up has taken it back above. Saving replaces every setting.'),
    form));
}

// statusCard says what is in force: the threshold, whether the balance
// is below it, and the webhook's signing secret.
function statusCard(s) {
  const rows = [
    ['Threshold in force', s.threshold_cents === null || s.threshold_cents === undefined ? 'None' : fmt.money(s.threshold_cents)],
    // The store marks the alert fired when a charge crosses the
    // threshold and re-arms it when a top-up (or saving) does.
    ['Balance alert', s.threshold_cents === null || s.threshold_cents === undefined ? 'Off'
      : (s.below ? `Sent ${fmt.dateTime(s.fired_at)}; armed again once a top-up lifts the balance to the threshold`
        : 'Armed: the next charge that leaves the balance below the threshold sends it')],
    ['Key spend alert', s.key_spend_percent ? `At ${s.key_spend_percent}% of a key’s spend limit` : 'Off'],
    ['Sent to', [s.webhook_url ? 'webhook' : null, s.email ? s.email : null].filter(Boolean).join(' and ') || 'Nowhere'],
  ];
  let secret = null;
  if (s.webhook_secret) {
    const input = h('input', {
      id: 'webhook-secret', type: 'text', class: 'input input-mono', readonly: true, value: s.webhook_secret,
      spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'webhook-secret-hint',
    });
    input.addEventListener('focus', () => input.select());
    const copy = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Copy');
    copy.addEventListener('click', async () => {
      if (await copyText(s.webhook_secret, input)) announce('Signing secret copied to the clipboard');
      else announce('The browser did not allow copying: the secret is selected, press Ctrl+C or ⌘C.', 'info');
    });
    secret = h('div', { class: 'field' },
      h('label', { for: 'webhook-secret', class: 'label' }, 'Webhook signing secret'),
      h('div', { class: 'key-row' }, input, copy),
      h('p', { id: 'webhook-secret-hint', class: 'hint' }, 'Check the Switchyard-Signature header of each webhook with it (docs/accounts.md, “Delivery”).'));
  }
  return card('Status', {}, h('div', { class: 'card-body' },
    h('dl', { class: 'summary summary-stack', 'data-testid': 'alerts-status' },
      rows.map(([k, v]) => h('div', { class: 'summary-item' }, h('dt', {}, k), h('dd', {}, v)))),
    secret));
}

function deliveryCard(rows) {
  if (rows.length === 0) {
    return card('Latest alerts', {}, emptyState('No alerts sent yet', 'Alerts appear here with their delivery status once the balance or a key’s spend crosses a threshold.'));
  }
  return card('Latest alerts', {},
    h('div', { class: 'table-wrap' }, h('table', { class: 'table' },
      h('caption', { class: 'sr-only' }, 'The latest alert deliveries of this account, newest first.'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'When'),
        h('th', { scope: 'col' }, 'Alert'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Channel'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Attempts'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Last error'))),
      h('tbody', {}, rows.map((d) => h('tr', {},
        h('td', { class: 'nowrap' }, fmt.dateTime(d.created_at)),
        h('td', {}, d.type === 'key.spend_limit_near'
          ? `Key ${d.key_label || d.key_id} at ${fmt.money(d.spend_cents)} of ${fmt.money(d.limit_cents)}/${d.spend_period}`
          : `Balance ${fmt.money(d.balance_cents)} below ${fmt.money(d.threshold_cents)}`),
        h('td', { class: 'hide-narrow' }, d.channel),
        h('td', {}, h('span', {
          class: ['badge', d.status === 'delivered' ? 'badge-success' : d.status === 'failed' ? 'badge-danger' : 'badge-neutral'],
        }, d.status)),
        h('td', { class: 'hide-narrow' }, String(d.attempts)),
        h('td', { class: 'hide-narrow small' }, d.last_error || h('span', { class: 'muted' }, '–'))))))));
}
