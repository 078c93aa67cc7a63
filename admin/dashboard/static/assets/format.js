// Formatting and parsing of money, dates, sizes and counts.

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const usdShort = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', notation: 'compact', maximumFractionDigits: 1 });
const count = new Intl.NumberFormat('en-US');
const countShort = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const dateFmt = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFmt = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const timeFmt = new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit' });
const dayFmt = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

export function money(cents) {
  return usd.format(Number(cents || 0) / 100);
}

export function moneyShort(cents) {
  const v = Number(cents || 0);
  return Math.abs(v) < 100000 ? usd.format(v / 100) : usdShort.format(v / 100);
}

export function number(n) { return count.format(Number(n || 0)); }
export function numberShort(n) { return countShort.format(Number(n || 0)); }

// The admin API writes and takes times as Unix seconds (docs/admin.md,
// "Times"); the page shows them in the browser's time zone.
function toDate(v) {
  if (v === null || v === undefined || v === '') return null;
  const d = typeof v === 'number' ? new Date(v < 1e12 ? v * 1000 : v) : new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function date(v) {
  const d = toDate(v);
  return d ? dateFmt.format(d) : '—';
}

export function dateTime(v) {
  const d = toDate(v);
  return d ? dateTimeFmt.format(d) : '—';
}

export function time(v) {
  const d = toDate(v);
  return d ? timeFmt.format(d) : '';
}

// utc is Unix seconds as an exact UTC time, "2026-11-27 17:19:11 UTC",
// to match with server logs.
export function utc(v) {
  const d = toDate(v);
  return d ? `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC` : '';
}

// day formats a YYYY-MM-DD period.
export function day(period) {
  const d = new Date(`${period}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? period : dayFmt.format(d);
}

export function bytes(n) {
  const v = Number(n || 0);
  if (v < 1024) return `${v} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let x = v / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) { x /= 1024; i += 1; }
  return `${x < 10 ? x.toFixed(1) : Math.round(x)} ${units[i]}`;
}

export const TOPUP_MIN_CENTS = 500;
export const TOPUP_MAX_CENTS = 100000;

// parseTopUp reads a dollar amount as typed ("25", "$25.5", "1,000.00")
// without floating point. It returns {cents, usd} or {error}.
export function parseTopUp(text) {
  const t = String(text).trim().replace(/^\$/, '').replace(/,/g, '');
  if (t === '') return { error: 'Enter an amount between $5.00 and $1,000.00.' };
  const m = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec(t);
  if (!m) return { error: 'Enter the amount in dollars, like 25 or 25.50.' };
  const cents = Number(m[1]) * 100 + Number((m[2] || '').padEnd(2, '0'));
  if (cents < TOPUP_MIN_CENTS) return { error: 'The smallest top-up is $5.00.' };
  if (cents > TOPUP_MAX_CENTS) return { error: 'The largest top-up is $1,000.00.' };
  return { cents, usd: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}` };
}

// isoDay is the UTC calendar day of d as YYYY-MM-DD.
export function isoDay(d) {
  return d.toISOString().slice(0, 10);
}

const pad2 = (n) => String(n).padStart(2, '0');

// localDay is the calendar day, in the browser's time zone, of Unix
// seconds s as YYYY-MM-DD (what a date input holds).
export function localDay(s) {
  const d = toDate(s);
  return d ? `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}` : '';
}

// startOfLocalDay is the Unix seconds of the midnight, in the browser's
// time zone, that starts day (YYYY-MM-DD), plus days whole days; null
// for anything else.
export function startOfLocalDay(day, days = 0) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(day));
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days);
  return Number.isNaN(d.getTime()) ? null : Math.floor(d.getTime() / 1000);
}
