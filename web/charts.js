// Charts and colour scales of a run's results: one dot-and-interval plot per test (SVG), drawn
// as small multiples, and the pair heatmap's scale of deviations from the median. (The Trends
// view draws with Chart.js, loaded as vendor/chart.umd.js; it shares the palette here.)

import {h, svg, fmtNum, fmtValue, changeText} from './dom.js';

// Okabe and Ito's palette: told apart with every common colour-vision deficiency.
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00',
    '#F0E442', '#000000'];

// WCAG relative luminance of an sRGB colour.
function luminance(rgb) {
    const [r, g, b] = rgb.map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

// The pair heatmap's neutral cell: a deviation the analysis would never flag.
export const NEUTRAL = {bg: 'rgb(238, 241, 244)', fg: '#000'};

// A relative deviation from the fleet's median -> {bg, fg}. Within floor (the analysis' flag
// floor) neutral; past it the palette's blue above and vermillion below, told apart with every
// common colour-vision deficiency, deeper up to span. The text is black or white, whichever
// contrasts more with the cell (WCAG's ratio).
export function deviationColour(dev, floor, span) {
    if (!Number.isFinite(dev) || Math.abs(dev) < floor)
        return NEUTRAL;
    const k = Math.min(1, (Math.abs(dev) - floor) / Math.max(span - floor, 1e-9));
    const hue = dev > 0 ? [0, 114, 178] : [213, 94, 0];
    const c = hue.map((v) => Math.round(255 + (v - 255) * (0.3 + 0.7 * k)));
    const L = luminance(c);
    const onWhite = 1.05 / (L + 0.05), onBlack = (L + 0.05) / 0.05;
    return {bg: `rgb(${c[0]}, ${c[1]}, ${c[2]})`, fg: onBlack >= onWhite ? '#000' : '#fff'};
}

// Whether bars of these cells are better read on a log axis: the positive medians span more
// than 10x, so that the small ones would be invisible beside the large ones.
export function wantsLog(groups) {
    const v = groups.flatMap((g) => g.cells.map((c) => (c ? c.median : NaN)))
        .filter((x) => Number.isFinite(x) && x > 0);
    return v.length > 1 && Math.max(...v) / Math.min(...v) > 10;
}

const FLAG = '#D55E00'; // the palette's vermillion: the flagged host
const MUTED = '#767676';


// A host's label under its slot: a link to its page, as hostLink() makes it in HTML.
function svgHostLink(name, attrs) {
    return svg('a', {href: '#/hosts/' + encodeURIComponent(name), class: 'host-link'},
        svg('text', attrs, name));
}

// The value axis of one plot. Log when the positive figures span more than 10x; then the
// smallest figure keeps HEADROOM of the height below it (never a sliver on the axis) and every
// decade (or 1-2-5 step, when fewer than two decades show) is labelled. Linear from zero.
const HEADROOM = 0.3, TOPROOM = 0.08;
function valueAxis(values) {
    const pos = values.filter((v) => Number.isFinite(v) && v > 0);
    const all = values.filter(Number.isFinite);
    const log = pos.length > 1 && Math.max(...pos) / Math.min(...pos) > 10;
    if (log) {
        const a = Math.log10(Math.min(...pos)), b = Math.log10(Math.max(...pos));
        const total = Math.max(b - a, 0.3) / (1 - HEADROOM - TOPROOM);
        const lo = a - HEADROOM * total, hi = b + TOPROOM * total;
        let ticks = [];
        for (let k = Math.ceil(lo); k <= Math.floor(hi); k++)
            ticks.push(10 ** k);
        if (ticks.length < 3) {
            ticks = [];
            for (let k = Math.floor(lo); k <= Math.ceil(hi); k++)
                for (const m of [1, 2, 5])
                    if (Math.log10(m * 10 ** k) >= lo && Math.log10(m * 10 ** k) <= hi)
                        ticks.push(m * 10 ** k);
        }
        return {log, ticks, frac: (v) => (Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)};
    }
    const top = all.length ? Math.max(...all, 0) : 1;
    const bottom = all.length ? Math.min(...all, 0) : 0;
    const span = top - bottom || Math.abs(top) || 1;
    const hi = top + span * TOPROOM;
    const step = niceStep(span / 4);
    const ticks = [];
    for (let v = Math.ceil(bottom / step) * step; v <= hi; v += step)
        ticks.push(Number(v.toPrecision(12)));
    return {log, ticks, frac: (v) => (v - bottom) / (hi - bottom)};
}

function niceStep(raw) {
    const p = 10 ** Math.floor(Math.log10(raw || 1));
    const m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

// Why a cell has no point, or a point to be read with care, in the exports' words.
function cellNote(row, c) {
    if (!c)
        return `${row}: not measured`;
    if (!Number.isFinite(c.median)) {
        if (c.disturbed)
            return `${row}: no figure, its ${c.disturbed} disturbed sample${c.disturbed === 1 ? '' : 's'}` +
                ' left out of the statistics';
        if (c.limited)
            return `${row}: no figure, slower than its time limit allows`;
        if (c.failed)
            return `${row}: no figure, ${c.failed} job${c.failed === 1 ? '' : 's'} failed`;
        return `${row}: no figure yet`;
    }
    if (c.disturbed)
        return `${row}: ${c.disturbed} disturbed sample${c.disturbed === 1 ? '' : 's'} ` +
            'left out of the median';
    return null;
}

// One test's plot: a slot per host (or pair) with its median as a dot and its 95% interval as
// a whisker; the flagged host's dot in vermillion with its factor beside it ("315x slower");
// a cell without a figure drawn as an empty ring on the axis, said why in a note below.
// col: {label, short, metric, unit}; cells: [cell|null per row]; flags: [anomaly|null per row].
export function dotPlot({rows, col, cells, flags}) {
    const T = 14, B = 46, L = 58, SLOT = Math.max(44, Math.min(80, 240 / Math.max(rows.length, 1)));
    const R = flags.some(Boolean) ? 86 : 12;
    const W = L + rows.length * SLOT + R, H = 250;
    const values = cells.flatMap((c) => (c ? [c.median, c.ci95_low, c.ci95_high] : []));
    const ax = valueAxis(values);
    const y = (v) => H - B - ax.frac(v) * (H - T - B);
    const x = (i) => L + (i + 0.5) * SLOT;
    const plot = svg('svg', {class: 'dotplot', viewBox: `0 0 ${W} ${H}`, width: W, height: H,
        role: 'img', 'aria-label': `${col.label}: median and 95% interval per host` +
            (ax.log ? ', log scale' : '')});
    for (const t of ax.ticks) {
        plot.append(svg('line', {class: 'grid', x1: L, x2: W - R + 6, y1: y(t), y2: y(t),
            stroke: '#e3e3e3'}));
        plot.append(svg('text', {class: 'tick', x: L - 5, y: y(t) + 4, 'text-anchor': 'end',
            'font-size': 11, fill: '#333'}, fmtNum(t)));
    }
    plot.append(svg('line', {class: 'axis-y', x1: L, x2: L, y1: T, y2: H - B, stroke: '#888'}),
        svg('line', {class: 'axis-x', x1: L, x2: W - R + 6, y1: H - B, y2: H - B, stroke: '#888'}),
        svg('text', {class: 'axis-title', x: 12, y: (H - B + T) / 2, 'font-size': 11, fill: '#333',
            'text-anchor': 'middle', transform: `rotate(-90 12 ${(H - B + T) / 2})`},
        `${col.unit === 'x' ? 'ratio' : col.unit}${ax.log ? ', log scale' : ''}`));
    const notes = [];
    rows.forEach((row, i) => {
        const c = cells[i], a = flags[i];
        const long = rows.some((r) => r.length > 6);
        plot.append(svgHostLink(row, {x: x(i), y: H - B + 16, 'font-size': 11,
            'text-anchor': long ? 'end' : 'middle', fill: a ? FLAG : '#222',
            'font-weight': a ? 'bold' : null,
            transform: long ? `rotate(-30 ${x(i)} ${H - B + 16})` : null}));
        const note = cellNote(row, c);
        if (note)
            notes.push(note);
        if (!c || !Number.isFinite(c.median)) {
            plot.append(svg('circle', {class: 'point missing', cx: x(i), cy: H - B - 8, r: 5,
                'data-host': row, 'data-state': c && c.disturbed ? 'disturbed' : 'missing',
                fill: 'none', stroke: MUTED, 'stroke-dasharray': '2 2', 'stroke-width': 1.5},
            svg('title', {}, note)));
            plot.append(svg('text', {class: 'missing-mark', x: x(i), y: H - B - 18,
                'text-anchor': 'middle', 'font-size': 10, fill: MUTED},
            c && c.disturbed ? 'disturbed' : 'no data'));
            return;
        }
        const colour = a ? FLAG : PALETTE[0];
        if (Number.isFinite(c.ci95_low) && Number.isFinite(c.ci95_high)) {
            const y1 = y(c.ci95_high), y2 = y(c.ci95_low);
            plot.append(svg('path', {class: 'ci', stroke: colour, 'stroke-width': 1.5, fill: 'none',
                d: `M${x(i)} ${y1}V${y2}M${x(i) - 5} ${y1}h10M${x(i) - 5} ${y2}h10`}));
        }
        const title = `${row}: median ${fmtValue(c.median, col.unit)}, 95% CI ` +
            `[${fmtNum(c.ci95_low)}, ${fmtNum(c.ci95_high)}], n=${c.n}` +
            (c.disturbed ? `, ${c.disturbed} disturbed left out` : '');
        plot.append(svg('circle', {class: 'point' + (a ? ' flagged' : '') +
                (c.disturbed ? ' disturbed' : ''), cx: x(i), cy: y(c.median), r: a ? 6 : 4.5,
            'data-host': row, 'data-median': c.median, fill: c.disturbed ? '#fff' : colour,
            stroke: colour, 'stroke-width': 2}, svg('title', {}, title)));
        if (a) {
            const [change] = changeText(a);
            const left = i === rows.length - 1 && R < 40;
            plot.append(svg('text', {class: 'factor', 'data-host': row, x: x(i) + (left ? -10 : 10),
                y: y(c.median) + 4, 'text-anchor': left ? 'end' : 'start', 'font-size': 12,
                'font-weight': 'bold', fill: FLAG}, change));
        }
    });
    return {plot, notes, log: ax.log};
}

// Every test of a table as small multiples, one dotPlot each (no picking one at a time).
// t: the API's JSON table; cell(r, col): its cells indexed; flagOf(row, label): the anomaly
// that flags that row in that test, or null. Each figure says what it drew in data-column,
// data-scale ("log" or "linear") and data-flagged (the flagged rows, comma-separated).
export function smallMultiples(id, t, cell, flagOf) {
    const rows = t.rows || [];
    const figs = (t.columns || []).map((col, k) => {
        const cells = rows.map((_r, r) => cell(r, k));
        const flags = rows.map((r) => flagOf(r, col.label));
        const {plot, notes, log} = dotPlot({rows, col, cells, flags});
        return h('figure', {class: 'dotplot-fig', 'data-column': col.label,
            'data-scale': log ? 'log' : 'linear',
            'data-flagged': rows.filter((_r, i) => flags[i]).join(',')},
        h('figcaption', {title: col.label},
            h('strong', {}, col.short || col.label), ` (${col.unit === 'x' ? 'ratio' : col.unit})`),
        h('div', {class: 'dotplot-box'}, plot),
        notes.length ? h('ul', {class: 'plot-notes'}, notes.map((n) => h('li', {}, n))) : null);
    });
    return h('div', {id, class: 'small-multiples'}, figs,
        figs.length ? null : h('p', {class: 'hint'}, 'No results yet.'));
}
