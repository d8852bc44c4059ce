// The charts of a run's results: one dot-and-interval plot per test (SVG), drawn as small
// multiples. Their axes and colours are scales.js's (the Trends view draws with Chart.js,
// loaded as vendor/chart.umd.js, on the same palette).

import {h, svg} from '../dom.js';
import {fmtNum, fmtValue, changeText} from '../format.js';
import {PALETTE, valueAxis} from '../scales.js';

const FLAG = '#D55E00'; // the palette's vermillion: the flagged host
const MUTED = '#767676';

// A host's label under its slot: a link to its page, as hostLink() makes it in HTML.
function svgHostLink(name, attrs) {
    return svg('a', {href: '#/hosts/' + encodeURIComponent(name), class: 'host-link'},
        svg('text', attrs, name));
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
