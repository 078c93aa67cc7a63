// Drives the dashboard in Debian's Chromium for
// e2e/dashboard_checkout_test.go: an operator on an empty gateway creates
// the first account from the empty state and finds it, with its id, under
// Accounts; the account's owner then adds funds, which sends the browser
// to Stripe Checkout (stripe-mock's session URL, answered here by a stub
// page instead of Stripe). The script writes {"event":"redirected",
// "session", "url"} and waits for one line on stdin, written once the
// test has delivered Stripe's webhook; then it comes back to the
// dashboard as Stripe would and checks the notice, the balance and the
// receipt, and turns auto top-up on. Writes {"event":"done"} when every check passed; exits
// non-zero on the first failed one, with the reason on stderr and a
// screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), OPERATOR_TOKEN, OWNER_TOKEN,
// ACCOUNT (the account to create, which OWNER_TOKEN names), ARTIFACTS.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { check, launch } from './browser.mjs';

const { DASHBOARD_URL: url, OPERATOR_TOKEN: operator, OWNER_TOKEN: owner, ACCOUNT: account, ARTIFACTS: artifacts } = process.env;
if (!url || !operator || !owner || !account || !artifacts) {
  console.error('DASHBOARD_URL, OPERATOR_TOKEN, OWNER_TOKEN, ACCOUNT and ARTIFACTS must be set');
  process.exit(2);
}
const origin = new URL(url).origin;
const CHECKOUT = 'https://checkout.stripe.com/';
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
const { context, close } = await launch();
let page;
let step = 'start';
try {
  await context.exposeBinding('__reportCSP', (_source, v) => { problems.csp.push(v); });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__reportCSP(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  // The page may reach its own origin, and Stripe Checkout only by the
  // redirect, which a stub page answers; anything else is recorded and
  // refused.
  const checkoutVisits = [];
  // The answer to POST …/checkout, kept as it passes: the page navigates
  // away at once, after which its body can no longer be read.
  let created = null;
  await context.route(() => true, async (route) => {
    const u = route.request().url();
    if (u.startsWith(`${origin}/`) && u.endsWith('/checkout') && route.request().method() === 'POST') {
      const resp = await route.fetch();
      created = await resp.json();
      return route.fulfill({ response: resp });
    }
    if (u.startsWith(`${origin}/`) || u.startsWith('data:')) return route.continue();
    if (u.startsWith(CHECKOUT) && route.request().isNavigationRequest()) {
      checkoutVisits.push(u);
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Checkout</title><p>Stripe Checkout stand-in</p>' });
    }
    problems.thirdParty.push(u);
    return route.abort('blockedbyclient');
  });
  page = context.pages()[0] || await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && page.url().startsWith(origin)) problems.console.push(`${m.text()} (${m.location().url || ''})`);
  });
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));
  const shot = (name) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true, animations: 'disabled' });
  const signIn = async (token) => {
    await page.goto(url);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  };

  step = 'the operator sees what works on an empty gateway';
  await signIn(operator);
  const empty = page.getByTestId('no-accounts');
  await empty.waitFor();
  const emptyText = await empty.innerText();
  check(/accounts create/.test(emptyText), `the empty state does not name accounts create: ${emptyText}`);
  check(!/accounts topup/.test(emptyText), `the empty state still suggests accounts topup: ${emptyText}`);
  await shot('checkout-01-empty');

  step = 'the operator creates the first account';
  await page.getByLabel('Account name').fill('has space');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Enter 1 to 64 characters without spaces.').waitFor();
  await page.getByLabel('Account name').fill(account);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('balance').waitFor();
  check(await page.getByLabel('Account', { exact: true }).inputValue() === account, 'the picker does not show the new account');

  step = 'the account is listed with its id';
  await page.getByRole('link', { name: 'Accounts' }).click();
  const row = page.locator(`[data-account="${account}"]`);
  await row.waitFor();
  const rowText = await row.innerText();
  check(/acct_/.test(rowText) && /Enabled/.test(rowText), `the account row: ${rowText}`);
  await shot('checkout-02-accounts');
  await page.getByRole('button', { name: 'Sign out' }).click();

  step = 'the owner is offered Add funds';
  await signIn(owner);
  await page.getByRole('heading', { name: 'Add funds' }).waitFor();
  check(await page.getByTestId('funds-note').count() === 0, 'the owner still sees the no-payments note');
  let checkoutPosts = 0;
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/checkout')) checkoutPosts += 1; });
  await page.getByLabel('Amount (USD)').fill('4');
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.getByText('The smallest top-up is $5.00.').waitFor();
  check(checkoutPosts === 0, 'an amount the page refused was sent');
  await shot('checkout-03-add-funds');

  step = 'Add funds redirects to Stripe Checkout';
  await page.getByRole('button', { name: '$25' }).click();
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.waitForURL((u) => u.href.startsWith(CHECKOUT));
  check(created !== null, 'no answer to POST …/checkout was seen');
  check(checkoutVisits.length === 1 && checkoutVisits[0] === created.url, `visited ${checkoutVisits}, the API answered ${created.url}`);
  check(created.amount_cents === 2500, `the session is for ${created.amount_cents} cents`);
  await shot('checkout-04-stripe');
  emit('redirected', { session: created.id, url: created.url });
  await waitForTest();

  step = 'back from Checkout, the receipt';
  await page.goto(`${url}?checkout=success&session=${encodeURIComponent(created.id)}#/overview`);
  await page.getByTestId('checkout-notice').waitFor();
  check(!page.url().includes('checkout='), `the notice's query stays in the address: ${page.url()}`);
  const balance = await page.getByTestId('balance').getAttribute('data-cents');
  check(balance === '2500', `the balance shows ${balance} cents, want 2500`);
  const receipts = page.getByTestId('receipts');
  await receipts.waitFor();
  const receiptText = await receipts.innerText();
  check(/Stripe top-up/.test(receiptText) && /\+\$25\.00/.test(receiptText) && receiptText.includes(`pay:stripe:${created.id}`),
    `the receipts table: ${receiptText}`);
  await shot('checkout-05-receipt');

  step = 'the owner turns auto top-up on';
  const autoState = page.getByTestId('autotopup-state');
  check(/^Off/.test(await autoState.innerText()), `auto top-up is not off by default: ${await autoState.innerText()}`);
  const autoForm = page.getByTestId('autotopup-form');
  await autoForm.getByLabel('Top up automatically with the saved card').check();
  await autoForm.getByLabel('When the balance falls below (USD)').fill('5');
  await autoForm.getByLabel('Add (USD)').fill('4');
  await autoForm.getByRole('button', { name: 'Save auto top-up' }).click();
  await autoForm.getByText('The smallest top-up is $5.00.').waitFor();
  await autoForm.getByLabel('Add (USD)').fill('20');
  await autoForm.getByRole('button', { name: 'Save auto top-up' }).click();
  await page.getByText('On, but no card is saved yet', { exact: false }).waitFor();
  await page.reload();
  await page.getByTestId('autotopup-state').getByText('no card is saved yet', { exact: false }).waitFor();
  check(await page.getByTestId('autotopup-form').getByLabel('Add (USD)').inputValue() === '20.00', 'the saved amount is not shown after a reload');
  await shot('checkout-06-auto-topup');

  step = 'no console errors, CSP violations or other origins';
  for (const [what, list] of Object.entries(problems)) {
    check(list.length === 0, `${what}: ${list.join('; ')}`);
  }
  emit('done');
} catch (err) {
  console.error(`dashboard (checkout): ${step}: ${err.message}`);
  if (page) await page.screenshot({ path: join(artifacts, 'checkout-failure.png'), fullPage: true }).catch(() => {});
  process.exitCode = 1;
} finally {
  rl.close();
  await close();
}
