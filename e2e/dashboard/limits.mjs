// Changes a key's limits on the dashboard's Manage API page in Debian's
// Chromium, for e2e/keys_controls_test.go: a malformed address range is
// refused with the API's message in the dialog, which stays open; the
// corrected limits are saved (read back from the admin API here) and
// shown in the key list; a second edit lifts some of them. Writes
// {"event":"done","expires":"YYYY-MM-DD"} on stdout when every check
// passed; exits non-zero on the first failed one, with the reason on
// stderr and a screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an account
// owner's JWT), ACCOUNT (its name), ARTIFACTS (screenshot directory).
// The account has one key, labelled "ci", limited to model m9.

import { join } from 'node:path';
import { check, emit, env, noProblems, script, signIn, watch } from './browser.mjs';

const [url, token, account, artifacts] = env('DASHBOARD_URL', 'ADMIN_TOKEN', 'ACCOUNT', 'ARTIFACTS');
const problems = { console: [], pageErrors: [] };
// The key list as the admin API has it, with the page's own token.
const apiKeys = async () => {
  const res = await fetch(new URL(`../admin/accounts/${encodeURIComponent(account)}/keys`, url), {
    headers: { Authorization: `Bearer ${token}` },
  });
  check(res.ok, `GET keys: ${res.status}`);
  return (await res.json()).data;
};
const expires = new Date(Date.now() + 30 * 86400e3).toISOString().slice(0, 10);

await script('limits', artifacts, async (s) => {
  const { page } = s;
  watch(page, problems);
  let puts = 0;
  page.on('request', (r) => { if (r.method() === 'PUT' && r.url().endsWith('/controls')) puts += 1; });

  s.step = 'sign in';
  await signIn(page, url, token);
  await page.getByRole('link', { name: 'Manage API' }).click();
  await page.getByRole('heading', { name: 'Manage API', level: 1 }).waitFor();
  const row = page.getByRole('row').filter({ hasText: 'ci' });
  check((await row.getByTestId('key-limits').innerText()).includes('models: m9'), 'the key list does not show the key\'s model');

  s.step = 'the dialog shows the key\'s limits';
  await row.getByRole('button', { name: 'Edit limits of key ci' }).click();
  const dialog = page.getByRole('dialog', { name: /^Limits of “ci”/ });
  await dialog.waitFor();
  check(await dialog.getByLabel('Allowed models (optional)').inputValue() === 'm9', 'the dialog does not show the key\'s model');

  s.step = 'a malformed address range is refused with the API\'s message';
  await dialog.getByLabel('Expires on (optional)').fill(expires);
  await dialog.getByLabel('Allowed models (optional)').fill('m1, m2');
  await dialog.getByLabel('Allowed addresses (optional)').fill('203.0.113.0/33');
  await dialog.getByLabel('Spend limit (optional)').fill('2.50');
  await dialog.getByLabel('Spend limit period').selectOption('month');
  await dialog.getByLabel('Requests per minute (optional)').fill('5');
  await dialog.getByLabel('Concurrent streams (optional)').fill('1');
  await dialog.getByRole('button', { name: 'Save limits' }).click();
  const alert = dialog.getByRole('alert');
  await alert.waitFor();
  const said = await alert.innerText();
  for (const want of ['The limits were not saved', '"203.0.113.0/33" is not an address', 'invalid_key_controls']) {
    check(said.includes(want), `the error reads ${JSON.stringify(said)}, without ${want}`);
  }
  check(puts === 1, `${puts} PUT requests for one save`);
  await page.screenshot({ path: join(artifacts, 'limits-refused.png'), animations: 'disabled' });
  let [k] = await apiKeys();
  check(k.models.join() === 'm9' && k.allowed_ips.length === 0, `a refused edit changed the key: ${JSON.stringify(k)}`);

  s.step = 'the corrected limits are saved';
  await dialog.getByLabel('Allowed addresses (optional)').fill('203.0.113.0/24, 2001:db8::/32');
  await dialog.getByRole('button', { name: 'Save limits' }).click();
  await dialog.waitFor({ state: 'detached' });
  [k] = await apiKeys();
  const want = {
    // Midnight starting the day, in the browser's time zone: UTC here.
    expires_at: Date.parse(`${expires}T00:00:00Z`) / 1000, models: ['m1', 'm2'], allowed_ips: ['203.0.113.0/24', '2001:db8::/32'],
    spend_limit_cents: 250, spend_period: 'month', rate_per_minute: 5, stream_limit: 1,
  };
  for (const [name, value] of Object.entries(want)) {
    check(JSON.stringify(k[name]) === JSON.stringify(value), `saved ${name} ${JSON.stringify(k[name])}, want ${JSON.stringify(value)}`);
  }
  // The key list is fetched again once the dialog closes: wait for it to
  // show the new limits before reading them.
  const limits = row.getByTestId('key-limits');
  let shown = await limits.innerText();
  for (const deadline = Date.now() + 5000; !shown.includes('models: m1, m2') && Date.now() < deadline;) {
    await page.waitForTimeout(50);
    shown = await limits.innerText();
  }
  for (const part of ['models: m1, m2', 'from 203.0.113.0/24, 2001:db8::/32', '$2.50/month', '5/min', '1 stream']) {
    check(shown.includes(part), `the key's limits read ${JSON.stringify(shown)}, without ${part}`);
  }
  await page.screenshot({ path: join(artifacts, 'limits-saved.png'), fullPage: true, animations: 'disabled' });

  s.step = 'a second edit lifts the model list and the spend limit';
  await row.getByRole('button', { name: 'Edit limits of key ci' }).click();
  await dialog.waitFor();
  check(await dialog.getByLabel('Spend limit (optional)').inputValue() === '2.50', 'the dialog does not show the saved spend limit');
  await page.screenshot({ path: join(artifacts, 'limits-dialog.png'), animations: 'disabled' });
  await dialog.getByLabel('Allowed models (optional)').fill('');
  await dialog.getByLabel('Spend limit (optional)').fill('');
  await dialog.getByRole('button', { name: 'Save limits' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByText(/^Limits of key .* saved$/).waitFor();

  s.step = 'no console errors';
  // The refused save's 400 is the one console error the browser logs.
  problems.console = problems.console.filter((m) => !m.includes('400'));
  noProblems(problems);
  emit('done', { expires });
});
