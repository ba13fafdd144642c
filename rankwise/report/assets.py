"""The report page's style sheet and script, inlined into every report (no file is fetched).

The script draws every chart itself (SVG, and a canvas for the scatter), builds every table
from the embedded data with DOM text nodes (never HTML strings: ids that contain markup show
as text; a name or id inside other text, a message's ids included, is isolated, so its bidi
characters stay in it), and needs no server: the data is an inline gzip-compressed block
decoded with the browser's own ``DecompressionStream``.
"""

CSS = r"""
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #ffffff; --panel: #f6f7f9;
  --warn: #9a5b00; --warnbg: #fff4df; --note: #2f5d8a; --notebg: #eaf2fb; --ok: #2e6b3a; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 22px; margin: 6px 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
p { margin: 6px 0; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
nav { position: sticky; top: 0; background: rgba(255,255,255,.96); border-bottom: 1px solid var(--line);
  z-index: 5; }
nav .inner { max-width: 1180px; margin: 0 auto; padding: 6px 20px; display: flex; flex-wrap: wrap;
  gap: 4px 14px; align-items: center; }
nav a { color: var(--note); text-decoration: none; font-size: 13px; }
nav a:hover { text-decoration: underline; }
.toggles { display: flex; flex-wrap: wrap; gap: 4px 12px; margin-left: auto; }
.toggles label { display: inline-flex; align-items: center; gap: 4px; font-size: 13px; cursor: pointer; }
/* a name or id of any length wraps inside the page's width, never past it */
.toggles label, .toggles > span, h3, .lists .small, th.system { overflow-wrap: anywhere;
  min-width: 0; }
select { max-width: 32em; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right;
  vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.text, th.text { text-align: left; overflow-wrap: anywhere; max-width: 420px; }
.summary td { white-space: nowrap; }
.summary td.text { white-space: normal; min-width: 10em; }
.summary .ci { display: block; color: var(--muted); font-size: 11px; }
.summary .best { font-weight: 700; }
sup.mark { color: #a01e1e; font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; }
.charts { display: flex; flex-wrap: wrap; gap: 10px 18px; }
.chartbox { position: relative; }
/* a chart narrower than its size where the page is (a phone): scaled to fit, never past it */
svg.chart { display: block; background: #fff; max-width: 100%; height: auto; }
svg.chart text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg.chart .axis { stroke: #8a93a3; stroke-width: 1; }
svg.chart .grid { stroke: #eceef2; stroke-width: 1; }
svg.chart .title { font-size: 13px; fill: var(--fg); font-weight: 600; }
.tooltip { position: absolute; pointer-events: none; background: rgba(255,255,255,.97);
  border: 1px solid var(--line); border-radius: 4px; padding: 4px 6px; font-size: 12px;
  white-space: nowrap; box-shadow: 0 1px 4px rgba(0,0,0,.12); display: none; z-index: 4;
  max-width: 460px; overflow: hidden; text-overflow: ellipsis; }
.controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 6px 0;
  background: var(--panel); padding: 6px 10px; border-radius: 4px; }
.controls label { font-size: 13px; }
select, input, button { font: inherit; font-size: 13px; }
button { cursor: pointer; border: 1px solid var(--line); background: #fff; border-radius: 3px;
  padding: 2px 8px; }
button:hover { background: var(--panel); }
th button.sort { border: 0; background: transparent; font-weight: 600; padding: 0; }
th button.sort::after { content: " \2195"; color: var(--muted); }
th[aria-sort="ascending"] button.sort::after { content: " \2191"; color: var(--fg); }
th[aria-sort="descending"] button.sort::after { content: " \2193"; color: var(--fg); }
tbody.rows tr { cursor: pointer; }
tbody.rows tr:hover { background: #f0f4fa; }
tr.selected { background: #e3ecf8; }
td.win { color: #1f6f35; }
td.loss { color: #a01e1e; }
.chip { display: inline-block; min-width: 26px; padding: 0 4px; border-radius: 3px; text-align: center;
  font-size: 12px; border: 1px solid transparent; }
.chip.non { background: #eceef2; color: #4a5160; }
.chip.rel { color: #fff; }
.chip.unj { border: 1px dashed #9aa1ad; color: #6b7382; background: #fff; }
.lists { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.lists table td { font-size: 12px; }
.lists .doc { text-align: left; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  max-width: 220px; overflow-wrap: anywhere; }
.check { border-left: 4px solid var(--line); padding: 4px 8px; margin: 4px 0; background: var(--panel); }
.check.warning { border-color: #d38b00; background: var(--warnbg); }
.check.note { border-color: #5b8fc7; background: var(--notebg); }
.check.ok { border-color: #6aa878; }
.badge { font-size: 11px; font-weight: 700; text-transform: uppercase; margin-right: 6px; }
.check.warning .badge { color: var(--warn); }
.check.note .badge { color: var(--note); }
.check.ok .badge { color: var(--ok); }
bdi { display: inline-block; max-width: 100%; overflow-wrap: anywhere; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
details > summary { cursor: pointer; color: var(--note); margin: 4px 0; }
.error { color: #a01e1e; background: #fdecec; padding: 10px; border-radius: 4px; }
.pager { display: flex; gap: 8px; align-items: center; margin: 4px 0; }
footer { color: var(--muted); font-size: 12px; padding: 30px 20px 40px; }
canvas.scatter { display: block; border: 1px solid var(--line); cursor: crosshair;
  max-width: 100%; height: auto; }
"""

JS = r"""
'use strict';
const NS = 'http://www.w3.org/2000/svg';
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#7f7f7f'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3'];
const TYPES = {u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, f64: Float64Array};
const NAN16 = 65535, NONE32 = 4294967295, PAGE = 20;
let D = null;
let NQ = 0;
const S = {visible: [], measure: null, a: 0, b: 1, sort: {key: 'gain', dir: -1}, page: 0,
  filter: '', query: -1, distMeasure: null};

// ---------------------------------------------------------------- DOM helpers (text only)
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  put(e, attrs, kids);
  return e;
}
function s(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  put(e, attrs, kids);
  return e;
}
function put(e, attrs, kids) {
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.setAttribute('class', v);
      else if (k === 'text') e.textContent = String(v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    }
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
}
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
// A name or id inside the page's own text, isolated so that its bidi characters (a
// right-to-left override U+202E, an embedding, an isolate, a paragraph separator) cannot
// reorder the text around it: a <bdi> laid out as an inline block (the style sheet), which is
// a paragraph of its own. A plain <bdi> is not enough: a U+2069 in the id would end it early,
// an isolate the id opens would take its end, and a U+2029 would end its paragraph. Where
// only a string fits (SVG titles), a name is isolated with U+2068 and U+2069 (isolate).
function iso(text) { return h('bdi', {text}); }
// A name between U+2068 and U+2069, with a U+2068 before it for each U+2069 it holds
// unopened and a U+2069 after it for each isolate it leaves open, so that its own isolates
// pair among themselves and the outer pair stays whole (messages.isolated, for the page's
// title, does the same in Python).
function isolate(text) {
  let stillOpen = 0, unopened = 0;
  for (const c of text) {
    if (c >= '\u2066' && c <= '\u2068') stillOpen += 1;
    else if (c === '\u2069') { if (stillOpen) stillOpen -= 1; else unopened += 1; }
  }
  return '\u2068'.repeat(unopened + 1) + text + '\u2069'.repeat(stillOpen + 1);
}
// The user-perceived characters of a text (a letter and its accents, an emoji sequence), so
// that a shortened name never ends inside one.
function graphemes(text) {
  if (typeof Intl === 'object' && Intl.Segmenter) {
    return Array.from(new Intl.Segmenter(undefined, {granularity: 'grapheme'}).segment(text),
      part => part.segment);
  }
  return Array.from(text);
}
// A message whose ids are known, its pieces alternating text and ids ([text, id, ..., text]),
// with every id isolated.
function message(pieces) { return pieces.map((piece, i) => (i % 2 ? iso(piece) : piece)); }
function byId(id) { return document.getElementById(id); }
function fmt(x, d) {
  if (x === null || x === undefined || Number.isNaN(x)) return '\u2013';
  return Number(x).toFixed(d === undefined ? 4 : d);
}
function fmtP(p) {
  if (p === null || p === undefined || Number.isNaN(p)) return '\u2013';
  return p < 1e-4 ? '<0.0001' : p.toFixed(4);
}
// A share as a percentage with every digit it has, as plain.percent writes it in Python: the
// shortest decimal that reads back as the number (toExponential() without digits), its point
// moved two places, so 0.99999 reads 99.999%, never 100%, and 0.57 reads 57%, not 56.99...%.
function percent(x) {
  const [digits, power] = Number(x).toExponential().split('e');
  const sign = digits.startsWith('-') ? '-' : '';
  const figures = digits.replace(/[-.]/g, ''), point = Number(power) + 3;
  const whole = point > 0 ? figures.slice(0, point).padEnd(point, '0') : '0';
  const part = point > 0 ? figures.slice(point) : '0'.repeat(-point) + figures;
  return `${sign}${whole.replace(/^0+(?=.)/, '')}${part ? `.${part}` : ''}%`;
}
function color(i) { return PALETTE[i % PALETTE.length]; }
function dash(i) { return DASHES[Math.floor(i / PALETTE.length) % DASHES.length]; }
function visibleSystems() { return D.systems.map((_, i) => i).filter(i => S.visible[i]); }

// ---------------------------------------------------------------- data
async function load() {
  const node = byId('rw-data');
  const raw = atob(node.textContent.replace(/\s+/g, ''));
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  let buf = bytes.buffer;
  if (node.dataset.encoding === 'gzip') {
    if (typeof DecompressionStream === 'undefined') {
      throw new Error('this browser cannot decompress the report data (no DecompressionStream): '
        + 'open the file in a current Chrome, Edge, Firefox or Safari');
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    buf = await new Response(stream).arrayBuffer();
  }
  const head = new Uint8Array(buf, 0, 4);
  if (String.fromCharCode(head[0], head[1], head[2], head[3]) !== 'RWR1') {
    throw new Error('the embedded data is not a rankwise report');
  }
  const length = new DataView(buf).getUint32(4, true);
  const data = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, length)));
  const base = 8 + length + ((8 - (length % 8)) % 8);
  data.blocks = data.blocks.map(b => new TYPES[b.t](buf, base + b.o, b.n));
  return data;
}
function value(m, sys, q) {
  const M = D.values[m], block = D.blocks[M.block];
  const c = block[sys * NQ + q];
  if (block instanceof Float64Array) return c;  // a measure too wide for 16-bit codes
  return c === NAN16 ? NaN : M.lo + (c / 65534) * (M.hi - M.lo);
}
function present(sys, q) { return D.blocks[D.present][sys * NQ + q] === 1; }
function measureInfo(m) { return D.measures.find(x => x.name === m); }
// +1 where a higher value is better, -1 where lower is (MAE, RMSE): a win is sign * diff > 0
function better(m) { return measureInfo(m).higherIsBetter ? 1 : -1; }
function outcome(m, diff) {
  const gain = better(m) * diff;
  return gain > 0 ? 'win' : gain < 0 ? 'loss' : null;
}

// ---------------------------------------------------------------- charts
function niceTicks(lo, hi, count) {
  if (!(hi > lo)) hi = lo + 1;
  const span = hi - lo, raw = span / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(x => x * mag).find(x => span / x <= count) || mag * 10;
  const out = [];
  // by index, not by adding steps: a step below the values' precision (a range of a few
  // ulps, 0.3 to 0.1 + 0.2) would add nothing, and the loop would never end
  const end = hi + 1e-9 * span;
  for (let i = Math.ceil(lo / step - 1e-9); i * step <= end && out.length <= count + 1; i++) {
    const v = i * step;
    out.push(Math.abs(v) < 1e-12 ? 0 : v);
  }
  return out;
}
function tickText(v) {
  if (Math.abs(v) >= 1000 || Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
  return String(Number(v.toPrecision(3)));
}
// The width in pixels of a chart's title as the style sheet draws it (svg.chart .title).
let titleMeasure = null;
function titleWidth(text) {
  if (!titleMeasure) {
    titleMeasure = document.createElement('canvas').getContext('2d');
    titleMeasure.font = '600 13px system-ui, sans-serif';
  }
  return titleMeasure.measureText(text).width;
}
// `name` where fits(name), else its longest start that fits with an ellipsis (a binary
// search), never cut inside a character.
function shortened(name, fits) {
  if (fits(name)) return name;
  const parts = graphemes(name);
  const cut = n => parts.slice(0, n).join('') + '\u2026';
  let lo = 0, hi = parts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (fits(cut(mid))) lo = mid; else hi = mid - 1;
  }
  return cut(lo);
}
// A chart's title: o.title, or o.named = [before, name, after] with the name isolated. Where
// it is wider than `room`, the name (else the title's end) is shortened to fit; {full, shown}
// (shown === full if it fits).
function chartTitle(o, room) {
  const [before, name, after] = o.named || ['', o.title, ''];
  const whole = part => (o.named ? before + isolate(part) + after : part);
  const fits = part => titleWidth(whole(part)) <= room;
  return {full: whole(name), shown: whole(shortened(name, fits))};
}
function frame(o) {
  const W = o.width || 460, H = o.height || 290;
  const titled = Boolean(o.title || o.named);
  const m = {l: 52, r: 14, t: titled ? 26 : 10, b: 42};
  const title = titled ? chartTitle(o, W - m.l - 4) : {full: '', shown: ''};
  const svg = s('svg', {class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
    role: 'img', 'aria-label': title.full});
  const x = v => m.l + ((v - o.xMin) / (o.xMax - o.xMin || 1)) * (W - m.l - m.r);
  const y = v => H - m.b - ((v - o.yMin) / (o.yMax - o.yMin || 1)) * (H - m.t - m.b);
  if (title.shown === title.full && titled) {
    svg.append(s('text', {x: m.l, y: 16, class: 'title', text: title.shown}));
  } else if (titled) {  // shortened: the whole title shows on hover
    svg.append(s('g', {class: 'title'}, s('title', {text: title.full}),
      s('text', {x: m.l, y: 16, class: 'title', text: title.shown})));
  }
  for (const t of o.yTicks || niceTicks(o.yMin, o.yMax, 5)) {
    svg.append(s('line', {x1: m.l, x2: W - m.r, y1: y(t), y2: y(t), class: 'grid'}));
    svg.append(s('text', {x: m.l - 6, y: y(t) + 4, 'text-anchor': 'end', text: tickText(t)}));
  }
  for (const t of o.xTicks || niceTicks(o.xMin, o.xMax, 6)) {
    svg.append(s('line', {x1: x(t), x2: x(t), y1: H - m.b, y2: H - m.b + 4, class: 'axis'}));
    svg.append(s('text', {x: x(t), y: H - m.b + 16, 'text-anchor': 'middle', text: tickText(t)}));
  }
  svg.append(s('line', {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, class: 'axis'}));
  svg.append(s('line', {x1: m.l, x2: m.l, y1: m.t, y2: H - m.b, class: 'axis'}));
  if (o.xLabel) svg.append(s('text', {x: (m.l + W - m.r) / 2, y: H - 8, 'text-anchor': 'middle',
    text: o.xLabel}));
  if (o.yLabel) svg.append(s('text', {x: 14, y: (m.t + H - m.b) / 2, 'text-anchor': 'middle',
    transform: `rotate(-90 14 ${(m.t + H - m.b) / 2})`, text: o.yLabel}));
  return {svg, x, y, W, H, m};
}
function pathOf(xs, ys, x, y, step) {
  let d = '', pen = false;
  for (let i = 0; i < xs.length; i++) {
    const v = ys[i];
    if (v === null || v === undefined || Number.isNaN(v)) { pen = false; continue; }
    d += (pen ? 'L' : 'M') + x(xs[i]).toFixed(1) + ' ' + y(v).toFixed(1);
    if (step && i + 1 < xs.length) d += 'L' + x(xs[i + 1]).toFixed(1) + ' ' + y(v).toFixed(1);
    pen = true;
  }
  return d;
}
function lineChart(o) {
  let top = o.yMax, bottom = 0;  // from 0, or from below it where a mean is negative
  for (const se of o.series) for (const v of se.ys) if (v !== null && v < bottom) bottom = v;
  if (top === undefined) {
    top = 0;
    for (const se of o.series) for (const v of se.ys) if (v !== null && v > top) top = v;
    top = top > 0 ? top * 1.05 : bottom < 0 ? 0 : 1;
  }
  bottom *= 1.05;
  const f = frame({...o, xMin: o.xs[0], xMax: o.xs[o.xs.length - 1], yMin: bottom, yMax: top});
  for (const faint of o.faint || []) {
    let d = '';
    for (const ys of faint.curves) d += pathOf(o.xs, ys, f.x, f.y, false);
    if (d) f.svg.append(s('path', {d, fill: 'none', stroke: faint.color, 'stroke-width': 1,
      'stroke-opacity': 0.16, class: 'faint'}));
  }
  for (const se of o.series) {
    const d = pathOf(o.xs, se.ys, f.x, f.y, o.step);
    if (!d) continue;
    f.svg.append(s('path', {d, fill: 'none', stroke: se.color, 'stroke-width': se.width || 2,
      'stroke-dasharray': se.dash || null, class: 'series'}));
  }
  const box = h('div', {class: 'chartbox'}, f.svg);
  if (o.hover !== false) hover(box, f, o);
  return box;
}
function hover(box, f, o) {
  const tip = h('div', {class: 'tooltip'});
  const rule = s('line', {y1: f.m.t, y2: f.H - f.m.b, stroke: '#8a93a3', 'stroke-dasharray': '3 3',
    visibility: 'hidden'});
  f.svg.append(rule);
  const catcher = s('rect', {x: f.m.l, y: f.m.t, width: f.W - f.m.l - f.m.r,
    height: f.H - f.m.t - f.m.b, fill: 'transparent'});
  f.svg.append(catcher);
  box.append(tip);
  catcher.addEventListener('mousemove', ev => {
    const r = f.svg.getBoundingClientRect();
    const px = (ev.clientX - r.left) * (f.W / r.width);
    let best = 0;
    for (let i = 0; i < o.xs.length; i++) {
      if (Math.abs(f.x(o.xs[i]) - px) < Math.abs(f.x(o.xs[best]) - px)) best = i;
    }
    rule.setAttribute('x1', f.x(o.xs[best]));
    rule.setAttribute('x2', f.x(o.xs[best]));
    rule.setAttribute('visibility', 'visible');
    clear(tip).append(h('div', {}, h('b', {text: `${o.xName || 'x'} = ${o.xs[best]}`})));
    for (const se of o.series) {
      tip.append(h('div', {}, h('span', {class: 'swatch'}), ' ', iso(se.label),
        `: ${fmt(se.ys[best])}`));
      tip.lastChild.firstChild.style.background = se.color;
    }
    tip.style.display = 'block';
    const left = (f.x(o.xs[best]) / f.W) * r.width;
    tip.style.left = `${Math.min(left + 12, r.width - 150)}px`;
    tip.style.top = `${f.m.t}px`;
  });
  catcher.addEventListener('mouseleave', () => {
    tip.style.display = 'none';
    rule.setAttribute('visibility', 'hidden');
  });
}
function legend(indices) {
  return h('div', {class: 'toggles small'}, indices.map(i => {
    const sw = h('span', {class: 'swatch'});
    sw.style.background = color(i);
    return h('span', {}, sw, ` ${D.systems[i].label} ${D.systems[i].name}`);
  }));
}

// ---------------------------------------------------------------- sections
function renderHeader() {
  document.title = D.title;
  const head = byId('head');
  head.append(h('h1', {text: D.title}));
  head.append(h('p', {class: 'muted'}, 'Judgments: ', iso(D.qrels), '. Runs: ',
    D.systems.map((sy, i) => [i ? ', ' : '', `${sy.label} = `, iso(sy.name)]),
    `. ${D.queries.length} queries. Written by rankwise ${D.version}.`));
  const changed = Object.keys(D.conventionsChanged);
  const conv = h('details', {}, h('summary', {text: changed.length
    ? `Conventions: trec_eval's except ${changed.map(k => `${k}=${show(D.conventionsChanged[k])}`).join(', ')}`
    : "Conventions: trec_eval's (every default)"}));
  const table = h('table', {}, h('tr', {}, h('th', {class: 'text', text: 'convention'}),
    h('th', {class: 'text', text: 'value'})));
  for (const [k, v] of Object.entries(D.conventions)) {
    table.append(h('tr', {}, h('td', {class: 'text', text: k}),
      h('td', {class: 'text', text: show(v)})));
  }
  conv.append(table);
  head.append(conv);
}
function show(v) {
  if (v === null) return 'none';
  if (Array.isArray(v)) return v.map(show).join('; ');
  if (typeof v === 'object') return Object.entries(v).map(([a, b]) => `${a}:${b}`).join(', ');
  return String(v);
}
function renderToggles() {
  const box = byId('toggles');
  D.systems.forEach((sy, i) => {
    const sw = h('span', {class: 'swatch'});
    sw.style.background = color(i);
    const input = h('input', {type: 'checkbox', 'data-system': i});
    input.checked = true;
    input.addEventListener('change', () => { S.visible[i] = input.checked; redraw(); });
    box.append(h('label', {title: sy.name}, input, sw, `${sy.label} ${sy.name}`));
  });
}
function renderSummary() {
  const box = clear(byId('summary-body'));
  const C = D.comparison;
  const table = h('table', {class: 'summary'});
  const head = h('tr', {}, h('th', {class: 'text', text: 'system'}));
  for (const m of D.measures) head.append(h('th', {text: m.name, title: m.description}));
  table.append(head);
  D.systems.forEach((sy, i) => {
    const row = h('tr', {}, h('td', {class: 'text'}, `${sy.label} `, iso(sy.name),
      D.baseline === sy.name ? h('span', {class: 'muted small', text: ' (baseline)'}) : null));
    for (const m of D.measures) {
      const e = D.summary[m.name][sy.name];
      const means = D.systems.map(o => D.summary[m.name][o.name].compared_mean).filter(v => v !== null);
      const best = means.length ? (m.higherIsBetter ? Math.max(...means) : Math.min(...means)) : null;
      const cell = h('td', {title: `mean of the ${e.compared_n} queries compared; over its own ${e.n} queries: ${fmt(e.aggregate)}`},
        h('span', {class: e.compared_mean === best && D.systems.length > 1 ? 'best' : null, text: fmt(e.compared_mean)}),
        e.markers ? h('sup', {class: 'mark', text: e.markers}) : null,
        h('span', {class: 'ci', text: `[${fmt(e.ci_low)}, ${fmt(e.ci_high)}]`}));
      row.append(cell);
    }
    table.append(row);
  });
  box.append(h('div', {class: 'scroll'}, table));
  if (C) {
    box.append(h('p', {class: 'small muted'}, 'Markers: ', message(C.legend), '. Brackets: '
      + `${percent(C.confidence)} confidence interval of the mean. `, message(C.describe), '.'));
    const tests = h('table', {id: 'tests'});
    tests.append(h('tr', {}, ['measure', 'system', 'vs', 'difference', 'CI', 'p', 'p adjusted',
      'd', 'wins/ties/losses', ''].map((t, j) => h('th', {class: j < 3 ? 'text' : null, text: t}))));
    for (const t of C.tests) {
      tests.append(h('tr', {}, h('td', {class: 'text', text: t.measure}),
        h('td', {class: 'text', text: t.system}), h('td', {class: 'text', text: t.other}),
        h('td', {class: outcome(t.measure, t.mean_difference),
          text: (t.mean_difference > 0 ? '+' : '') + fmt(t.mean_difference)}),
        h('td', {text: `[${fmt(t.ci_low)}, ${fmt(t.ci_high)}]`}), h('td', {text: fmtP(t.p_value)}),
        h('td', {text: fmtP(t.p_value_corrected)}), h('td', {text: fmt(t.effect_size, 2)}),
        h('td', {text: `${t.wins}/${t.ties}/${t.losses}`}),
        h('td', {text: t.significant ? 'significant' : ''})));
    }
    box.append(h('details', {}, h('summary', {text: `Significance tests (${C.tests.length})`}),
      h('div', {class: 'scroll'}, tests)));
  } else {
    box.append(h('p', {class: 'small muted', text: `One system: brackets are `
      + `${percent(D.confidence)} t confidence intervals of the mean; no test.`}));
  }
}
function renderCurves() {
  const box = clear(byId('curves-body'));
  const vis = visibleSystems();
  const ks = Array.from({length: D.curves.k}, (_, i) => i + 1);
  const charts = h('div', {class: 'charts'});
  for (const fam of Object.keys(D.curves.families)) {
    charts.append(lineChart({title: `${fam}@K`, xs: ks, xName: 'K', xLabel: 'K (cutoff)',
      yLabel: `mean ${fam}@K`, series: vis.map(i => ({label: D.systems[i].name, color: color(i),
        dash: dash(i), ys: D.curves.families[fam][i]}))}));
  }
  box.append(legend(vis), charts);
}
function prSample(sys) {
  const P = D.pr.sample[sys];
  const codes = D.blocks[P.values];
  const L = D.pr.levels.length;
  const curves = [];
  for (let j = 0; j < P.n; j++) {
    const ys = [];
    for (let l = 0; l < L; l++) {
      const c = codes[j * L + l];
      ys.push(c === NAN16 ? NaN : c / 65534);
    }
    curves.push(ys);
  }
  return curves;
}
function renderPR() {
  const box = clear(byId('pr-body'));
  const vis = visibleSystems();
  const xs = D.pr.levels;
  const charts = h('div', {class: 'charts'});
  charts.append(lineChart({title: 'Mean interpolated precision', xs, xName: 'recall',
    xLabel: 'recall', yLabel: 'interpolated precision', yMax: 1,
    series: vis.map(i => ({label: D.systems[i].name, color: color(i), dash: dash(i), ys: D.pr.mean[i]}))}));
  for (const i of vis) {
    const n = D.pr.sample[i].n;
    const name = D.systems[i].name;
    charts.append(lineChart({named: [`${D.systems[i].label} `, name, `: mean and ${n} queries`],
      xs, xName: 'recall', xLabel: 'recall', yLabel: 'interpolated precision', yMax: 1,
      width: 320, height: 250, faint: [{color: color(i), curves: prSample(i)}],
      series: [{label: `${isolate(name)} (mean)`, color: '#c0392b', width: 2.5,
        ys: D.pr.mean[i]}]}));
  }
  box.append(legend(vis), charts);
}
function measureSelect(id, current, onchange) {
  const sel = h('select', {id});
  for (const m of D.measures) {
    const o = h('option', {value: m.name, text: m.name});
    if (m.name === current) o.selected = true;
    sel.append(o);
  }
  sel.addEventListener('change', () => onchange(sel.value));
  return sel;
}
function systemSelect(id, current, onchange) {
  const sel = h('select', {id});
  D.systems.forEach((sy, i) => {
    const o = h('option', {value: i, text: `${sy.label} ${sy.name}`});
    if (i === current) o.selected = true;
    sel.append(o);
  });
  sel.addEventListener('change', () => onchange(Number(sel.value)));
  return sel;
}
// The axis of a measure: the range its values are stored over (its bounds, widened to the
// values outside them: nDCG under negative gains; never empty)
function range(m) {
  const M = D.values[m];
  return [M.lo, M.hi];
}
function renderDist() {
  const box = clear(byId('dist-body'));
  const m = S.distMeasure;
  box.append(h('div', {class: 'controls'}, h('label', {}, 'measure ',
    measureSelect('dist-measure', m, v => { S.distMeasure = v; renderDist(); }))));
  const vis = visibleSystems();
  const [lo, hi] = range(m);
  // box plots: p10-p90 whiskers, p25-p75 box, median line, mean dot (exact, computed before storing)
  const rowH = 30, W = 520, H = 70 + rowH * vis.length;
  const f = frame({width: W, height: H, xMin: lo, xMax: hi, yMin: 0, yMax: vis.length,
    yTicks: [], title: `${m}: per-query distribution`, xLabel: m});
  vis.forEach((i, r) => {
    const e = D.summary[m][D.systems[i].name];
    if (!e.n) return;
    const cy = f.m.t + (r + 0.5) * ((f.H - f.m.t - f.m.b) / vis.length);
    const g = s('g', {class: 'box'});
    g.append(s('title', {text: `${isolate(D.systems[i].name)}: p10 ${fmt(e.p10)}, `
      + `p25 ${fmt(e.p25)}, `
      + `median ${fmt(e.median)}, p75 ${fmt(e.p75)}, p90 ${fmt(e.p90)}, mean ${fmt(e.mean)} `
      + `(${e.n} queries)`}));
    g.append(s('line', {x1: f.x(e.p10), x2: f.x(e.p90), y1: cy, y2: cy, stroke: color(i)}));
    g.append(s('rect', {x: f.x(e.p25), y: cy - 8, width: Math.max(1, f.x(e.p75) - f.x(e.p25)),
      height: 16, fill: color(i), 'fill-opacity': 0.25, stroke: color(i)}));
    g.append(s('line', {x1: f.x(e.median), x2: f.x(e.median), y1: cy - 8, y2: cy + 8,
      stroke: color(i), 'stroke-width': 2}));
    g.append(s('circle', {cx: f.x(e.mean), cy, r: 3.5, fill: '#fff', stroke: color(i), 'stroke-width': 2}));
    g.append(s('text', {x: f.m.l - 6, y: cy + 4, 'text-anchor': 'end', text: D.systems[i].label}));
    f.svg.append(g);
  });
  const boxes = h('div', {class: 'chartbox'}, f.svg);
  // histograms: share of queries per bin, one outline per system
  const bins = 20, xs = [], series = [];
  for (let b = 0; b <= bins; b++) xs.push(lo + (b / bins) * (hi - lo));
  for (const i of vis) {
    const counts = new Array(bins).fill(0);
    let n = 0;
    for (let q = 0; q < NQ; q++) {
      const v = value(m, i, q);
      if (Number.isNaN(v)) continue;
      counts[Math.min(bins - 1, Math.max(0, Math.floor(((v - lo) / (hi - lo)) * bins)))] += 1;
      n += 1;
    }
    series.push({label: D.systems[i].name, color: color(i), dash: dash(i),
      ys: counts.map(c => (n ? c / n : 0)).concat([NaN])});
  }
  const hist = lineChart({title: `${m}: share of queries per bin`, xs, xName: `${m} from`,
    xLabel: m, yLabel: 'share of queries', series, step: true});
  box.append(h('div', {class: 'charts'}, boxes, hist),
    h('p', {class: 'small muted', text: 'Boxes: 25th to 75th percentile, line: median, '
      + 'whiskers: 10th and 90th percentiles, circle: mean. Histograms: 20 bins over the '
      + 'measure\'s range.'}));
}
// side: +1, 0 or -1 as a's exact value is above, equal to or below b's (from the ranks stored
// where the 16-bit codes make different values equal); won: +1 a win for a, -1 a loss
function pairs(m) {
  const rows = [], sign = better(m), M = D.values[m];
  const ranks = M.ranks === undefined ? null : D.blocks[M.ranks];
  for (let q = 0; q < NQ; q++) {
    if (!present(S.a, q) || !present(S.b, q)) continue;
    const a = value(m, S.a, q), b = value(m, S.b, q);
    if (Number.isNaN(a) || Number.isNaN(b)) continue;
    const side = Math.sign(ranks ? ranks[S.a * NQ + q] - ranks[S.b * NQ + q] : a - b);
    rows.push({q, id: D.queries[q], a, b, diff: a - b, gain: sign * (a - b), side,
      won: sign * side});
  }
  return rows;
}
function renderPairControls() {
  const box = clear(byId('pair-controls'));
  box.append(h('label', {}, 'measure ', measureSelect('pair-measure', S.measure, v => { S.measure = v; S.page = 0; redrawPair(); })),
    h('label', {}, 'system ', systemSelect('pair-a', S.a, v => { S.a = v; S.page = 0; redrawPair(); })),
    h('label', {}, 'against ', systemSelect('pair-b', S.b, v => { S.b = v; S.page = 0; redrawPair(); })));
}
function renderScatter() {
  const box = clear(byId('scatter-body'));
  const m = S.measure, rows = pairs(m);
  const [lo, hi] = range(m);
  const size = 440, pad = 46, dpr = window.devicePixelRatio || 1;
  const canvas = h('canvas', {class: 'scatter', width: size * dpr, height: size * dpr, id: 'scatter-canvas'});
  canvas.style.width = `${size}px`;  // its height follows (the style sheet), also scaled down
  const ctx = canvas.getContext('2d');
  ctx.scale(dpr, dpr);
  const X = v => pad + ((v - lo) / (hi - lo)) * (size - pad - 10);
  const Y = v => size - pad - ((v - lo) / (hi - lo)) * (size - pad - 10);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, size, size);
  ctx.strokeStyle = '#8a93a3';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(pad, 10); ctx.lineTo(pad, size - pad); ctx.lineTo(size - 10, size - pad);
  ctx.stroke();
  ctx.fillStyle = '#5b6475';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'center';
  for (const t of niceTicks(lo, hi, 5)) {
    ctx.fillText(tickText(t), X(t), size - pad + 16);
    ctx.save(); ctx.textAlign = 'right'; ctx.fillText(tickText(t), pad - 6, Y(t) + 4); ctx.restore();
  }
  // an axis's system, isolated and shortened to the axis's length
  const axisName = sy => {
    const whole = name => `${sy.label} ${isolate(name)}`;
    const fits = name => ctx.measureText(whole(name)).width <= size - pad - 10;
    return whole(shortened(sy.name, fits));
  };
  ctx.fillText(axisName(D.systems[S.a]), (pad + size) / 2, size - 10);
  ctx.save(); ctx.translate(12, (size - pad) / 2); ctx.rotate(-Math.PI / 2);
  ctx.fillText(axisName(D.systems[S.b]), 0, 0); ctx.restore();
  ctx.strokeStyle = '#c7ccd6';
  ctx.setLineDash([4, 4]);
  ctx.beginPath(); ctx.moveTo(X(lo), Y(lo)); ctx.lineTo(X(hi), Y(hi)); ctx.stroke();
  ctx.setLineDash([]);
  let wins = 0, losses = 0, ties = 0;
  ctx.globalAlpha = rows.length > 2000 ? 0.35 : 0.7;
  for (const r of rows) {
    if (r.won > 0) { wins += 1; ctx.fillStyle = color(S.a); }
    else if (r.won < 0) { losses += 1; ctx.fillStyle = color(S.b); }
    else { ties += 1; ctx.fillStyle = '#7f7f7f'; }
    ctx.beginPath(); ctx.arc(X(r.a), Y(r.b), 2.5, 0, 2 * Math.PI); ctx.fill();
  }
  ctx.globalAlpha = 1;
  const tip = h('div', {class: 'tooltip'});
  const holder = h('div', {class: 'chartbox'}, canvas, tip);
  const nearest = ev => {
    const rect = canvas.getBoundingClientRect(), scale = size / rect.width;
    const px = (ev.clientX - rect.left) * scale, py = (ev.clientY - rect.top) * scale;
    let best = null, bestD = 64;
    for (const r of rows) {
      const d = (X(r.a) - px) ** 2 + (Y(r.b) - py) ** 2;
      if (d < bestD) { bestD = d; best = r; }
    }
    return {best};
  };
  canvas.addEventListener('mousemove', ev => {
    const {best} = nearest(ev), rect = canvas.getBoundingClientRect();
    if (!best) { tip.style.display = 'none'; return; }
    clear(tip).append(h('div', {}, h('b', {text: best.id})),
      h('div', {}, iso(D.systems[S.a].name), `: ${fmt(best.a)}`),
      h('div', {}, iso(D.systems[S.b].name), `: ${fmt(best.b)}`));
    tip.style.display = 'block';
    tip.style.left = `${Math.min(ev.clientX - rect.left + 12, rect.width - 160)}px`;
    tip.style.top = `${ev.clientY - rect.top + 12}px`;
  });
  canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  canvas.addEventListener('click', ev => { const {best} = nearest(ev); if (best) drill(best.q); });
  box.append(holder, h('p', {class: 'small muted', id: 'scatter-caption'},
    `${m} per query: ${rows.length} queries evaluated by both; `, iso(D.systems[S.a].name),
    ` better on ${wins}, `, iso(D.systems[S.b].name), ` better on ${losses}, equal on ${ties}`
      + `${better(m) > 0 ? '' : ` (lower ${m} is better)`}. `
      + 'Click a point to see its ranked lists.'));
}
function renderTable() {
  const box = clear(byId('table-body'));
  const m = S.measure;
  let rows = pairs(m);
  const wins = rows.filter(r => r.won > 0).length, losses = rows.filter(r => r.won < 0).length;
  const needle = S.filter.toLowerCase();
  if (needle) rows = rows.filter(r => r.id.toLowerCase().includes(needle));
  const {key, dir} = S.sort;
  // D.queries is sorted by code point, as rankwise sorts ids (JavaScript's < compares UTF-16
  // units, which puts astral characters before U+E000-U+FFFF): its index is the id's order
  const finer = {diff: 'side', gain: 'won'}[key];  // orders differences the codes make equal
  rows.sort((x, y) => {
    const c = key === 'id' ? x.q - y.q : (x[key] - y[key]) || (finer ? x[finer] - y[finer] : 0);
    return c !== 0 ? dir * c : x.q - y.q;
  });
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  S.page = Math.min(S.page, pages - 1);
  const A = D.systems[S.a], B = D.systems[S.b];
  const filter = h('input', {type: 'search', placeholder: 'filter query ids', id: 'table-filter', value: S.filter});
  filter.addEventListener('input', () => { S.filter = filter.value; S.page = 0; renderTable(); byId('table-filter').focus(); });
  box.append(h('div', {class: 'controls'},
    h('button', {id: 'show-wins', text: `largest wins of ${A.name}`,
      onclick: () => { S.sort = {key: 'gain', dir: -1}; S.page = 0; renderTable(); }}),
    h('button', {id: 'show-losses', text: `largest losses of ${A.name}`,
      onclick: () => { S.sort = {key: 'gain', dir: 1}; S.page = 0; renderTable(); }}),
    filter,
    h('span', {class: 'small muted'}, iso(A.name), ' vs ', iso(B.name),
      ` on ${m}: ${wins} wins, ${losses} losses, ${rows.length} rows shown`)));
  // a name is isolated from the sort arrow the style sheet puts after it
  const cols = [['id', 'query'], ['a', [`${A.label} `, iso(A.name)]],
    ['b', [`${B.label} `, iso(B.name)]], ['diff', 'difference']];
  // wins or losses first is an order of the difference column, its direction the measure's
  const shown = key === 'gain' ? {key: 'diff', dir: dir * better(m)} : {key, dir};
  const head = h('tr', {});
  for (const [k, label] of cols) {
    const th = h('th', {class: k === 'id' ? 'text' : null, 'data-key': k,
      'aria-sort': shown.key === k ? (shown.dir > 0 ? 'ascending' : 'descending') : 'none'},
      h('button', {class: 'sort', onclick: () => {
        S.sort = {key: k, dir: shown.key === k ? -shown.dir : (k === 'id' ? 1 : -1)};
        S.page = 0; renderTable();
      }}, label));
    head.append(th);
  }
  const body = h('tbody', {class: 'rows'});
  for (const r of rows.slice(S.page * PAGE, (S.page + 1) * PAGE)) {
    body.append(h('tr', {class: r.q === S.query ? 'selected' : null, 'data-query': r.q, onclick: () => drill(r.q)},
      h('td', {class: 'text', text: r.id}), h('td', {text: fmt(r.a)}), h('td', {text: fmt(r.b)}),
      h('td', {class: r.won > 0 ? 'win' : r.won < 0 ? 'loss' : null,
        text: (r.side > 0 ? '+' : '') + fmt(r.diff)})));
  }
  box.append(h('div', {class: 'scroll'}, h('table', {id: 'perquery'}, h('thead', {}, head), body)));
  box.append(h('div', {class: 'pager'},
    h('button', {text: '\u2039 previous', id: 'page-prev', disabled: S.page === 0 ? 'disabled' : null,
      onclick: () => { S.page -= 1; renderTable(); }}),
    h('span', {class: 'small', text: `page ${S.page + 1} of ${pages}`}),
    h('button', {text: 'next \u203a', id: 'page-next',
      disabled: S.page >= pages - 1 ? 'disabled' : null,
      onclick: () => { S.page += 1; renderTable(); }})));
}
function gradeChip(code) {
  const G = D.drill;
  if (code === G.noDoc) return null;
  if (code === G.unjudged) return h('span', {class: 'chip unj', title: 'not judged', text: '\u2013'});
  const g = G.levels[code];
  if (!(g >= G.threshold)) {
    return h('span', {class: 'chip non', title: g < 0 ? 'negative grade: counts as unjudged' : 'judged not relevant', text: String(g)});
  }
  const top = Math.max(G.threshold, ...G.levels);
  const t = top > G.threshold ? (g - G.threshold) / (top - G.threshold) : 1;
  const chip = h('span', {class: 'chip rel', title: 'relevant', text: String(g)});
  chip.style.background = `rgb(${Math.round(120 - 90 * t)}, ${Math.round(175 - 70 * t)}, ${Math.round(120 - 80 * t)})`;
  return chip;
}
function docAt(q, sys, r) {
  const Q = D.drill.docs;
  const j = Q.position.get(q);
  if (j === undefined) return null;
  const idx = D.blocks[Q.index][(j * D.systems.length + sys) * D.drill.depth + r];
  return idx === NONE32 ? null : Q.dict[idx];
}
function drill(q) {
  S.query = q;
  const box = clear(byId('drill-body'));
  const search = h('input', {type: 'search', id: 'drill-input', placeholder: 'query id', value: q >= 0 ? D.queries[q] : ''});
  const go = () => {
    const at = D.queryIndex.get(search.value);
    if (at === undefined) {
      clear(byId('drill-message')).append('no query ', iso(JSON.stringify(search.value)),
        ' in this report');
      return;
    }
    drill(at);
  };
  search.addEventListener('keydown', ev => { if (ev.key === 'Enter') go(); });
  box.append(h('div', {class: 'controls'}, h('label', {}, 'query ', search), h('button', {text: 'show', onclick: go}),
    h('span', {class: 'small muted', id: 'drill-message'})));
  if (q < 0) return;
  for (const tr of document.querySelectorAll('#perquery tr[data-query]')) {
    tr.classList.toggle('selected', Number(tr.dataset.query) === q);
  }
  const vis = visibleSystems();
  box.append(h('h3', {}, 'Query ', h('code', {text: D.queries[q]})));
  const table = h('table', {}, h('tr', {}, h('th', {class: 'text', text: 'measure'}),
    vis.map(i => h('th', {class: 'system', text: `${D.systems[i].label} ${D.systems[i].name}`}))));
  for (const m of D.measures) {
    table.append(h('tr', {}, h('td', {class: 'text', text: m.name}),
      vis.map(i => h('td', {text: present(i, q) ? fmt(value(m.name, i, q)) : 'not in run'}))));
  }
  table.append(h('tr', {}, h('td', {class: 'text', text: `relevant documents (grade \u2265 ${D.drill.threshold})`}),
    vis.map(i => h('td', {text: present(i, q) ? String(D.blocks[D.relevant][i * NQ + q]) : '\u2013'}))));
  box.append(h('div', {class: 'scroll'}, table));
  const hasDocs = D.drill.docs.position.has(q);
  if (!hasDocs) {
    box.append(h('p', {class: 'small muted', text: 'Document ids of this query were not stored '
      + `(the report keeps them for ${D.drill.docs.stored} of ${NQ} queries, those with the `
      + 'largest differences to the baseline, to stay small; rankwise report --doc-budget '
      + 'raises the limit). Grades are shown.'}));
  }
  const lists = h('div', {class: 'lists'});
  const codes = D.blocks[D.drill.grades];
  for (const i of vis) {
    const t = h('table', {}, h('tr', {}, h('th', {text: '#'}),
      hasDocs ? h('th', {class: 'text', text: 'document'}) : null, h('th', {text: 'grade'})));
    let shown = 0;
    for (let r = 0; r < D.drill.depth; r++) {
      const code = codes[(i * NQ + q) * D.drill.depth + r];
      if (code === D.drill.noDoc) break;
      shown += 1;
      t.append(h('tr', {}, h('td', {text: String(r + 1)}),
        hasDocs ? h('td', {class: 'doc', text: docAt(q, i, r) || ''}) : null,
        h('td', {}, gradeChip(code))));
    }
    const title = h('div', {class: 'small'}, h('span', {class: 'swatch'}), ` ${D.systems[i].label} ${D.systems[i].name}`);
    title.firstChild.style.background = color(i);
    const empty = h('p', {class: 'small muted', text: present(i, q) ? 'empty ranking' : 'not in this run'});
    lists.append(h('div', {}, title, present(i, q) && shown ? t : empty));
  }
  box.append(h('p', {class: 'small muted', text: `Top ${D.drill.depth} ranks under the `
    + "conventions' tie order. Green: relevant (darker = higher grade); grey: judged not "
    + 'relevant; dashed: not judged.'}), lists);
}
function renderDiagnostics() {
  const box = clear(byId('diagnostics-body'));
  D.systems.forEach((sy) => {
    const card = h('div', {class: 'card'}, h('h3', {text: `${sy.label} ${sy.name}`}),
      h('p', {class: 'small', text: sy.summaryLine}));
    const order = {warning: 0, note: 1, ok: 2};
    const checks = sy.checks.slice().sort((x, y) => order[x.severity] - order[y.severity]);
    const ok = h('details', {}, h('summary', {text: `checked, nothing found (${checks.filter(c => c.severity === 'ok').length})`}));
    for (const c of checks) {
      const item = h('div', {class: `check ${c.severity}`, 'data-code': c.code},
        h('span', {class: 'badge', text: c.severity}), message(c.message),
        c.examples.length ? h('span', {class: 'small muted'}, ' (e.g. ',
          c.examples.map((e, k) => [k ? ', ' : '', iso(e)]), ')') : null);
      (c.severity === 'ok' ? ok : card).append(item);
    }
    card.append(ok);
    const counts = h('table', {});
    for (const [k, label] of Object.entries(D.countLabels)) {
      if (!(k in sy.diagnostics)) continue;
      counts.append(h('tr', {}, h('td', {class: 'text', text: label}),
        h('td', {text: String(sy.diagnostics[k])})));
    }
    card.append(h('details', {}, h('summary', {text: 'every count'}), counts));
    box.append(card);
  });
  if (D.comparison && D.comparison.warnings.length) {
    const card = h('div', {class: 'card'}, h('h3', {text: 'Comparison'}));
    for (const w of D.comparison.warnings) {
      card.append(h('div', {class: 'check warning'},
        h('span', {class: 'badge', text: 'warning'}), message(w)));
    }
    box.append(card);
  }
}
function redrawPair() { renderPairControls(); renderScatter(); renderTable(); }
function redraw() { renderCurves(); renderPR(); renderDist(); if (S.query >= 0) drill(S.query); }

async function main() {
  const t0 = performance.now();
  try {
    D = await load();
  } catch (err) {
    byId('head').append(h('p', {class: 'error', text: `The report could not be read: ${err.message}`}));
    document.body.dataset.ready = 'error';
    return;
  }
  NQ = D.queries.length;
  D.queryIndex = new Map(D.queries.map((q, i) => [q, i]));
  const docs = D.drill.docs;
  docs.position = new Map(Array.from(D.blocks[docs.queries], (q, j) => [q, j]));
  S.visible = D.systems.map(() => true);
  S.measure = D.measures[0].name;
  S.distMeasure = S.measure;
  S.a = D.systems.length > 1 ? D.systems.findIndex(x => x.name !== D.baseline) : 0;
  S.b = Math.max(0, D.systems.findIndex(x => x.name === D.baseline));
  renderHeader();
  renderToggles();
  renderSummary();
  renderCurves();
  renderPR();
  renderDist();
  renderPairControls();
  renderScatter();
  renderTable();
  const first = document.querySelector('#perquery tr[data-query]');
  drill(first ? Number(first.dataset.query) : (NQ ? 0 : -1));
  renderDiagnostics();
  window.rankwiseReport = {renderMs: performance.now() - t0, queries: NQ, systems: D.systems.length};
  document.body.dataset.ready = 'true';
}
main();
"""
