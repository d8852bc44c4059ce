// One cell's samples on a run's page (#/run/ID/cell/N, GET /api/runs/ID/cells/N): one dot per
// repetition in run order, so that a wide interval can be seen for what it is, and the values
// listed beside.

import {h, svg, clear, rowLink} from '../dom.js';
import {fmtNum, fmtValue} from '../format.js';

export const cellHref = (run, cell) =>
    `#/run/${encodeURIComponent(run)}/cell/${encodeURIComponent(cell)}`;

// The strip plot's value range: the values and the table's median and CI, widened when they
// are all one number so that the dots sit inside the plot.
export function stripRange(c) {
    const ys = (c.values || []).filter((v) => Number.isFinite(v.value)).map((v) => v.value);
    for (const k of ['median', 'ci95_low', 'ci95_high'])
        if (Number.isFinite(c[k]))
            ys.push(c[k]);
    let lo = Math.min(...ys), hi = Math.max(...ys);
    if (!(hi > lo)) {
        const pad = Math.abs(lo) * 0.1 || 1;
        lo -= pad;
        hi += pad;
    }
    return {lo, hi};
}

// The strip plot of a cell's values in run order: x the job's place, y its value; warm-ups
// hollow, values the table leaves out grey, the table's CI a band and its median a line.
export function stripPlot(c) {
    const W = 560, H = 160, L = 72, R = 8, T = 10, B = 10;
    const {lo, hi} = stripRange(c);
    const n = (c.values || []).length;
    const x = (i) => L + (n <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
    const y = (v) => T + ((hi - v) * (H - T - B)) / (hi - lo);
    const plot = svg('svg', {id: 'run-samples-plot', viewBox: `0 0 ${W} ${H}`, width: W, height: H,
        role: 'img', 'aria-label': `${n} repetitions of ${c.test} on ${c.row}`, class: 'strip'});
    // The axis: its two ends and the median, in the table's notation.
    const label = (v, cls) => svg('text', {class: cls, x: L - 6, y: y(v) + 4, 'text-anchor': 'end',
        'font-size': 11, fill: 'currentColor'}, document.createTextNode(fmtValue(v, c.unit)));
    plot.append(svg('line', {x1: L - 2, x2: L - 2, y1: T, y2: H - B, stroke: '#999'}),
        label(hi, 'axis-hi'), label(lo, 'axis-lo'));
    if (Number.isFinite(c.ci95_low) && Number.isFinite(c.ci95_high))
        plot.append(svg('rect', {class: 'ci', x: L, width: W - L, y: y(c.ci95_high),
            height: Math.max(1, y(c.ci95_low) - y(c.ci95_high)), fill: '#0072b2',
            'fill-opacity': 0.12}));
    if (Number.isFinite(c.median))
        plot.append(svg('line', {class: 'median', x1: L, x2: W, y1: y(c.median), y2: y(c.median),
            stroke: '#0072b2', 'stroke-width': 2, 'stroke-dasharray': '6 3'}));
    (c.values || []).forEach((v, i) => {
        if (!Number.isFinite(v.value))
            return;
        const colour = v.counted ? '#d55e00' : '#777';
        plot.append(svg('circle', {class: 'sample', cx: x(i), cy: y(v.value), r: 5,
            'data-job': v.job, 'data-warmup': v.warmup ? '1' : '0',
            'data-counted': v.counted ? '1' : '0', fill: v.warmup ? 'none' : colour,
            stroke: colour, 'stroke-width': 2},
        svg('title', {}, document.createTextNode(
            `${v.warmup ? 'warm-up' : 'rep'} ${v.repetition}: ${fmtValue(v.value, c.unit)}`))));
    });
    return plot;
}

// Whether the table counts a value, and the agent's reason when its host was disturbed.
export function sampleNote(v) {
    const why = v.disturbed && v.disturbed_reason ? `: ${v.disturbed_reason}` : '';
    if (v.counted)
        return v.disturbed ? ` (disturbed, counted${why})` : '';
    if (v.warmup)
        return ' (not counted)';
    return v.disturbed ? ` (disturbed, not counted${why})` : ' (not counted)';
}

// The line of the cell's figures: its median and CI, or why it has none.
export function cellFigures(c) {
    if (Number.isFinite(c.median))
        return `median ${fmtValue(c.median, c.unit)} [${fmtNum(c.ci95_low)}, ` +
            `${fmtNum(c.ci95_high)}] n=${c.n}`;
    return c.n === 0 ? 'no median: the table counts none of these values' : 'no median yet';
}

// The cell's values from the API, in run order, with the table's median and CI, drawn into
// box (the page's #run-samples); runId: the run, for the link that closes it.
export function showSamples(box, c, runId) {
    clear(box);
    box.hidden = false;
    const list = h('ol', {id: 'run-samples-list', class: 'samples'},
        (c.values || []).map((v) => h('li', {'data-job': v.job,
            'data-warmup': v.warmup ? '1' : '0', 'data-counted': v.counted ? '1' : '0'},
        h('a', {href: `/api/jobs/${encodeURIComponent(v.job)}`}, `#${v.job}`), ' ',
        v.warmup ? `warm-up ${v.repetition}` : `rep ${v.repetition}`, ': ',
        Number.isFinite(v.value) ? fmtValue(v.value, c.unit) : v.state,
        sampleNote(v))));
    box.append(
        h('h2', {}, `Cell ${c.cell}: `, rowLink(c.row), `, ${c.test}`),
        h('p', {id: 'run-samples-figures'}, `${c.metric}: ${cellFigures(c)}`,
            ' ', h('a', {href: `#/run/${encodeURIComponent(runId)}`, class: 'hint'}, 'close')),
        h('p', {class: 'hint'}, 'One dot per repetition in run order; warm-ups hollow, ' +
            'values the table leaves out grey; the line is the median, the band its 95% CI.'),
        stripPlot(c), list);
}

// The cell's samples could not be had: the reason in the box.
export function showSamplesError(box, cell, e) {
    clear(box);
    box.hidden = false;
    box.append(h('p', {class: 'error', role: 'alert'}, `cell ${cell}: ${e.message}`));
}
