// Creates a key with limits on the dashboard's Manage API page in
// Debian's Chromium, for e2e/keys_controls_test.go: the limits must be
// sent with the key and shown in the key list. Writes {"event":"done",
// "key":…} on stdout when every check passed; exits non-zero on the first
// failed one, with the reason on stderr and a screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an account
// owner's JWT), ARTIFACTS (screenshot directory).

import { join } from 'node:path';
import { check, emit, env, noProblems, script, signIn, watch } from './browser.mjs';

const [url, token, artifacts] = env('DASHBOARD_URL', 'ADMIN_TOKEN', 'ARTIFACTS');
const problems = { console: [], pageErrors: [] };
let page;
await script('keys', artifacts, async (s) => {
  page = s.page;
  watch(page, problems);
  let keyPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/keys')) keyPosts += 1; });

  s.step = 'sign in';
  await signIn(page, url, token);
  await page.getByRole('link', { name: 'Manage API' }).click();
  await page.getByRole('heading', { name: 'Manage API', level: 1 }).waitFor();

  s.step = 'an unreadable spend limit is refused on the page';
  await page.getByLabel('Key name (optional)').fill('limited');
  await page.getByText(/^Limits \(optional\)/).click();
  await page.getByLabel('Spend limit (optional)').fill('a lot');
  await page.getByRole('button', { name: 'Create new key' }).click();
  await page.getByText('Enter an amount in dollars').waitFor();
  check(keyPosts === 0, 'a key was created with an unreadable spend limit');

  s.step = 'create a key with limits';
  await page.getByLabel('Spend limit (optional)').fill('1');
  await page.getByLabel('Spend limit period').selectOption('day');
  await page.getByLabel('Allowed models (optional)').fill('m2, m3');
  await page.getByLabel('Requests per minute (optional)').fill('10');
  await page.getByRole('button', { name: 'Create new key' }).click();
  const keyField = page.getByLabel(/^Key “limited”/);
  await keyField.waitFor();
  const key = await keyField.inputValue();
  check(/^sk-[0-9A-Za-z]{40,128}$/.test(key), `the page shows ${JSON.stringify(key)} as the key`);

  s.step = 'the list shows the limits';
  const row = page.getByRole('row').filter({ hasText: 'limited' });
  const limits = await row.getByTestId('key-limits').innerText();
  for (const want of ['models: m2, m3', '$1.00/day', '10/min']) {
    check(limits.includes(want), `the key's limits read ${JSON.stringify(limits)}, without ${want}`);
  }
  check((await row.getByTestId('key-last-used').innerText()).includes('Never'), 'a new key is shown as used');
  await page.screenshot({ path: join(artifacts, 'keys-limits.png'), fullPage: true, animations: 'disabled' });

  s.step = 'on a phone, the status toast leaves the new key and its warning readable';
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByLabel('Key name (optional)').fill('phone');
  await page.getByRole('button', { name: 'Create new key' }).click();
  await page.getByLabel(/^Key “phone”/).waitFor();
  await page.locator('#toast.toast-visible').waitFor();
  await page.waitForTimeout(400); // the toast's entry transition
  const box = async (sel) => page.locator(sel).evaluate((e) => {
    const r = e.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
  });
  const toast = await box('#toast');
  for (const sel of ['#new-key-warning', '#new-key', '.card-reveal .form-actions']) {
    const b = await box(sel);
    check(b.top >= 0 && b.bottom <= 844, `${sel} is not in view on a phone (${JSON.stringify(b)})`);
    const overlaps = b.left < toast.right && toast.left < b.right && b.top < toast.bottom && toast.top < b.bottom;
    check(!overlaps, `the toast ${JSON.stringify(toast)} covers ${sel} ${JSON.stringify(b)} on a phone`);
  }
  await page.screenshot({ path: join(artifacts, 'keys-phone.png'), animations: 'disabled' });

  s.step = 'no console errors';
  noProblems(problems);
  emit('done', { key });
});
