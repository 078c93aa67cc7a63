// A bar chart of one value per day, drawn as SVG with DOM calls at the
// container's pixel width so that text stays at its CSS size on any
// screen. It redraws when the container is resized.

import { h, s, replace } from './dom.js';

const HEIGHT = 220;
const PAD = { top: 12, right: 8, bottom: 28, left: 56 };

// niceStep returns a round step (1, 2 or 5 × 10ⁿ) giving about n ticks.
function niceStep(max, n) {
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

// barChart draws points [{label, title, value}] into container, labelling
// the y axis with format. It returns a function that stops redrawing.
export function barChart(container, { points, format, label, minStep = 1 }) {
  const draw = () => {
    const width = Math.max(260, Math.floor(container.clientWidth));
    const plotW = width - PAD.left - PAD.right;
    const plotH = HEIGHT - PAD.top - PAD.bottom;
    const max = Math.max(0, ...points.map((p) => p.value));
    const step = Math.max(minStep, niceStep(max || minStep * 4, 4));
    const top = Math.max(step, Math.ceil(max / step) * step);
    const y = (v) => PAD.top + plotH - (v / top) * plotH;

    const svg = s('svg', {
      class: 'chart-svg', width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`,
      role: 'img', 'aria-label': label,
    });
    for (let v = 0; v <= top + step / 2; v += step) {
      const yy = Math.round(y(v)) + 0.5;
      svg.append(
        s('line', { class: v === 0 ? 'chart-axis' : 'chart-grid', x1: PAD.left, x2: width - PAD.right, y1: yy, y2: yy }),
        s('text', { class: 'chart-tick', x: PAD.left - 8, y: yy, 'text-anchor': 'end', 'dominant-baseline': 'middle' }, format(v)));
    }
    const slot = plotW / points.length;
    const barW = Math.max(2, Math.min(28, slot * 0.7));
    // Label about every 60 px, always including the last (today).
    const every = Math.max(1, Math.ceil(60 / slot));
    points.forEach((p, i) => {
      const x = PAD.left + slot * i + (slot - barW) / 2;
      const hgt = p.value > 0 ? Math.max(2, (p.value / top) * plotH) : 0;
      const bar = s('rect', {
        class: ['chart-bar', p.value > 0 ? null : 'chart-bar-empty'],
        x: x.toFixed(1), y: (PAD.top + plotH - hgt).toFixed(1), width: barW.toFixed(1), height: hgt.toFixed(1), rx: Math.min(3, barW / 4),
        'data-period': p.key, 'data-value': p.value,
      }, s('title', {}, p.title));
      svg.append(bar);
      if ((points.length - 1 - i) % every === 0) {
        svg.append(s('text', { class: 'chart-tick', x: (x + barW / 2).toFixed(1), y: HEIGHT - 8, 'text-anchor': 'middle' }, p.label));
      }
    });
    replace(container, svg);
  };
  draw();
  let last = container.clientWidth;
  const ro = new ResizeObserver(() => {
    if (Math.abs(container.clientWidth - last) >= 1) {
      last = container.clientWidth;
      draw();
    }
  });
  ro.observe(container);
  return () => ro.disconnect();
}

// dataTable is the chart's data as a table, for screen readers and for
// anyone who wants the numbers.
export function dataTable(caption, columns, rows) {
  return h('table', { class: 'table table-compact' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.title)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c, i) => (i === 0
      ? h('th', { scope: 'row' }, c.value(r))
      : h('td', { class: c.num ? 'num' : null }, c.value(r))))))));
}
