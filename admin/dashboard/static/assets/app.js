// The dashboard: sign-in with an admin token, the layout, the account
// picker and the router. Views live in views/ and get a context with the
// API client and the selected account.

import { Client, claims } from './api.js';
import { h, replace, uid } from './dom.js';
import { announce, errorBox, loading } from './ui.js';
import { overview } from './views/overview.js';
import { keys } from './views/keys.js';
import { files } from './views/files.js';
import { activity, usage } from './views/activity.js';
import { accounts, createAccountCard } from './views/accounts.js';
import { alerts } from './views/alerts.js';

const TOKEN = 'switchyard.token';
const ACCOUNT = 'switchyard.account';

const routes = {
  '/overview': { title: 'Overview', view: overview },
  '/activity': { title: 'Activity', view: activity },
  '/usage': { title: 'Usage', view: usage },
  '/files': { title: 'Files', view: files },
  '/settings/api': { title: 'Manage API', section: 'Settings', view: keys },
  '/settings/alerts': { title: 'Alerts', section: 'Settings', view: alerts },
  '/accounts': { title: 'Accounts', view: accounts, operator: true },
};
const DEFAULT_ROUTE = '/overview';

const app = document.getElementById('app');
const state = { client: null, me: null, accounts: [], account: '', expiryTimer: 0, viewSeq: 0, cleanup: null };

function route() {
  const r = location.hash.replace(/^#/, '');
  return routes[r] && (!routes[r].operator || isOperator()) ? r : DEFAULT_ROUTE;
}

// --- sign-in -------------------------------------------------------------

function signOut(message) {
  sessionStorage.removeItem(TOKEN);
  sessionStorage.removeItem(ACCOUNT);
  clearTimeout(state.expiryTimer);
  if (state.cleanup) state.cleanup();
  Object.assign(state, { client: null, me: null, accounts: [], account: '', cleanup: null });
  renderSignIn(message);
}

function renderSignIn(notice) {
  document.title = 'Sign in · Switchyard';
  const input = h('textarea', {
    id: 'token', name: 'token', class: 'input input-mono', rows: 4, required: true,
    autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false',
    'aria-describedby': 'token-hint',
    placeholder: 'eyJhbGciOi…',
  });
  const errorSlot = h('div', { class: 'form-error-slot' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  const form = h('form', { class: 'signin-form', novalidate: true },
    h('div', { class: 'field' },
      h('label', { for: 'token', class: 'label' }, 'Admin token'),
      input,
      h('p', { id: 'token-hint', class: 'hint' },
        'Paste an admin token: one your operator minted with ', h('code', {}, 'switchyard admin token'), ', or one your sign-in service issued. It is kept in this browser tab only and forgotten when you close it.')),
    errorSlot,
    submit);
  // A token is one line: Enter signs in, as in a single-line field.
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const token = input.value.trim().replace(/^Bearer\s+/i, '');
    replace(errorSlot);
    if (!token) {
      replace(errorSlot, errorBox({ message: 'Paste a token first.' }, 'No token'));
      input.focus();
      return;
    }
    if (/^sk-/.test(token)) {
      // An API key calls the model routes; the dashboard wants an admin token.
      replace(errorSlot, errorBox({ message: 'That is an API key (sk-…), which calls the model API. The dashboard signs in with an admin token: ask your operator for one (switchyard admin token --account NAME).' }, 'Not an admin token'));
      input.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    try {
      await start(token, true);
    } catch (err) {
      submit.disabled = false;
      submit.textContent = 'Sign in';
      replace(errorSlot, errorBox(err, 'Sign-in failed'));
      input.focus();
    }
  });
  replace(app,
    h('main', { id: 'main', class: 'signin', tabindex: '-1' },
      h('div', { class: 'signin-card' },
        h('div', { class: 'brand brand-large' }, h('img', { src: 'assets/icon.svg', alt: '', width: 36, height: 36 }), h('span', {}, 'Switchyard')),
        h('h1', { class: 'signin-title' }, 'Sign in to the dashboard'),
        h('p', { class: 'signin-lead' }, 'Manage API keys, balance, usage and files.'),
        notice ? h('div', { class: 'alert alert-info', role: 'status' }, h('p', {}, notice)) : null,
        form)));
  app.removeAttribute('aria-busy');
  input.focus();
}

// start checks a token with /admin/me and opens the dashboard with it.
async function start(token, fresh) {
  const client = new Client(token, (err) => {
    if (state.client === client) signOut(`You were signed out: ${err.message}`);
  });
  const me = await client.get('/me');
  let accounts = [];
  if (me.operator || me.role === 'operator') {
    const res = await client.getAll('/accounts');
    accounts = (res.data || []).map((a) => a.name);
  } else {
    accounts = (me.accounts || []).map((a) => (typeof a === 'string' ? a : a.name));
  }
  sessionStorage.setItem(TOKEN, token);
  const saved = sessionStorage.getItem(ACCOUNT);
  Object.assign(state, { client, me, accounts, account: accounts.includes(saved) ? saved : accounts[0] || '' });
  watchExpiry(token);
  renderShell();
  if (fresh) announce(`Signed in as ${me.subject || 'operator'}`);
}

function watchExpiry(token) {
  clearTimeout(state.expiryTimer);
  const c = claims(token);
  if (!c || typeof c.exp !== 'number') return;
  const ms = c.exp * 1000 - Date.now();
  if (ms <= 0) return;
  // setTimeout holds at most about 24.8 days.
  if (ms < 2 ** 31 - 1) state.expiryTimer = setTimeout(() => signOut('Your token expired. Sign in with a new one.'), ms);
}

// --- the signed-in layout ------------------------------------------------

function isOperator() {
  return Boolean(state.me && (state.me.operator || state.me.role === 'operator'));
}

function accountPicker() {
  if (!isOperator() && state.accounts.length <= 1) {
    return state.account ? h('div', { class: 'account-static' }, h('span', { class: 'muted' }, 'Account'), h('strong', {}, state.account)) : null;
  }
  const id = uid('account');
  const select = h('select', { id, class: 'select' },
    state.accounts.length === 0 ? h('option', { value: '' }, 'No accounts') : null,
    state.accounts.map((a) => h('option', { value: a, selected: a === state.account }, a)));
  select.addEventListener('change', () => {
    state.account = select.value;
    sessionStorage.setItem(ACCOUNT, state.account);
    announce(`Showing account ${state.account}`, 'info');
    renderView(false);
  });
  return h('div', { class: 'account-picker' }, h('label', { for: id, class: 'picker-label' }, 'Account'), select);
}

function nav() {
  const link = (r, text) => h('a', { href: `#${r}`, class: 'nav-link', 'data-route': r }, text);
  return h('nav', { class: 'sidebar', 'aria-label': 'Dashboard' },
    h('ul', { class: 'nav-list' },
      h('li', {}, link('/overview', 'Overview')),
      h('li', {}, link('/activity', 'Activity')),
      h('li', {}, link('/usage', 'Usage')),
      h('li', {}, link('/files', 'Files')),
      isOperator() ? h('li', {}, link('/accounts', 'Accounts')) : null,
      h('li', { class: 'nav-group' },
        h('span', { class: 'nav-group-title', id: 'nav-settings' }, 'Settings'),
        h('ul', { class: 'nav-sublist', 'aria-labelledby': 'nav-settings' },
          h('li', {}, link('/settings/api', 'Manage API')),
          h('li', {}, link('/settings/alerts', 'Alerts'))))));
}

function renderShell() {
  const me = state.me;
  const who = h('div', { class: 'who' },
    h('span', { class: 'who-name', title: me.subject || '' }, me.subject || 'signed in'),
    h('span', { class: ['badge', isOperator() ? 'badge-accent' : 'badge-neutral'] }, isOperator() ? 'Operator' : 'Account owner'));
  const signOutBtn = h('button', { type: 'button', class: 'btn btn-secondary btn-small' }, 'Sign out');
  signOutBtn.addEventListener('click', () => signOut('You signed out.'));
  replace(app,
    h('header', { class: 'topbar' },
      h('a', { class: 'brand', href: '#/overview' }, h('img', { src: 'assets/icon.svg', alt: '', width: 28, height: 28 }), h('span', {}, 'Switchyard')),
      accountPicker(),
      h('div', { class: 'topbar-end' }, who, signOutBtn)),
    h('div', { class: 'layout' },
      nav(),
      h('main', { id: 'main', class: 'main', tabindex: '-1' })));
  app.removeAttribute('aria-busy');
  renderView(true);
}

// renderView draws the current route's view. focus moves to the view's
// heading on navigation, so keyboard and screen-reader users land on the
// new content instead of at the top of the page.
async function renderView(focus) {
  const main = document.getElementById('main');
  if (!main || !state.client) return;
  if (state.cleanup) { state.cleanup(); state.cleanup = null; }
  const r = route();
  const def = routes[r];
  document.title = `${def.title} · Switchyard`;
  for (const a of document.querySelectorAll('.nav-link')) {
    if (a.dataset.route === r) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const seq = ++state.viewSeq;
  const heading = h('h1', { class: 'page-title', tabindex: '-1' }, def.title);
  const header = h('div', { class: 'page-head' },
    def.section ? h('p', { class: 'eyebrow' }, def.section) : null,
    heading,
    state.account && !def.operator ? h('p', { class: 'page-sub' }, `Account `, h('strong', {}, state.account)) : null);
  const body = h('div', { class: 'page-body' });
  replace(main, header, body);
  if (focus) heading.focus();
  if (!state.account && !(def.operator && isOperator())) {
    if (isOperator()) {
      // What works from here: the form below, or the same from the
      // command line.
      replace(body, h('div', { class: 'card', 'data-testid': 'no-accounts' }, h('div', { class: 'empty' },
        h('p', { class: 'empty-title' }, 'No accounts yet'),
        h('p', { class: 'empty-text' }, 'Create the first account here. From the command line, switchyard accounts create --account NAME --usd 10 does the same, and switchyard keys create --account NAME gives it a key.'))),
      createAccountCard({ client: state.client, current: () => seq === state.viewSeq }, (created) => reloadAccounts(created.name)));
    } else {
      replace(body, h('div', { class: 'card' }, h('div', { class: 'empty' },
        h('p', { class: 'empty-title' }, 'No accounts yet'),
        h('p', { class: 'empty-text' }, 'Your token does not name any account that exists. Ask an operator to create it or to give you access.'))));
    }
    return;
  }
  replace(body, loading());
  const ctx = {
    client: state.client,
    me: state.me,
    account: state.account,
    heading,
    // current is false once the user has moved on, so late answers of a
    // view that is gone are dropped.
    current: () => seq === state.viewSeq,
    onCleanup: (fn) => { state.cleanup = fn; },
    // accountsChanged refreshes the account picker, selecting name.
    accountsChanged: (name) => reloadAccounts(name),
  };
  try {
    await def.view(body, ctx);
  } catch (err) {
    if (ctx.current() && state.client) replace(body, errorBox(err, 'This page could not be loaded'));
  }
}

// reloadAccounts refreshes the operator's account picker after an account
// was created, selecting name.
async function reloadAccounts(name) {
  const res = await state.client.getAll('/accounts');
  state.accounts = (res.data || []).map((a) => a.name);
  if (name && state.accounts.includes(name)) {
    state.account = name;
    sessionStorage.setItem(ACCOUNT, name);
  }
  renderShell();
}

window.addEventListener('hashchange', () => {
  if (!location.hash.startsWith('#/')) return;
  if (state.client) renderView(true);
});

// The skip link would otherwise change the hash the router reads.
document.getElementById('skip-link').addEventListener('click', (ev) => {
  ev.preventDefault();
  const main = document.getElementById('main');
  if (main) main.focus();
});

async function boot() {
  const token = sessionStorage.getItem(TOKEN);
  if (!token) {
    renderSignIn();
    return;
  }
  replace(app, loading('Signing in…'));
  try {
    await start(token, false);
  } catch (err) {
    signOut(err.status === 401 ? `You were signed out: ${err.message}` : `Could not sign in: ${err.message}`);
  }
}

boot();
