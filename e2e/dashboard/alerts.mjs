// Sets an account's alerts on the dashboard's Settings → Alerts page in
// Debian's Chromium, for e2e/alerts_cli_test.go: the delivery log lists
// the one alert the Go test had sent; a share out of range is
// refused on the page without a request; a threshold without anywhere to
// send it is refused with the API's message; the corrected settings are
// saved (read back from the admin API here) and the page shows the
// threshold and the webhook's signing secret. Writes
// {"event":"done","secret":…} on stdout when every check passed; exits
// non-zero on the first failed one, with the reason on stderr and a
// screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an account
// owner's JWT), ACCOUNT (its name), HOOK_URL (a webhook URL), ARTIFACTS
// (screenshot directory).

import { join } from 'node:path';
import { check, emit, env, noProblems, script, signIn, watch } from './browser.mjs';

const [url, token, account, hook, artifacts] = env('DASHBOARD_URL', 'ADMIN_TOKEN', 'ACCOUNT', 'HOOK_URL', 'ARTIFACTS');
const problems = { console: [], pageErrors: [] };
const apiAlerts = async () => {
  const res = await fetch(new URL(`../admin/accounts/${encodeURIComponent(account)}/alerts`, url), {
    headers: { Authorization: `Bearer ${token}` },
  });
  check(res.ok, `GET alerts: ${res.status}`);
  return res.json();
};

await script('alerts', artifacts, async (s) => {
  const { page } = s;
  watch(page, problems);
  let puts = 0;
  page.on('request', (r) => { if (r.method() === 'PUT' && r.url().endsWith('/alerts')) puts += 1; });

  s.step = 'sign in';
  await signIn(page, url, token);
  await page.getByRole('link', { name: 'Alerts' }).click();
  await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
  const status = page.getByTestId('alerts-status');
  check((await status.innerText()).includes('None'), 'a new account shows a threshold');
  // The Go test had one balance alert queued, then turned alerts off.
  const delivery = page.getByRole('row').filter({ hasText: 'below $30.00' });
  await delivery.waitFor();
  const row = await delivery.innerText();
  check(/Balance \$19\.\d\d below \$30\.00/.test(row) && row.includes('webhook'), `the delivery log reads ${JSON.stringify(row)}`);

  s.step = 'a share out of range is refused on the page';
  const form = page.getByTestId('alerts-form');
  await form.getByLabel('Balance below (USD)').fill('10');
  await form.getByLabel('Key spend alert (% of its spend limit)').fill('150');
  await form.getByRole('button', { name: 'Save alerts' }).click();
  await form.getByText('Enter a whole number from 1 to 100').waitFor();
  check(puts === 0, 'a share of 150% was sent to the API');

  s.step = 'a threshold without a destination is refused with the API\'s message';
  await form.getByLabel('Key spend alert (% of its spend limit)').fill('80');
  await form.getByRole('button', { name: 'Save alerts' }).click();
  const alert = form.getByRole('alert');
  await alert.waitFor();
  const said = await alert.innerText();
  for (const want of ['The alert settings were not saved', 'needs somewhere to send its alerts', 'invalid_alert']) {
    check(said.includes(want), `the error reads ${JSON.stringify(said)}, without ${want}`);
  }
  check((await apiAlerts()).threshold_cents === null, 'a refused save changed the settings');
  // The top bar is sticky: a full-page shot taken scrolled down would
  // draw it over the middle of the page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, 'alerts-refused.png'), fullPage: true, animations: 'disabled' });

  s.step = 'the corrected settings are saved';
  await form.getByLabel('Webhook URL').fill(hook);
  await form.getByRole('button', { name: 'Save alerts' }).click();
  await page.getByText('Alert settings saved').waitFor();
  check(await form.getByRole('alert').count() === 0, 'the error stayed after a save');
  const saved = await apiAlerts();
  const want = { below_cents: 1000, below_percent: null, threshold_cents: 1000, key_spend_percent: 80, webhook_url: hook, email: '' };
  for (const [name, value] of Object.entries(want)) {
    check(JSON.stringify(saved[name]) === JSON.stringify(value), `saved ${name} ${JSON.stringify(saved[name])}, want ${JSON.stringify(value)}`);
  }
  check(/^whsec_/.test(saved.webhook_secret), `webhook secret ${saved.webhook_secret}`);
  const shown = await status.innerText();
  for (const part of ['$10.00', 'At 80% of a key’s spend limit', 'webhook']) {
    check(shown.includes(part), `the status reads ${JSON.stringify(shown)}, without ${part}`);
  }
  check(await page.getByLabel('Webhook signing secret', { exact: true }).inputValue() === saved.webhook_secret, 'the page shows another signing secret');
  check(await form.getByLabel('Balance below (USD)').inputValue() === '10.00', 'the form does not show the saved amount');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, 'alerts-saved.png'), fullPage: true, animations: 'disabled' });

  s.step = 'no console errors';
  // The refused save's 400 is the one console error the browser logs.
  problems.console = problems.console.filter((m) => !m.includes('400'));
  noProblems(problems);
  emit('done', { secret: saved.webhook_secret });
});
