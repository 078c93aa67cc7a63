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

import { join } from 'node:path';
import { check, emit, env, noProblems, script, signIn, watch } from './browser.mjs';

const [url, token, account, artifacts] = env('DASHBOARD_URL', 'ADMIN_TOKEN', 'ACCOUNT', 'ARTIFACTS');
const problems = { console: [], pageErrors: [] };
let page;
await script('owner', artifacts, async (s) => {
  page = s.page;
  watch(page, problems);
  let topupPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/topups')) topupPosts += 1; });

  s.step = 'sign in as the owner';
  await signIn(page, url, token);
  await page.getByText('Account owner', { exact: true }).waitFor();

  s.step = 'the overview offers no top-up';
  await page.getByTestId('balance').waitFor();
  const note = page.getByTestId('funds-note');
  await note.waitFor();
  check(/operator/i.test(await note.innerText()), `the funds note does not say who adds funds: ${await note.innerText()}`);
  check(await page.getByRole('button', { name: 'Add funds' }).count() === 0, 'the owner is shown an "Add funds" button');
  check(await page.getByLabel('Amount (USD)').count() === 0, 'the owner is shown a top-up amount field');
  check(await page.getByRole('heading', { name: 'Top up' }).count() === 0, 'the owner is shown a "Top up" card');
  await page.screenshot({ path: join(artifacts, 'owner-overview.png'), fullPage: true, animations: 'disabled' });
  check(topupPosts === 0, `the page sent ${topupPosts} top-ups`);

  s.step = 'no console errors';
  noProblems(problems);
  emit('done');
});
