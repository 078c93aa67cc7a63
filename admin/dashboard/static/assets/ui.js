// Shared pieces of the page: status announcements, error boxes, the
// confirmation dialog, empty states, cards and busy buttons.

import { h, replace, uid } from './dom.js';

let toastTimer = 0;

// announce shows a short status message and reads it to screen readers
// (the toast is an aria-live region present from the first paint).
export function announce(message, kind = 'success') {
  const toast = document.getElementById('toast');
  clearTimeout(toastTimer);
  toast.className = `toast toast-${kind} toast-visible`;
  // Emptying first makes a repeated message be announced again.
  replace(toast);
  requestAnimationFrame(() => {
    replace(toast, h('span', { class: 'toast-icon', 'aria-hidden': 'true' }, kind === 'error' ? '!' : '✓'), h('span', {}, message));
  });
  toastTimer = setTimeout(() => { toast.className = 'toast'; replace(toast); }, 6000);
}

// errorBox renders an API error plainly: its message, then its code. A
// success toast still showing would contradict it, so it goes.
export function errorBox(err, title) {
  const toast = document.getElementById('toast');
  if (toast && toast.classList.contains('toast-success')) {
    clearTimeout(toastTimer);
    toast.className = 'toast';
    replace(toast);
  }
  const code = err && err.code ? err.code : '';
  return h('div', { class: 'alert alert-error', role: 'alert' },
    h('p', { class: 'alert-title' }, title || 'Something went wrong'),
    h('p', {}, err && err.message ? err.message : String(err)),
    code ? h('p', { class: 'alert-code' }, `Error code: ${code}${err.status ? ` (HTTP ${err.status})` : ''}`) : null);
}

export function emptyState(title, text, action) {
  return h('div', { class: 'empty' },
    h('div', { class: 'empty-art', 'aria-hidden': 'true' }),
    h('p', { class: 'empty-title' }, title),
    text ? h('p', { class: 'empty-text' }, text) : null,
    action || null);
}

export function card(title, props, ...children) {
  const headingId = uid('card');
  const head = title ? h('div', { class: 'card-head' },
    h('h2', { id: headingId, class: 'card-title' }, title),
    props && props.aside ? props.aside : null) : null;
  return h('section', { class: ['card', props && props.class], 'aria-labelledby': title ? headingId : null },
    head, ...children);
}

export function loading(text = 'Loading…') {
  return h('div', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
}

// busy disables a button while work runs and restores it after.
export async function busy(button, label, work) {
  const before = button.textContent;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = label;
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = before;
  }
}

// confirm asks in a modal dialog and resolves to true when the user
// confirms. The native dialog traps focus, closes on Escape and gives
// focus back to what had it.
export function confirm({ title, body, action, danger = true }) {
  return new Promise((resolve) => {
    const titleId = uid('dialog-title');
    const bodyId = uid('dialog-body');
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary', value: 'cancel' }, 'Cancel');
    const ok = h('button', { type: 'submit', class: ['btn', danger ? 'btn-danger' : 'btn-primary'], value: 'ok' }, action);
    const form = h('form', { method: 'dialog' },
      h('h2', { id: titleId, class: 'dialog-title' }, title),
      h('p', { id: bodyId, class: 'dialog-body' }, body),
      h('div', { class: 'dialog-actions' }, cancel, ok));
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': titleId, 'aria-describedby': bodyId }, form);
    cancel.addEventListener('click', () => dialog.close('cancel'));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    // The safe choice has focus, so Enter does not destroy anything.
    cancel.focus();
  });
}

// field builds a labelled input with its hint and error line wired up
// through aria-describedby.
export function field({ label, input, hint, prefix }) {
  const id = input.id || uid('field');
  input.id = id;
  const hintId = hint ? `${id}-hint` : null;
  const errorId = `${id}-error`;
  input.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
  const error = h('p', { id: errorId, class: 'field-error', hidden: true });
  const control = prefix ? h('div', { class: 'input-group' }, h('span', { class: 'input-prefix', 'aria-hidden': 'true' }, prefix), input) : input;
  const wrap = h('div', { class: 'field' },
    h('label', { for: id, class: 'label' }, label),
    control,
    hint ? h('p', { id: hintId, class: 'hint' }, hint) : null,
    error);
  return {
    el: wrap,
    setError(message) {
      if (message) {
        error.textContent = message;
        error.hidden = false;
        input.setAttribute('aria-invalid', 'true');
      } else {
        error.textContent = '';
        error.hidden = true;
        input.removeAttribute('aria-invalid');
      }
    },
  };
}

// copyText copies to the clipboard, falling back to selecting the text
// of input so that the user can press the copy shortcut.
export async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (input) {
      input.focus();
      input.select();
    }
    return false;
  }
}
