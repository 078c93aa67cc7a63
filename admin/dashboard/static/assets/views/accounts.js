// Accounts (operators): create an account, with an optional first
// top-up, and list every account with its id, balance and status, with
// Disable and Enable.

import { path } from '../api.js';
import { h, replace } from '../dom.js';
import { announce, busy, card, confirm, emptyState, errorBox, field } from '../ui.js';
import * as fmt from '../format.js';

export async function accounts(body, ctx) {
  const list = await ctx.client.getAll('/accounts');
  if (!ctx.current()) return;
  const listBox = h('div');
  const reload = async () => {
    try {
      const fresh = await ctx.client.getAll('/accounts');
      if (ctx.current()) replace(listBox, accountList(ctx, fresh.data || [], reload));
    } catch (err) {
      if (ctx.current()) replace(listBox, errorBox(err, 'The accounts could not be loaded'));
    }
  };
  replace(listBox, accountList(ctx, list.data || [], reload));
  replace(body, createAccountCard(ctx, (created) => ctx.accountsChanged(created.name)), listBox);
}

// createAccountCard is the form that POSTs /admin/accounts.
export function createAccountCard(ctx, onCreated) {
  const name = h('input', { type: 'text', class: 'input', name: 'name', maxlength: 64, autocomplete: 'off', placeholder: 'acme', required: true });
  const nameField = field({ label: 'Account name', input: name, hint: '1 to 64 letters, digits or signs, without spaces.' });
  const usd = h('input', { type: 'text', inputmode: 'decimal', class: 'input input-amount', name: 'usd', autocomplete: 'off', placeholder: '0.00' });
  const usdField = field({ label: 'Starting balance (optional)', input: usd, hint: 'Empty for none, else $5.00 to $1,000.00.', prefix: '$' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create account');
  const result = h('div', { class: 'form-error-slot' });
  const form = h('form', { class: 'form', novalidate: true, 'data-testid': 'create-account' }, nameField.el, usdField.el, result,
    h('div', { class: 'form-actions' }, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(result);
    const value = name.value.trim();
    if (!/^[\x21-\x7e]{1,64}$/.test(value)) {
      nameField.setError('Enter 1 to 64 characters without spaces.');
      name.focus();
      return;
    }
    nameField.setError('');
    const req = { name: value };
    if (usd.value.trim() !== '') {
      const amount = fmt.parseTopUp(usd.value);
      if (amount.error) {
        usdField.setError(amount.error);
        usd.focus();
        return;
      }
      req.usd = amount.usd;
    }
    usdField.setError('');
    try {
      const created = await busy(submit, 'Creating…', () => ctx.client.post('/accounts', req));
      if (!ctx.current()) return;
      name.value = '';
      usd.value = '';
      announce(`Account ${created.name} created`);
      await onCreated(created);
    } catch (err) {
      if (!ctx.current()) return;
      replace(result, errorBox(err, 'The account was not created'));
      name.focus();
    }
  });
  return card('Create an account', {},
    h('div', { class: 'card-body' },
      h('p', { class: 'card-sub' }, 'An account holds a balance and API keys. Its owner signs in with a token naming it (switchyard admin token --account NAME).'),
      form));
}

function accountList(ctx, rows, reload) {
  if (rows.length === 0) {
    return card('Accounts', {}, emptyState('No accounts yet', 'Create the first one above.'));
  }
  return card('Accounts', { aside: h('span', { class: 'muted small' }, `${rows.length}`) },
    h('div', { class: 'table-wrap' }, h('table', { class: 'table', 'data-testid': 'accounts' },
      h('caption', { class: 'sr-only' }, 'Every account, by name'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Name'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Id'),
        h('th', { scope: 'col', class: 'num' }, 'Balance'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
      h('tbody', {}, rows.map((a) => {
        const button = h('button', {
          type: 'button', class: a.disabled ? 'btn btn-secondary btn-small' : 'btn btn-danger-ghost btn-small',
          'aria-label': `${a.disabled ? 'Enable' : 'Disable'} account ${a.name}`,
        }, a.disabled ? 'Enable' : 'Disable');
        button.addEventListener('click', async () => {
          if (!a.disabled) {
            const ok = await confirm({
              title: `Disable ${a.name}?`,
              body: 'Its API keys are refused at once, on every gateway node. Its balance, keys and history are kept, and enabling it makes the keys work again.',
              action: 'Disable account',
            });
            if (!ok) return;
          }
          try {
            await busy(button, a.disabled ? 'Enabling…' : 'Disabling…',
              () => ctx.client.post(`${path('accounts', a.name)}/${a.disabled ? 'enable' : 'disable'}`));
          } catch (err) {
            if (ctx.current()) announce(`Not changed: ${err.message}`, 'error');
            return;
          }
          if (!ctx.current()) return;
          announce(`Account ${a.name} ${a.disabled ? 'enabled' : 'disabled'}`);
          await reload();
        });
        return h('tr', { class: a.disabled ? 'row-muted' : null, 'data-account': a.name },
          h('td', {}, a.name),
          h('td', { class: 'hide-narrow' }, h('code', { class: 'hint-code' }, a.id || '')),
          h('td', { class: 'num' }, fmt.money(a.balance_cents ?? 0)),
          h('td', {}, a.disabled
            ? h('span', { class: 'badge badge-neutral', title: a.disabled_at ? `Disabled ${fmt.dateTime(a.disabled_at)}` : '' }, 'Disabled')
            : h('span', { class: 'badge badge-success' }, 'Enabled')),
          h('td', { class: 'actions' }, button));
      })))));
}
