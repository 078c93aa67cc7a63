// Settings → Manage API: create a key (shown once) with optional limits
// (expiry, models, addresses, spend limit, rate, streams), list keys by
// their hints with their limits and last use, change a key's limits,
// revoke.

import { path } from '../api.js';
import { h, replace, uid } from '../dom.js';
import { announce, busy, card, confirm, copyText, emptyState, errorBox, field } from '../ui.js';
import * as fmt from '../format.js';

export async function keys(body, ctx) {
  const base = path('accounts', ctx.account, 'keys');
  const list = await ctx.client.getAll(base);
  if (!ctx.current()) return;

  const listBox = h('div');
  const reveal = h('div', { class: 'reveal-slot' });
  const listHeading = { el: null };

  const onEdit = (key) => editLimits(ctx, base, key, async () => {
    await reload();
    if (listHeading.el) listHeading.el.focus();
  });
  const renderList = (rows) => {
    const card_ = keyList(rows, onEdit, async (key, button) => {
      const ok = await confirm({
        title: 'Revoke this key?',
        body: `${key.label ? `“${key.label}” ` : ''}(${key.hint}) stops working at once, on every gateway node. Applications using it will get 401 errors. This cannot be undone.`,
        action: 'Revoke key',
      });
      if (!ok) return;
      try {
        await busy(button, 'Revoking…', () => ctx.client.del(`${base}/${encodeURIComponent(key.id)}`));
      } catch (err) {
        if (ctx.current()) announce(`The key was not revoked: ${err.message}`, 'error');
        return;
      }
      if (!ctx.current()) return;
      announce(`Key ${key.hint} revoked`);
      await reload();
      // The button is gone; put the user back at the list.
      if (listHeading.el) listHeading.el.focus();
    });
    listHeading.el = card_.querySelector('.card-title');
    listHeading.el.setAttribute('tabindex', '-1');
    replace(listBox, card_);
  };
  const reload = async () => {
    try {
      const fresh = await ctx.client.getAll(base);
      if (ctx.current()) renderList(fresh.data || []);
    } catch (err) {
      if (ctx.current()) replace(listBox, errorBox(err, 'The key list could not be loaded'));
    }
  };
  renderList(list.data || []);

  replace(body, createCard(ctx, base, reveal, reload), reveal, listBox);
}

function createCard(ctx, base, reveal, reload) {
  const input = h('input', { type: 'text', class: 'input', name: 'label', maxlength: 200, autocomplete: 'off', placeholder: 'e.g. production server' });
  const f = field({ label: 'Key name (optional)', input, hint: 'A note to tell your keys apart. Only you see it.' });
  const limits = limitFields();
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create new key');
  const result = h('div', { class: 'form-error-slot' });
  // The limits come after the button, so that a key with none is a name
  // and Enter away, as before.
  const form = h('form', { class: 'form form-inline', novalidate: true }, f.el, h('div', { class: 'form-actions' }, submit), limits.el);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(result);
    const controls = limits.read();
    if (!controls) return;
    try {
      const created = await busy(submit, 'Creating…', () => ctx.client.post(base, { label: input.value.trim(), ...controls }));
      if (!ctx.current()) return;
      input.value = '';
      limits.clear();
      showKey(reveal, created, () => { replace(reveal); submit.focus(); });
      announce('Key created. Copy it now: it will not be shown again.');
      await reload();
    } catch (err) {
      if (ctx.current()) {
        replace(result, errorBox(err, 'The key was not created'));
        input.focus();
      }
    }
  });
  return card('Create a new key', {},
    h('div', { class: 'card-body' },
      h('p', { class: 'card-sub' }, 'Keys authenticate requests to /v1 and /v3 and are charged to this account. An account can have 25 active keys and create 5 per hour.'),
      form, result));
}

// editLimits opens a dialog with key's limits, which replaces them all
// through the admin API when saved; an empty field lifts its limit. What
// the API refuses (a malformed address range, say) is shown in the
// dialog, which stays open to be corrected.
function editLimits(ctx, base, key, saved) {
  const limits = limitFields({ disclosure: false });
  limits.fill(key);
  const titleId = uid('dialog-title');
  const result = h('div', { class: 'form-error-slot' });
  const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save limits');
  const form = h('form', { class: 'form', novalidate: true },
    h('div', {},
      h('h2', { id: titleId, class: 'dialog-title' }, `Limits of ${key.label ? `“${key.label}”` : 'key'} ${key.hint}`),
      h('p', { class: 'dialog-body' }, 'Leave a field empty to lift its limit. The key’s next request is held to what you save, on every gateway node.')),
    limits.el, result,
    h('div', { class: 'dialog-actions' }, cancel, save));
  const dialog = h('dialog', { class: 'dialog dialog-wide', 'aria-labelledby': titleId, 'data-testid': 'key-limits-dialog' }, form);
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(result);
    const controls = limits.read();
    if (!controls) return;
    try {
      await busy(save, 'Saving…', () => ctx.client.put(`${base}/${encodeURIComponent(key.id)}/controls`, controls));
    } catch (err) {
      if (dialog.open) {
        replace(result, errorBox(err, 'The limits were not saved'));
        // A tall dialog scrolls: keep the message and the buttons in view.
        save.scrollIntoView({ block: 'nearest' });
      }
      return;
    }
    dialog.close();
    if (!ctx.current()) return;
    announce(`Limits of key ${key.hint} saved`);
    await saved();
  });
  document.body.append(dialog);
  dialog.showModal();
  limits.focus();
}

// limitFields are the optional controls of a key, in a disclosure (or,
// without one, as plain fields). read() returns them as the admin API
// takes them, or null after marking the first field it cannot read.
function limitFields({ disclosure = true } = {}) {
  const expires = h('input', { type: 'date', class: 'input', name: 'expires' });
  const models = h('input', { type: 'text', class: 'input', name: 'models', autocomplete: 'off', placeholder: 'e.g. gpt-4o-mini, svc-3' });
  const ips = h('input', { type: 'text', class: 'input', name: 'allowed_ips', autocomplete: 'off', placeholder: 'e.g. 203.0.113.0/24' });
  const spend = h('input', { type: 'text', class: 'input', name: 'spend_limit', inputmode: 'decimal', autocomplete: 'off', placeholder: 'no limit' });
  const period = h('select', { class: 'input', name: 'spend_period' },
    h('option', { value: 'day' }, 'per day (UTC)'), h('option', { value: 'month' }, 'per month (UTC)'));
  const rpm = h('input', { type: 'number', class: 'input', name: 'rate_per_minute', min: 0, step: 1, placeholder: 'account default' });
  const streams = h('input', { type: 'number', class: 'input', name: 'stream_limit', min: 0, step: 1, placeholder: 'account default' });
  const fields = {
    expires: field({ label: 'Expires on (optional)', input: expires, hint: 'The key stops working at midnight starting that day, in your time zone.' }),
    models: field({ label: 'Allowed models (optional)', input: models, hint: 'Comma-separated; other models are refused. Empty: any model.' }),
    ips: field({ label: 'Allowed addresses (optional)', input: ips, hint: 'Comma-separated addresses or ranges (CIDR). Empty: any address.' }),
    spend: field({ label: 'Spend limit (optional)', input: spend, prefix: '$', hint: 'The most this key may be charged per period; the account balance still applies.' }),
    period: field({ label: 'Spend limit period', input: period }),
    rpm: field({ label: 'Requests per minute (optional)', input: rpm, hint: 'Only lower than the account’s limit takes effect.' }),
    streams: field({ label: 'Concurrent streams (optional)', input: streams, hint: 'Only lower than the account’s limit takes effect.' }),
  };
  const list = (text) => text.split(',').map((x) => x.trim()).filter(Boolean);
  const whole = (el) => (el.value.trim() === '' ? 0 : Number(el.value));
  const el = disclosure
    ? h('details', { class: 'details' }, h('summary', {}, 'Limits (optional)'), ...Object.values(fields).map((x) => x.el))
    : h('div', { class: 'limit-fields' }, ...Object.values(fields).map((x) => x.el));
  // An expiry set to a time of day (keys set --expires 30d) is kept as
  // it is while its date is left alone: the field holds days only.
  let kept = null;
  return {
    el,
    clear() {
      for (const i of [expires, models, ips, spend, rpm, streams]) i.value = '';
      period.value = 'day';
      kept = null;
    },
    fill(k) {
      const day = k.expires_at ? fmt.localDay(k.expires_at) : '';
      kept = k.expires_at ? { day, at: k.expires_at } : null;
      expires.value = day;
      models.value = (k.models || []).join(', ');
      ips.value = (k.allowed_ips || []).join(', ');
      spend.value = k.spend_limit_cents ? (k.spend_limit_cents / 100).toFixed(2) : '';
      period.value = k.spend_period || 'day';
      rpm.value = k.rate_per_minute ? String(k.rate_per_minute) : '';
      streams.value = k.stream_limit ? String(k.stream_limit) : '';
    },
    focus() { expires.focus(); },
    read() {
      for (const x of Object.values(fields)) x.setError('');
      const out = {
        models: list(models.value), allowed_ips: list(ips.value),
        rate_per_minute: whole(rpm), stream_limit: whole(streams), spend_limit_cents: 0, spend_period: '',
        expires_at: expires.value ? fmt.startOfLocalDay(expires.value) : null,
      };
      if (kept && expires.value === kept.day) out.expires_at = kept.at;
      for (const [x, input] of [[fields.rpm, rpm], [fields.streams, streams]]) {
        const n = whole(input);
        if (!Number.isInteger(n) || n < 0) {
          el.open = true;
          x.setError('Enter a whole number, or leave it empty.');
          input.focus();
          return null;
        }
      }
      if (spend.value.trim() !== '') {
        const m = /^\$?(\d{1,9})(?:\.(\d{1,2}))?$/.exec(spend.value.trim());
        const cents = m ? Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0')) : 0;
        if (!cents) {
          el.open = true;
          fields.spend.setError('Enter an amount in dollars, like 1 or 12.50, or leave it empty.');
          spend.focus();
          return null;
        }
        out.spend_limit_cents = cents;
        out.spend_period = period.value;
      }
      return out;
    },
  };
}

// limitsText is a key's controls in a few words, or null for none.
export function limitsText(k) {
  const parts = [];
  if (k.expires_at) parts.push(`expires ${fmt.date(k.expires_at)}`);
  if (k.models && k.models.length) parts.push(`models: ${k.models.join(', ')}`);
  if (k.allowed_ips && k.allowed_ips.length) parts.push(`from ${k.allowed_ips.join(', ')}`);
  if (k.spend_limit_cents) parts.push(`${fmt.money(k.spend_limit_cents)}/${k.spend_period}`);
  if (k.rate_per_minute) parts.push(`${k.rate_per_minute}/min`);
  if (k.stream_limit) parts.push(`${k.stream_limit} stream${k.stream_limit === 1 ? '' : 's'}`);
  return parts.length ? parts.join(' · ') : null;
}

// showKey shows a new key, once: it is kept only in this element, which
// is emptied when the user is done or leaves the page.
function showKey(slot, created, done) {
  const input = h('input', {
    id: 'new-key', type: 'text', class: 'input input-mono input-key', readonly: true, value: created.key,
    'aria-describedby': 'new-key-warning', spellcheck: 'false', autocomplete: 'off',
  });
  input.addEventListener('focus', () => input.select());
  const copy = h('button', { type: 'button', class: 'btn btn-primary' }, 'Copy key');
  copy.addEventListener('click', async () => {
    if (await copyText(created.key, input)) {
      copy.textContent = 'Copied';
      announce('Key copied to the clipboard');
      setTimeout(() => { copy.textContent = 'Copy key'; }, 2500);
    } else {
      announce('The browser did not allow copying: the key is selected, press Ctrl+C or ⌘C.', 'info');
    }
  });
  const finished = h('button', { type: 'button', class: 'btn btn-secondary' }, 'I have saved it');
  finished.addEventListener('click', done);
  const origin = new URL('/', document.baseURI).origin;
  // Listing models costs nothing and works with any backend.
  const curl = `curl ${origin}/v1/models \\\n  -H "Authorization: Bearer ${created.key}"`;
  const heading = h('h2', { class: 'card-title', tabindex: '-1' }, 'Your new API key');
  replace(slot, h('section', { class: 'card card-reveal', 'aria-labelledby': 'reveal-title' },
    h('div', { class: 'card-head' }, heading),
    h('div', { class: 'card-body' },
      h('div', { id: 'new-key-warning', class: 'alert alert-warning' },
        h('p', { class: 'alert-title' }, 'Copy this key now: you will not see it again.'),
        h('p', {}, 'Switchyard keeps only a fingerprint of it. If you lose it, revoke it and create a new one.')),
      h('div', { class: 'field' },
        h('label', { for: 'new-key', class: 'label' }, created.label ? `Key “${created.label}” (${created.hint})` : `Key ${created.hint}`),
        h('div', { class: 'key-row' }, input, copy)),
      h('details', { class: 'details' },
        h('summary', {}, 'Try it with curl'),
        h('pre', { class: 'code' }, h('code', {}, curl))),
      h('div', { class: 'form-actions' }, finished))));
  heading.id = 'reveal-title';
  // The new key is what the user came for: take them to it, the card at
  // the top of the screen (focus alone would scroll it just into view, at
  // the foot, under the toast).
  heading.focus({ preventScroll: true });
  slot.firstElementChild.scrollIntoView({ block: 'start' });
}

function keyList(rows, onEdit, onRevoke) {
  const active = rows.filter((k) => !k.revoked_at).length;
  const aside = h('span', { class: 'muted small' }, `${active} active`);
  if (rows.length === 0) {
    return card('API keys', { aside }, emptyState('No API keys yet', 'Create a key above to start calling the API.'));
  }
  return card('API keys', { aside },
    h('div', { class: 'table-wrap' }, h('table', { class: 'table' },
      h('caption', { class: 'sr-only' }, 'API keys of this account. Only the last characters of each key are kept.'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Name'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Key'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Created'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Last used'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Limits'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
      h('tbody', {}, rows.map((k) => {
        const revoked = Boolean(k.revoked_at);
        const button = revoked ? null : h('button', {
          type: 'button', class: 'btn btn-danger-ghost btn-small', 'aria-label': `Revoke key ${k.label || k.hint}`,
        }, 'Revoke');
        if (button) button.addEventListener('click', () => onRevoke(k, button));
        const edit = revoked ? null : h('button', {
          type: 'button', class: 'btn btn-secondary btn-small', 'aria-label': `Edit limits of key ${k.label || k.hint}`,
        }, 'Edit limits');
        if (edit) edit.addEventListener('click', () => onEdit(k));
        return h('tr', { class: revoked ? 'row-muted' : null, 'data-key-id': k.id },
          h('td', {}, k.label || h('span', { class: 'muted' }, 'Unnamed'), h('span', { class: 'cell-sub show-narrow' }, h('code', { class: 'hint-code' }, k.hint))),
          h('td', { class: 'hide-narrow' }, h('code', { class: 'hint-code' }, k.hint)),
          h('td', { class: 'hide-narrow nowrap' }, fmt.date(k.created_at)),
          h('td', { class: 'hide-narrow nowrap', 'data-testid': 'key-last-used' }, k.last_used_at ? fmt.dateTime(k.last_used_at) : h('span', { class: 'muted' }, 'Never')),
          h('td', { class: 'small hide-narrow', 'data-testid': 'key-limits' }, limitsText(k) || h('span', { class: 'muted' }, 'None')),
          h('td', {}, revoked
            ? h('span', { class: 'badge badge-neutral', title: `Revoked ${fmt.dateTime(k.revoked_at)}` }, 'Revoked')
            : h('span', { class: 'badge badge-success' }, 'Active')),
          h('td', { class: 'actions' }, edit, button));
      })))));
}
