// Files: the account's uploaded and generated files, with delete.

import { path } from '../api.js';
import { h, replace } from '../dom.js';
import { announce, busy, card, confirm, emptyState } from '../ui.js';
import * as fmt from '../format.js';

export async function files(body, ctx) {
  const base = path('accounts', ctx.account, 'files');
  const render = (rows, more) => {
    const total = rows.reduce((sum, f) => sum + Number(f.bytes || 0), 0);
    const aside = h('span', { class: 'muted small' }, `${rows.length} ${rows.length === 1 ? 'file' : 'files'} · ${fmt.bytes(total)}`);
    if (rows.length === 0) {
      replace(body, card('Files', { aside }, emptyState('No files',
        'Files uploaded through the Files API (/v3/files) and files the assistant creates appear here.')));
      return;
    }
    const table = h('table', { class: 'table' },
      h('caption', { class: 'sr-only' }, 'Files of this account, newest first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Name'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Purpose'),
        h('th', { scope: 'col', class: 'num' }, 'Size'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Uploaded'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Expires'),
        h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
      h('tbody', {}, rows.map((f) => {
        const button = h('button', { type: 'button', class: 'btn btn-danger-ghost btn-small', 'aria-label': `Delete ${f.filename}` }, 'Delete');
        button.addEventListener('click', () => remove(f, button));
        const get = h('button', { type: 'button', class: 'btn btn-secondary btn-small', 'aria-label': `Download ${f.filename}` }, 'Download');
        get.addEventListener('click', () => download(f, get));
        return h('tr', { 'data-file-id': f.id },
          h('td', { class: 'cell-name' }, h('span', { class: 'file-name' }, f.filename), h('span', { class: 'file-id muted' }, f.id)),
          h('td', { class: 'hide-narrow' }, h('span', { class: 'badge badge-neutral' }, f.purpose || '—')),
          h('td', { class: 'num nowrap' }, fmt.bytes(f.bytes)),
          h('td', { class: 'hide-narrow nowrap' }, fmt.dateTime(f.created_at)),
          h('td', { class: 'hide-narrow nowrap' }, f.expires_at ? fmt.date(f.expires_at) : 'Never'),
          h('td', { class: 'actions' }, get, button));
      })));
    const c = card('Files', { aside }, h('div', { class: 'table-wrap' }, table),
      more ? h('p', { class: 'card-foot muted small' }, `Showing the newest ${rows.length} files.`) : null);
    replace(body, c);
    return c;
  };
  // The API wants the token in a header, so the bytes are fetched here
  // and handed to the browser as a download of a local object URL.
  const download = (f, button) => busy(button, 'Downloading…', async () => {
    try {
      const blob = await ctx.client.getBlob(`${base}/${encodeURIComponent(f.id)}/content`);
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: f.filename, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      announce(`Downloaded ${f.filename}`);
    } catch (err) {
      if (ctx.current()) announce(`The download failed: ${err.message}`, 'error');
    }
  });
  const remove = async (f, button) => {
    const ok = await confirm({
      title: 'Delete this file?',
      body: `“${f.filename}” (${fmt.bytes(f.bytes)}) is deleted for good. Conversations that refer to it can no longer read it.`,
      action: 'Delete file',
    });
    if (!ok) return;
    try {
      await busy(button, 'Deleting…', () => ctx.client.del(`${base}/${encodeURIComponent(f.id)}`));
    } catch (err) {
      if (ctx.current()) announce(`The file was not deleted: ${err.message}`, 'error');
      return;
    }
    if (!ctx.current()) return;
    announce(`Deleted ${f.filename}`);
    await load();
    ctx.heading.focus();
  };
  const load = async () => {
    const res = await ctx.client.get(base);
    if (ctx.current()) render(res.data || [], Boolean(res.has_more));
  };
  await load();
}
