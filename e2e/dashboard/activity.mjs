// Opens the Activity and Usage pages of the dashboard in Debian's
// Chromium with an account owner's token, for e2e/activity_test.go: the
// requests the Go test made are listed, the status and end-user filters
// narrow them, a request's detail panel shows its fields, the CSV export
// downloads the rows the API holds, and usage by model shows prompt and
// completion tokens apart. Writes {"event":"done"} on stdout when every
// check passed; exits non-zero on the first failed one, with the reason
// on stderr and a screenshot.
//
// Environment: DASHBOARD_URL (…/dashboard/), ADMIN_TOKEN (an account
// owner's JWT), ARTIFACTS (screenshot directory).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, emit, env, noProblems, script, signIn, watch } from './browser.mjs';

const [url, token, artifacts] = env('DASHBOARD_URL', 'ADMIN_TOKEN', 'ARTIFACTS');
const origin = new URL(url).origin;
const problems = { console: [], pageErrors: [], otherOrigins: [] };
let page;

// requestIds are the request ids of the Activity table's rows, in order.
async function requestIds() {
  return page.locator('table.table-activity tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.requestId));
}

async function waitForIds(want, what) {
  const deadline = Date.now() + 10000;
  let got = [];
  while (Date.now() < deadline) {
    got = await requestIds();
    if (got.join(' ') === want.join(' ')) return;
    await page.waitForTimeout(50);
  }
  throw new Error(`${what}: rows ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

await script('activity', artifacts, async (s) => {
  page = s.page;
  watch(page, problems);
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')) problems.otherOrigins.push(u);
  });

  s.step = 'sign in';
  await signIn(page, url, token);

  s.step = 'the Activity page lists the requests, newest first';
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
  await waitForIds(['act-bad', 'act-2', 'act-1'], 'unfiltered');
  const bad = page.locator('tr[data-request-id="act-bad"]');
  check((await bad.innerText()).includes('400'), `the refused request's row: ${await bad.innerText()}`);
  check((await bad.innerText()).includes('invalid_json'), `the refused request's row has no error code: ${await bad.innerText()}`);
  await page.screenshot({ path: join(artifacts, 'activity.png'), fullPage: true, animations: 'disabled' });

  s.step = 'the status filter';
  await page.getByLabel('Status').selectOption('4xx');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await waitForIds(['act-bad'], 'status 4xx');

  s.step = 'the end-user filter';
  await page.getByLabel('Status').selectOption('');
  await page.getByLabel('End user').fill('u-7');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await waitForIds(['act-1'], 'end user u-7');

  s.step = 'a filter that matches nothing';
  await page.getByLabel('Model').fill('no-such-model');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('No request matches these filters.').waitFor();

  s.step = 'clearing the filters';
  await page.getByRole('button', { name: 'Clear' }).click();
  await waitForIds(['act-bad', 'act-2', 'act-1'], 'after Clear');

  s.step = 'the day filters send Unix seconds';
  // The browser runs in UTC (browser.mjs), so its days are UTC days.
  const today = new Date().toISOString().slice(0, 10);
  const midnight = Date.parse(`${today}T00:00:00Z`) / 1000;
  const [sent] = await Promise.all([
    page.waitForRequest((r) => r.url().includes('/activity?') && r.url().includes('since=')),
    (async () => {
      await page.getByLabel('From (day)').fill(today);
      await page.getByLabel('To (day, included)').fill(today);
      await page.getByRole('button', { name: 'Apply filters' }).click();
    })(),
  ]);
  const params = new URL(sent.url()).searchParams;
  check(params.get('since') === String(midnight) && params.get('until') === String(midnight + 86400),
    `the day filters sent since=${params.get('since')} until=${params.get('until')}, want ${midnight} and ${midnight + 86400}`);
  await waitForIds(['act-bad', 'act-2', 'act-1'], 'today');
  const tomorrow = new Date((midnight + 86400) * 1000).toISOString().slice(0, 10);
  await page.getByLabel('From (day)').fill(tomorrow);
  await page.getByLabel('To (day, included)').fill(tomorrow);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('No request matches these filters.').waitFor();
  await page.getByRole('button', { name: 'Clear' }).click();
  await waitForIds(['act-bad', 'act-2', 'act-1'], 'after Clear');

  s.step = 'the detail view';
  await page.getByRole('button', { name: 'Details of request act-1' }).click();
  const detail = page.getByTestId('activity-detail');
  await detail.waitFor();
  const text = await detail.innerText();
  for (const want of ['act-1', '1,000', '500', 'u-7', '/v1/chat/completions', 'Time to first byte', ` (${today} `, ' UTC)']) {
    check(text.includes(want), `the detail view lacks ${want}:\n${text}`);
  }
  check(await page.getByRole('heading', { name: 'Request details' }).evaluate((el) => el === document.activeElement),
    'focus did not move to the detail view');
  await page.screenshot({ path: join(artifacts, 'activity-detail.png'), fullPage: true, animations: 'disabled' });

  s.step = 'the CSV export';
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('export-csv').click(),
  ]);
  const csv = readFileSync(await download.path(), 'utf8').trim().split('\n');
  check(download.suggestedFilename().endsWith('.csv'), `download named ${download.suggestedFilename()}`);
  check(csv[0].startsWith('id,created_at,request_id,key_id,end_user'), `CSV header: ${csv[0]}`);
  check(csv.length === 4, `CSV has ${csv.length} lines, want a header and 3 rows:\n${csv.join('\n')}`);
  const header = csv[0].split(',');
  const rows = csv.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [header[i], v])));
  check(rows.map((r) => r.request_id).join(' ') === 'act-bad act-2 act-1', `CSV rows: ${csv.join('\n')}`);
  const first = rows[2];
  check(first.prompt_tokens === '1000' && first.completion_tokens === '500' && first.end_user === 'u-7' && first.status === '200',
    `CSV row of act-1: ${JSON.stringify(first)}`);
  check(rows[0].status === '400' && rows[0].error_code === 'invalid_json', `CSV row of act-bad: ${JSON.stringify(rows[0])}`);
  // One time format: created_at is the API's Unix seconds; created_at_utc
  // is the same instant for a person reading the sheet.
  check(/^\d{10}$/.test(first.created_at) && header[header.length - 1] === 'created_at_utc' &&
    first.created_at_utc === new Date(Number(first.created_at) * 1000).toISOString().slice(0, 19).replace('T', ' '),
  `CSV times of act-1: ${first.created_at} and ${first.created_at_utc}`);

  s.step = 'usage by model';
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
  await page.getByLabel('Group by').selectOption('model');
  await page.getByRole('button', { name: 'Show' }).click();
  const table = page.getByTestId('usage-table');
  await page.getByRole('columnheader', { name: 'Model' }).waitFor();
  const usage = await table.locator('tbody tr').first().innerText();
  check(/^m\s+2\s+1,010\s+505\s+\$/.test(usage), `usage by model row: ${JSON.stringify(usage)}`);
  await page.screenshot({ path: join(artifacts, 'usage.png'), fullPage: true, animations: 'disabled' });

  s.step = 'the Activity page on a phone';
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('link', { name: 'Activity' }).click();
  await waitForIds(['act-bad', 'act-2', 'act-1'], 'on a phone');
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (sideways > 0) {
    const wide = await page.evaluate(() => [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .filter((el) => !el.parentElement.closest('.table-wrap'))
      .slice(0, 5).map((el) => `${el.tagName}.${el.className}`));
    check(false, `the Activity page scrolls ${sideways}px sideways at 390px: ${wide.join(', ')}`);
  }
  await page.screenshot({ path: join(artifacts, 'activity-narrow.png'), fullPage: true, animations: 'disabled' });

  s.step = 'no console errors';
  noProblems(problems);
  emit('done');
}, { viewport: { width: 1280, height: 900 }, acceptDownloads: true });
