// Drives the dashboard in Debian's Chromium for e2e/dashboard_test.go,
// which starts the gateway, mints the token and reads this script's
// output. Protocol: one JSON object a line. This script writes
// {"event": ...} lines to stdout; after the "key" and "revoked" events it
// waits for one line on stdin from the test ({"filename": ...} after
// "key", anything after "revoked") before going on. It exits non-zero on
// the first failed check, with the reason on stderr and a screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an operator
// JWT), ACCOUNT (an existing account), ARTIFACTS (screenshot directory).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { check, launch } from './browser.mjs';

const { DASHBOARD_URL: url, ADMIN_TOKEN: token, ACCOUNT: account, ARTIFACTS: artifacts } = process.env;
if (!url || !token || !account || !artifacts) {
  console.error('DASHBOARD_URL, ADMIN_TOKEN, ACCOUNT and ARTIFACTS must be set');
  process.exit(2);
}
const origin = new URL(url).origin;
mkdirSync(artifacts, { recursive: true });

const rl = createInterface({ input: process.stdin });
const lines = rl[Symbol.asyncIterator]();
async function waitForTest() {
  const { value, done } = await lines.next();
  if (done) throw new Error('the test closed stdin');
  return JSON.parse(value);
}
function emit(event, data = {}) {
  process.stdout.write(`${JSON.stringify({ event, ...data })}\n`);
}


const problems = { csp: [], console: [], pageErrors: [], thirdParty: [] };
// Requests the script makes fail on purpose; Chromium logs each failed
// load as a console error, which is expected for these only.
const expectedFailures = new Set();

const { context, close } = await launch();
let page;
let step = 'start';
try {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  await context.exposeBinding('__reportCSP', (_source, v) => { problems.csp.push(v); });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__reportCSP(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  // Nothing may leave the gateway's origin: such requests are recorded
  // and refused.
  await context.route(() => true, (route) => {
    const u = route.request().url();
    if (u.startsWith(`${origin}/`) || u.startsWith('data:')) return route.continue();
    problems.thirdParty.push(u);
    return route.abort('blockedbyclient');
  });
  page = context.pages()[0] || await context.newPage();
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location().url || '';
    if (/^Failed to load resource/.test(m.text()) && expectedFailures.has(new URL(where, origin).pathname)) return;
    problems.console.push(`${m.text()} (${where})`);
  });
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));

  const shot = (name, opts = {}) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true, animations: 'disabled', ...opts });
  const activeText = () => page.evaluate(() => {
    const a = document.activeElement;
    return a ? `${a.tagName.toLowerCase()}|${a.getAttribute('name') || ''}|${(a.textContent || '').trim()}` : '';
  });
  const balanceCents = async () => Number(await page.getByTestId('balance').getAttribute('data-cents'));

  step = 'sign-in page';
  const res = await page.goto(url);
  check(res.ok(), `GET ${url}: ${res.status()}`);
  await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
  check(await page.evaluate(() => document.activeElement && document.activeElement.id) === 'token', 'the token field does not have focus on the sign-in page');
  await shot('01-sign-in');

  step = 'refused token';
  expectedFailures.add('/admin/me');
  await page.getByLabel('Admin token').fill('not-a-token');
  await page.keyboard.press('Enter');
  const refusal = page.getByRole('alert');
  await refusal.waitFor();
  const refusalText = await refusal.innerText();
  check(/refused/i.test(refusalText) && /invalid_token/.test(refusalText), `the refusal does not show the API's message and code: ${refusalText}`);
  await shot('02-sign-in-refused');

  step = 'an API key pasted as the token';
  await page.getByLabel('Admin token').fill('sk-NotAnAdminToken0123456789');
  await page.keyboard.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'Not an admin token' }).waitFor();
  check(/switchyard admin token/.test(await page.getByRole('alert').innerText()), 'the API-key hint does not say how to get an admin token');

  step = 'sign in with the keyboard';
  await page.getByLabel('Admin token').fill('');
  await page.getByLabel('Admin token').focus();
  await page.keyboard.insertText(token);
  await page.keyboard.press('Tab');
  check((await activeText()).startsWith('button||Sign in'), `Tab from the token goes to ${await activeText()}`);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  check(await page.evaluate(() => sessionStorage.getItem('switchyard.token')) === token, 'the token is not kept in sessionStorage');
  check(await page.evaluate(() => localStorage.length) === 0, 'something was written to localStorage');

  step = 'pick the account';
  await page.getByLabel('Account', { exact: true }).selectOption(account);
  await page.getByText(`Account ${account}`, { exact: true }).waitFor();
  await page.getByTestId('balance').waitFor();
  const start = await balanceCents();

  step = 'top-up refused in the page';
  let topupPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/topups')) topupPosts += 1; });
  const amount = page.getByLabel('Amount (USD)');
  const addFunds = page.getByRole('button', { name: 'Add funds' });
  for (const [typed, want] of [['2', 'The smallest top-up is $5.00.'], ['1000.01', 'The largest top-up is $1,000.00.'], ['ten', 'Enter the amount in dollars']]) {
    await amount.fill(typed);
    await addFunds.click();
    const msg = page.locator('.field-error:not([hidden])');
    await msg.waitFor();
    check((await msg.innerText()).includes(want), `top-up of ${typed}: "${await msg.innerText()}", want "${want}"`);
    check(await amount.getAttribute('aria-invalid') === 'true', `top-up of ${typed}: the field is not marked invalid`);
  }
  check(topupPosts === 0, `${topupPosts} top-ups were sent for amounts the page refuses`);
  await shot('03-top-up-invalid');

  step = 'top-up refused by the server';
  const topupPath = `/admin/accounts/${encodeURIComponent(account)}/topups`;
  expectedFailures.add(topupPath);
  for (const usd of ['4.99', '1000.01']) {
    const server = await page.evaluate(async ([p, t, u]) => {
      const r = await fetch(p, { method: 'POST', headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ usd: u }) });
      return { status: r.status, body: await r.json() };
    }, [topupPath, token, usd]);
    check(server.status === 400 && server.body.error && server.body.error.code, `the server took a top-up of $${usd}: ${JSON.stringify(server)}`);
  }

  step = 'top up $25';
  await amount.fill('25');
  await addFunds.click();
  await page.waitForFunction((want) => document.querySelector('[data-testid=balance]').dataset.cents === String(want), start + 2500);
  await page.getByRole('status').filter({ hasText: 'Added $25.00' }).waitFor();
  await page.getByRole('cell', { name: '+$25.00' }).first().waitFor();
  const afterTopUp = await balanceCents();
  emit('topped_up', { before_cents: start, after_cents: afterTopUp });

  step = 'keyboard: go to Manage API';
  // Back from the amount field: the navigation comes before the page.
  await amount.focus();
  let found = false;
  for (let i = 0; i < 40 && !found; i += 1) {
    await page.keyboard.press('Shift+Tab');
    found = (await activeText()) === 'a||Manage API';
  }
  check(found, 'Shift+Tab never reached the Manage API link');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Manage API', level: 1 }).waitFor();
  check((await activeText()) === 'h1||Manage API', `focus after navigating is on ${await activeText()}, not the page heading`);

  step = 'keyboard: create a key';
  // The form comes with the key list; Tab before it is drawn would leave
  // the page.
  await page.getByLabel('Key name (optional)').waitFor();
  await page.keyboard.press('Tab');
  check((await activeText()).startsWith('input|label|'), `Tab from the heading goes to ${await activeText()}`);
  await page.keyboard.type('browser test');
  await page.keyboard.press('Tab');
  check((await activeText()) === 'button||Create new key', `Tab from the key name goes to ${await activeText()}`);
  await page.keyboard.press('Enter');
  const keyField = page.getByLabel(/^Key “browser test”/);
  await keyField.waitFor();
  check((await activeText()) === 'h2||Your new API key', `focus after creating is on ${await activeText()}`);
  const key = await keyField.inputValue();
  check(/^sk-[0-9A-Za-z]{40,128}$/.test(key), `the page shows ${JSON.stringify(key)} as the key`);
  const warning = await page.locator('#new-key-warning').innerText();
  check(/you will not see it again/i.test(warning), `no clear warning next to the key: ${warning}`);
  const hint = (await page.getByRole('row').filter({ hasText: 'browser test' }).innerText());
  check(hint.includes(key.slice(-4)), `the key list does not show the new key's hint: ${hint}`);
  check(!hint.includes(key), 'the key list shows the whole key');

  step = 'keyboard: copy the key';
  await page.keyboard.press('Tab');
  check((await activeText()).startsWith('input|'), `Tab from the key heading goes to ${await activeText()}`);
  await page.keyboard.press('Tab');
  check((await activeText()) === 'button||Copy key', `Tab from the key goes to ${await activeText()}`);
  await page.keyboard.press('Enter');
  await page.getByRole('status').filter({ hasText: 'Key copied' }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  check(copied === key, 'the clipboard does not hold the key');
  await shot('04-key-created');

  step = 'the test uses the key';
  emit('key', { key });
  const { filename } = await waitForTest();

  step = 'the key is shown once';
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await page.reload();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  check(!(await page.content()).includes(key), 'the key is still in the page after a reload');

  step = 'balance and usage moved';
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByTestId('usage-requests').waitFor();
  const afterUse = await balanceCents();
  check(afterUse < afterTopUp, `the balance did not move after the request: ${afterTopUp} then ${afterUse}`);
  check((await page.getByTestId('usage-requests').innerText()) === '1', `usage shows ${await page.getByTestId('usage-requests').innerText()} requests, want 1`);
  const today = new Date().toISOString().slice(0, 10);
  const bar = page.locator(`.chart-bar[data-period="${today}"]`);
  await bar.waitFor();
  check(Number(await bar.getAttribute('data-value')) > 0, "today's bar in the usage chart is empty");
  await shot('05-overview');
  emit('used', { after_cents: afterUse });

  step = 'files: delete';
  await page.getByRole('link', { name: 'Files' }).click();
  const fileRow = page.getByRole('row').filter({ hasText: filename });
  await fileRow.waitFor();
  await shot('06-files');

  step = 'files: download';
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    fileRow.getByRole('button', { name: `Download ${filename}` }).click(),
  ]);
  check(download.suggestedFilename() === filename, `the download is named ${download.suggestedFilename()}`);
  const { readFileSync } = await import('node:fs');
  const got = readFileSync(await download.path(), 'utf8');
  check(got === 'notes for the dashboard test\n', `the downloaded file holds ${JSON.stringify(got)}`);
  check(/Never|\d{4}|[A-Z][a-z]{2}/.test(await fileRow.locator('td').nth(4).innerText()), 'the file row shows no expiry');
  await fileRow.getByRole('button', { name: `Delete ${filename}` }).click();
  const fileDialog = page.getByRole('dialog', { name: 'Delete this file?' });
  await fileDialog.waitFor();
  check((await activeText()) === 'button||Cancel', `the delete dialog opens with focus on ${await activeText()}, not Cancel`);
  await fileDialog.getByRole('button', { name: 'Delete file' }).click();
  await page.getByText('No files', { exact: true }).waitFor();

  step = 'revoke';
  await page.getByRole('link', { name: 'Manage API' }).click();
  const keyRow = page.getByRole('row').filter({ hasText: 'browser test' });
  await keyRow.getByRole('button', { name: 'Revoke key browser test' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
  await dialog.waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  check((await activeText()) === 'button||Revoke', `focus after Escape is on ${await activeText()}, not back on Revoke`);
  check((await keyRow.innerText()).includes('Active'), 'Escape in the dialog revoked the key');
  await keyRow.getByRole('button', { name: 'Revoke key browser test' }).click();
  await dialog.waitFor();
  await shot('07-revoke-dialog', { fullPage: false });
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await keyRow.getByText('Revoked', { exact: true }).waitFor();
  await page.getByRole('status').filter({ hasText: 'revoked' }).waitFor();
  emit('revoked');
  await waitForTest();

  step = 'narrow screen';
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByTestId('usage-requests').waitFor();
  await page.locator('.chart-svg').waitFor();
  await shot('08-narrow-overview');
  await page.getByRole('link', { name: 'Manage API' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await shot('09-narrow-keys');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390px`);

  step = 'sign out';
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
  check(await page.evaluate(() => sessionStorage.length) === 0, 'signing out left something in sessionStorage');

  step = 'no CSP violations, console errors or third-party requests';
  for (const [what, list] of Object.entries(problems)) {
    check(list.length === 0, `${what}: ${list.join('; ')}`);
  }
  emit('done');
} catch (err) {
  console.error(`dashboard: ${step}: ${err.message}`);
  for (const [what, list] of Object.entries(problems)) {
    if (list.length) console.error(`${what}: ${list.join('; ')}`);
  }
  if (page) await page.screenshot({ path: join(artifacts, 'failure.png'), fullPage: true }).catch(() => {});
  process.exitCode = 1;
} finally {
  await close();
  rl.close();
}
// stdin stays open while the test waits for this script's output.
process.exit();
