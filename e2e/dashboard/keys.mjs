// Creates a key with limits on the dashboard's Manage API page in
// Debian's Chromium, for e2e/keys_controls_test.go: the limits must be
// sent with the key and shown in the key list. Writes {"event":"done",
// "key":…} on stdout when every check passed; exits non-zero on the first
// failed one, with the reason on stderr and a screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an account
// owner's JWT), ARTIFACTS (screenshot directory).

import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const { DASHBOARD_URL: url, ADMIN_TOKEN: token, ARTIFACTS: artifacts } = process.env;
if (!url || !token || !artifacts) {
  console.error('DASHBOARD_URL, ADMIN_TOKEN and ARTIFACTS must be set');
  process.exit(2);
}
mkdirSync(artifacts, { recursive: true });

function check(ok, message) {
  if (!ok) throw new Error(message);
}

const problems = { console: [], pageErrors: [] };
const userDataDir = mkdtempSync(join(tmpdir(), 'switchyard-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 800 },
  locale: 'en-US',
  timezoneId: 'UTC',
  reducedMotion: 'reduce',
});
let page;
let step = 'start';
try {
  page = context.pages()[0] || await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.console.push(m.text()); });
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));
  let keyPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/keys')) keyPosts += 1; });

  step = 'sign in';
  const res = await page.goto(url);
  check(res.ok(), `GET ${url}: ${res.status()}`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Manage API' }).click();
  await page.getByRole('heading', { name: 'Manage API', level: 1 }).waitFor();

  step = 'an unreadable spend limit is refused on the page';
  await page.getByLabel('Key name (optional)').fill('limited');
  await page.getByText(/^Limits \(optional\)/).click();
  await page.getByLabel('Spend limit (optional)').fill('a lot');
  await page.getByRole('button', { name: 'Create new key' }).click();
  await page.getByText('Enter an amount in dollars').waitFor();
  check(keyPosts === 0, 'a key was created with an unreadable spend limit');

  step = 'create a key with limits';
  await page.getByLabel('Spend limit (optional)').fill('1');
  await page.getByLabel('Spend limit period').selectOption('day');
  await page.getByLabel('Allowed models (optional)').fill('m2, m3');
  await page.getByLabel('Requests per minute (optional)').fill('10');
  await page.getByRole('button', { name: 'Create new key' }).click();
  const keyField = page.getByLabel(/^Key “limited”/);
  await keyField.waitFor();
  const key = await keyField.inputValue();
  check(/^sk-[0-9A-Za-z]{40,128}$/.test(key), `the page shows ${JSON.stringify(key)} as the key`);

  step = 'the list shows the limits';
  const row = page.getByRole('row').filter({ hasText: 'limited' });
  const limits = await row.getByTestId('key-limits').innerText();
  for (const want of ['models: m2, m3', '$1.00/day', '10/min']) {
    check(limits.includes(want), `the key's limits read ${JSON.stringify(limits)}, without ${want}`);
  }
  check((await row.getByTestId('key-last-used').innerText()).includes('Never'), 'a new key is shown as used');
  await page.screenshot({ path: join(artifacts, 'keys-limits.png'), fullPage: true, animations: 'disabled' });

  step = 'no console errors';
  for (const [what, list] of Object.entries(problems)) {
    check(list.length === 0, `${what}: ${list.join('; ')}`);
  }
  process.stdout.write(`${JSON.stringify({ event: 'done', key })}\n`);
} catch (err) {
  console.error(`dashboard (keys): ${step}: ${err.message}`);
  if (page) await page.screenshot({ path: join(artifacts, 'keys-failure.png'), fullPage: true }).catch(() => {});
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
