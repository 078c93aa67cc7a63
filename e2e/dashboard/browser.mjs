// What the dashboard's browser scripts share: their environment, Debian's
// Chromium launched headless in a profile of its own, the sign-in, the
// checks, and how a script ends: {"event": ...} lines on stdout, or the
// failed step on stderr with a screenshot and a non-zero exit.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

// env reads the named environment variables, all required; ARTIFACTS,
// when named, is created.
export function env(...names) {
  const values = names.map((n) => process.env[n]);
  if (values.some((v) => !v)) {
    console.error(`${names.join(', ')} must be set`);
    process.exit(2);
  }
  if (process.env.ARTIFACTS) mkdirSync(process.env.ARTIFACTS, { recursive: true });
  return values;
}

export function check(ok, message) {
  if (!ok) throw new Error(message);
}

// launch starts the browser; close ends it and removes its profile.
export async function launch(options = {}) {
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
    ...options,
  });
  const close = async () => {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

// script runs body with a page of a fresh browser. body names its steps
// in s.step, so that a failure says where it happened; the failure's
// screenshot is ARTIFACTS/<name>-failure.png.
export async function script(name, artifacts, body, options) {
  const { context, close } = await launch(options);
  const s = { step: 'start', page: null, context };
  try {
    s.page = context.pages()[0] || await context.newPage();
    await body(s);
  } catch (err) {
    console.error(`dashboard (${name}): ${s.step}: ${err.message}`);
    if (s.page) await s.page.screenshot({ path: join(artifacts, `${name}-failure.png`), fullPage: true }).catch(() => {});
    process.exitCode = 1;
  } finally {
    await close();
  }
}

// watch collects the page's console errors and uncaught exceptions.
export function watch(page, problems) {
  page.on('console', (m) => { if (m.type() === 'error') problems.console.push(m.text()); });
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));
}

// signIn opens the dashboard at url and signs in with token.
export async function signIn(page, url, token) {
  const res = await page.goto(url);
  check(res.ok(), `GET ${url}: ${res.status()}`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

// noProblems fails when any list of problems is not empty.
export function noProblems(problems) {
  for (const [what, list] of Object.entries(problems)) {
    check(list.length === 0, `${what}: ${list.join('; ')}`);
  }
}

export function emit(event, data = {}) {
  process.stdout.write(`${JSON.stringify({ event, ...data })}\n`);
}
