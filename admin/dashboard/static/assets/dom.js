// Element builders. Text always goes in as text nodes, never as markup, so
// names and labels that come from the API cannot become HTML.

const SVG = 'http://www.w3.org/2000/svg';

function build(el, props, children) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked' || k === 'disabled') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// h('button', {class: 'btn', onclick}, 'Save') builds an HTML element.
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

// s('rect', {x: 0, ...}) builds an SVG element.
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG, tag), props, children);
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let ids = 0;
// uid returns an id unique in this page, for label and aria wiring.
export function uid(prefix) {
  ids += 1;
  return `${prefix}-${ids}`;
}
