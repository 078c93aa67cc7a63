// Signs in to the dashboard in Debian's Chromium with an account owner's
// token, for e2e/dashboard_owner_test.go: the overview must show the
// balance and no way to add funds, since an owner's token cannot credit
// its own balance. Writes {"event":"done"} on stdout when every check
// passed; exits non-zero on the first failed one, with the reason on
// stderr and a screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an account
// owner's JWT), ACCOUNT (the account it names), ARTIFACTS (screenshot
// directory).

import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const { DASHBOARD_URL: url, ADMIN_TOKEN: token, ACCOUNT: account, ARTIFACTS: artifacts } = process.env;
if (!url || !token || !account || !artifacts) {
  console.error('DASHBOARD_URL, ADMIN_TOKEN, ACCOUNT and ARTIFACTS must be set');
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
  let topupPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/topups')) topupPosts += 1; });

  step = 'sign in as the owner';
  const res = await page.goto(url);
  check(res.ok(), `GET ${url}: ${res.status()}`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  await page.getByText('Account owner', { exact: true }).waitFor();

  step = 'the overview offers no top-up';
  await page.getByTestId('balance').waitFor();
  const note = page.getByTestId('funds-note');
  await note.waitFor();
  check(/operator/i.test(await note.innerText()), `the funds note does not say who adds funds: ${await note.innerText()}`);
  check(await page.getByRole('button', { name: 'Add funds' }).count() === 0, 'the owner is shown an "Add funds" button');
  check(await page.getByLabel('Amount (USD)').count() === 0, 'the owner is shown a top-up amount field');
  check(await page.getByRole('heading', { name: 'Top up' }).count() === 0, 'the owner is shown a "Top up" card');
  await page.screenshot({ path: join(artifacts, 'owner-overview.png'), fullPage: true, animations: 'disabled' });
  check(topupPosts === 0, `the page sent ${topupPosts} top-ups`);

  step = 'no console errors';
  for (const [what, list] of Object.entries(problems)) {
    check(list.length === 0, `${what}: ${list.join('; ')}`);
  }
  process.stdout.write(`${JSON.stringify({ event: 'done' })}\n`);
} catch (err) {
  console.error(`dashboard (owner): ${step}: ${err.message}`);
  if (page) await page.screenshot({ path: join(artifacts, 'owner-failure.png'), fullPage: true }).catch(() => {});
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
