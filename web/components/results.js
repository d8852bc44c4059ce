// A run's results as the run page and the compare view show them: the table of medians with
// their 95% intervals per host (or pair) and test, from GET /api/runs/ID/table, its flagged
// rows marked from GET /api/runs/ID/anomalies. Nothing is recomputed in the browser.

import {h, rowLink} from '../dom.js';
import {fmtNum} from '../format.js';

// The table's cells as [row][column] lookups; row and column may travel as numbers or strings.
export function indexCells(list) {
    const m = new Map();
    for (const c of list || [])
        m.set(`${Number(c.row)},${Number(c.column)}`, {
            ...c,
            n: Number(c.n),
            median: c.median === null ? NaN : Number(c.median),
            ci95_low: c.ci95_low === null ? NaN : Number(c.ci95_low),
            ci95_high: c.ci95_high === null ? NaN : Number(c.ci95_high),
            cv: c.cv === null ? NaN : Number(c.cv),
            failed: Number(c.failed) || 0,
            disturbed: Number(c.disturbed) || 0,
        });
    return (r, col) => m.get(`${r},${col}`) || null;
}

export function splitPair(label) {
    const i = label.indexOf('->');
    return i < 0 ? null : [label.slice(0, i), label.slice(i + 2)];
}

// Whether a table row (a host, or "client->server") carries one of the anomalies: its own, or
// a slow host in the role that row gives it.
export function rowAnomalies(label, anomalies) {
    const pair = splitPair(label);
    return anomalies.filter((a) => a.host === label ||
        (a.kind === 'slow-host' && pair && pair[a.role === 'server' ? 1 : 0] === a.host));
}

// "N disturbed" and "N failed", as the exports write them; disturbed samples are counted but
// not summarised unless the table was asked for with disturbed=include. Those that were
// measured again as often as the run's remeasure allows, and still were, say so.
function counts(c) {
    const limited = c.limited ? `${c.limited} at time limit` : '';
    const failed = c.failed > (c.limited || 0) ? `${c.failed - (c.limited || 0)} failed` : '';
    const ranOut = c.stopped === 'disturbed' ? ' (remeasure ran out)' : '';
    return [c.disturbed ? `${c.disturbed} disturbed${ranOut}` : '', limited, failed]
        .filter(Boolean).join(', ');
}

// A cell without a value whose jobs ran into their time limit: the bound it passed, as the
// Markdown table writes it ("> 60" s), or "> limit" when the limit gives none (a rate).
function limitText(c, unit) {
    if (!c.limited)
        return '';
    return Number.isFinite(c.limit_bound) ? `> ${fmtNum(c.limit_bound)} ${unit}` : '> limit';
}

function cellBox(c, unit) {
    if (!c)
        return h('td', {class: 'num empty'}, '');
    const extra = counts(c);
    if (!Number.isFinite(c.median)) {
        const bound = limitText(c, unit);
        return h('td', {class: 'num empty' + (c.failed ? ' bad' : '') + (c.disturbed ? ' disturbed' : ''),
            title: extra + (c.noisy_reason ? ` (noisy: ${c.noisy_reason})` : '') +
                (bound ? ': slower than its time limit allows' : '')},
        bound ? h('span', {class: 'median limit'}, bound) : '', bound ? h('span', {class: 'ci'}, extra) : extra);
    }
    // Adaptive repetitions that ran out before the interval was tight say so, as "(max)".
    const max = c.stopped === 'max' ? ' (max)' : '';
    // "~" is the API's ci_short (the interval covers less than 95%), as the exports mark it;
    // noise (CV) is told on hover, never as "~".
    const short = c.ci_short === true;
    return h('td', {class: 'num' + (short ? ' ci-short' : '') + (c.noisy ? ' noisy' : '') +
            (c.disturbed ? ' disturbed' : ''),
        title: `median ${fmtNum(c.median)} ${unit}, 95% CI [${fmtNum(c.ci95_low)}, ` +
            `${fmtNum(c.ci95_high)}], n=${c.n}, CV ${fmtNum(c.cv * 100)}%` +
            (short ? ` (~: the interval covers ${fmtNum(c.ci_coverage * 100)}%, less than 95%)` : '') +
            (c.noisy && c.noisy_reason ? ` (noisy: ${c.noisy_reason})` : '') + (extra ? `, ${extra}` : '') +
            (c.disturbed ? ' (disturbed samples are not in the median)' : '') +
            (max ? ' (repetitions stopped on max before the CI was tight)' : '') +
            (c.coarse ? ' (coarse: CPU times of a tick or two, never judged)' : '')},
    h('span', {class: 'median'}, fmtNum(c.median)),
    // The interval stays on one line; the counts below it may wrap, so that a column is as
    // wide as its numbers, not as its notes.
    h('span', {class: 'ci'}, `[${fmtNum(c.ci95_low)}, ${fmtNum(c.ci95_high)}]`),
    h('span', {class: 'count'}, `n=${c.n}${max}` + (extra ? `, ${extra}` : '')));
}

// (row, test label) -> the anomaly that flags that row in that test (a value column's, not a
// ratio's), or null: what the plots mark.
export function flagFinder(t, anomalies) {
    return (row, label) => anomalies.find((a) => a.test === label && !a.ratio &&
        rowAnomalies(row, [a]).length > 0) || null;
}

// The host (or pair) table: every column and ratio column of the JSON table, and its flags.
export function hostTable(id, t, anomalies) {
    const cell = indexCells(t.cells), ratio = indexCells(t.ratios);
    const cols = t.columns || [], rcols = t.ratio_columns || [];
    const flags = new Map((t.flags || []).map((f) => [Number(f.row), f.flag]));
    const flagged = (row, label, isRatio) => anomalies.some((a) => a.test === label &&
        !!a.ratio === isRatio && rowAnomalies(row, [a]).length > 0);
    const body = (t.rows || []).map((row, r) => {
        const mine = rowAnomalies(row, anomalies);
        const tds = [
            ...cols.map((c, i) => cellBox(cell(r, i), c.unit)),
            ...rcols.map((c, i) => cellBox(ratio(r, i), c.unit)),
        ];
        [...cols, ...rcols].forEach((c, i) => {
            if (flagged(row, c.label, i >= cols.length))
                tds[i].classList.add('flagged');
        });
        return h('tr', {'data-host': row, class: mine.length ? 'anomalous' : null},
            h('th', {scope: 'row', title: mine.length ? `${mine.length} anomalies` : null}, rowLink(row)),
            tds,
            h('td', {class: 'flags'}, flags.get(r) || ''));
    });
    return h('table', {id, class: 'data matrix'},
        h('caption', {}, (t.pairs ? 'pairs (client->server)' : 'hosts') +
            `: median [95% CI] n; ${TILDE_RULE}; ` +
            'ratio columns pair repetition with repetition; a header\'s full name on hover'),
        h('thead', {}, h('tr', {},
            h('th', {scope: 'col'}, t.pairs ? 'client->server' : 'host'),
            cols.map((c) => headerCell(c, 'num')),
            rcols.map((c) => headerCell(c, 'num ratio')),
            h('th', {scope: 'col', class: 'flags'}, 'flags'))),
        h('tbody', {}, body));
}

// What "~" means, in the exports' words (coordinator/analysis/table.h SM_TABLE_TILDE_RULE).
const TILDE_RULE = '~ marks an interval that covers less than 95% (below 6 samples it is [min, max])';

// A ratio's unit "x" reads "ratio" in a header, as the Markdown export writes it.
export const unitText = (u) => (u === 'x' ? 'ratio' : u);

// The API's short header, the full label on hover.
function headerCell(c, cls) {
    return h('th', {scope: 'col', class: cls, 'data-label': c.label,
        title: `${c.label}: ${c.metric} (${unitText(c.unit)})`},
    `${c.short || c.label} (${unitText(c.unit)})`);
}

