// Compare hosts: within one run, its hosts (or pairs) side by side: every test as a dot-and-
// interval plot, a pair heatmap, the anomalies with their evidence, the tables and the exports;
// and, below, "compare runs" (compare_runs.js). Everything here is drawn from the API's JSON
// table and anomalies; no statistic is recomputed in the browser, so the page and
// `sockmatrix export` agree.

import {api, tableUrl, getToken, download} from '../api.js';
import {h, clear, scrollBox, hostLink} from '../dom.js';
import {fmtNum, fmtPercent} from '../format.js';
import {anomalyItem} from '../components/anomaly.js';
import {deviationColour, NEUTRAL} from '../scales.js';
import {smallMultiples} from '../components/charts.js';
import {indexCells, splitPair, hostTable, unitText, flagFinder} from '../components/results.js';
import {runsCard} from '../components/compare_runs.js';
import {verdictWord, notJudgedCount, notJudgedList, withDisturbed, disturbedSwitch} from '../components/verdict.js';

const ENDED = new Set(['done', 'failed', 'cancelled']);

function median(values) {
    const v = [...values].sort((a, b) => a - b);
    const m = v.length >> 1;
    return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The pair matrix of one column: rows clients, columns servers; a cell's colour is how far its
// median is from the median of all pair cells, neutral below the analysis' floor (the relative
// difference a flag needs, from GET /api/runs/ID/anomalies).
function heatmap(t, which, anomalies, floor) {
    const isRatio = which.startsWith('r');
    const col = Number(which.slice(1));
    const meta = (isRatio ? t.ratio_columns : t.columns)[col];
    const cell = indexCells(isRatio ? t.ratios : t.cells);
    const hosts = new Set(), at = new Map();
    (t.rows || []).forEach((label, r) => {
        const p = splitPair(label);
        if (!p)
            return;
        hosts.add(p[0]);
        hosts.add(p[1]);
        at.set(`${p[0]}\n${p[1]}`, {label, c: cell(r, col)});
    });
    const names = [...hosts].sort();
    const values = [...at.values()].map((x) => x.c && x.c.median).filter(Number.isFinite);
    const mid = values.length ? median(values) : NaN;
    const devOf = (v) => (mid !== 0 ? (v - mid) / Math.abs(mid) : NaN);
    // Full colour at twice the floor or the widest deviation, whichever is more.
    const span = Math.max(2 * floor, ...values.map((v) => Math.abs(devOf(v))).filter(Number.isFinite));
    const mine = anomalies.filter((a) => a.test === meta.label && !!a.ratio === isRatio);
    const slowHost = (name, role) => mine.some((a) => a.kind === 'slow-host' && a.host === name &&
        a.role === role);
    const table = h('table', {id: 'heatmap', class: 'heatmap', 'data-column': meta.label},
        h('caption', {}, `${meta.label}: median (${unitText(meta.unit)}); rows client, columns server`),
        h('thead', {}, h('tr', {},
            h('th', {scope: 'col', class: 'corner'}, 'client \\ server'),
            names.map((s) => h('th', {scope: 'col', class: slowHost(s, 'server') ? 'anomalous' : null,
                title: slowHost(s, 'server') ? 'slow host (server)' : null}, hostLink(s))))),
        h('tbody', {}, names.map((c) => h('tr', {'data-client': c},
            h('th', {scope: 'row', class: slowHost(c, 'client') ? 'anomalous' : null,
                title: slowHost(c, 'client') ? 'slow host (client)' : null}, hostLink(c)),
            names.map((s) => {
                if (c === s)
                    return h('td', {class: 'self', 'data-server': s, 'aria-label': 'same host'}, '\u2014');
                const x = at.get(`${c}\n${s}`);
                if (!x || !x.c || !Number.isFinite(x.c.median))
                    return h('td', {class: 'missing', 'data-server': s}, 'no data');
                const dev = devOf(x.c.median);
                const {bg, fg} = deviationColour(dev, floor, span);
                const link = mine.some((a) => a.kind === 'slow-link' && a.host === x.label);
                return h('td', {'data-server': s, 'data-pair': x.label,
                    'data-dev': Number.isFinite(dev) ? dev.toFixed(4) : null,
                    'data-neutral': Number.isFinite(dev) && Math.abs(dev) < floor ? '1' : '0',
                    class: 'num' + (link ? ' anomalous' : '') + (x.c.noisy ? ' noisy' : ''),
                    style: `background:${bg};color:${fg}`,
                    title: `${x.label}: ${fmtNum(x.c.median)} ${meta.unit} ` +
                        `[${fmtNum(x.c.ci95_low)}, ${fmtNum(x.c.ci95_high)}] n=${x.c.n}, ` +
                        `${fmtPercent(dev)} from the median of all pairs` +
                        (link ? ' (slow link)' : '') + (x.c.noisy ? ' (noisy)' : '')},
                fmtNum(x.c.median), link ? h('span', {class: 'flag-mark'}, ' !') : null);
            })))));
    const pct = (x) => `${Math.round(x * 100)}%`;
    const ramp = (side) => [0, 0.5, 1].map((k) => deviationColour(side * (floor + k * (span - floor)),
        floor, span).bg).join(', ');
    const legend = values.length ? h('div', {class: 'legend heat-legend', id: 'heatmap-legend'},
        h('span', {}, `-${pct(span)}`),
        h('span', {class: 'ramp half', style: `background:linear-gradient(to left, ${ramp(-1)})`}),
        h('span', {class: 'ramp neutral', style: `background:${NEUTRAL.bg}`}),
        h('span', {class: 'ramp half', style: `background:linear-gradient(to right, ${ramp(1)})`}),
        h('span', {}, `+${pct(span)}`),
        h('span', {class: 'hint'}, `from the median of all pairs, ${fmtNum(mid)} ${meta.unit}; ` +
            `within \u00b1${pct(floor)} (the analysis' flag floor) neutral`)) : null;
    return [scrollBox(table), legend];
}

function downloads(id, scope, withDist) {
    const tag = scope ? `${scope}-` : '';
    return ['csv', 'md', 'json'].map((f) => {
        const url = tableUrl(id, f, scope, withDist);
        const name = `sockmatrix-run-${id}${scope ? '-' + scope : ''}.${f}`;
        return h('a', {
            id: `dl-${tag}${f}`, class: 'button', href: url, download: name,
            onclick: (ev) => {
                if (!getToken())
                    return;
                ev.preventDefault();
                download(url, name).catch(() => {});
            },
        }, f === 'md' ? 'Markdown' : f.toUpperCase());
    });
}

// The page's elements: the head, the anomalies card, the plots, the heatmap and the tables.
function compareParts(id) {
    const e = {
        title: h('h1', {}, `Compare hosts: run ${id}`),
        status: h('p', {class: 'hint', id: 'compare-status', 'aria-live': 'polite'}, 'loading...'),
        error: h('p', {class: 'error', role: 'alert', hidden: true}),
        dl: h('div', {class: 'downloads'}),
        plots: h('div', {}),
        chartTitle: h('h2', {}, 'Per host'),
        anomList: h('ul', {id: 'anomalies', class: 'anomalies'}),
        anomCard: h('section', {class: 'card'}, h('h2', {}, 'Anomalies')),
        anomNote: h('p', {class: 'hint', id: 'anomalies-note'}),
        // The cells the analysis could not judge, and why: nothing can be said of them either way.
        notJudged: h('div', {id: 'compare-verdict', class: 'verdict-note', hidden: true}),
        heatSel: h('select', {id: 'heatmap-column'}),
        heatBox: h('div', {class: 'heat-box'}),
        heatTitle: h('h2', {id: 'heatmap-title'}, 'Per pair'),
        tableBox: h('div', {}),
        pairTableBox: h('div', {}),
    };
    e.chartCard = h('section', {class: 'card wide', id: 'compare-plots'}, e.chartTitle,
        h('p', {class: 'hint'}, 'One plot per test. Dot: median; whisker: its 95% confidence ' +
            'interval ([min, max] below 6 repetitions); a flagged host in vermillion with its factor.'),
        e.plots);
    e.heatCard = h('section', {class: 'card', hidden: true}, e.heatTitle,
        h('div', {class: 'field inline'}, h('label', {for: 'heatmap-column'}, 'column'), e.heatSel),
        e.heatBox);
    e.anomCard.append(e.notJudged, e.anomNote, e.anomList);
    return e;
}

function layout(v) {
    const e = v.el;
    return h('section', {class: 'view compare'},
        h('div', {class: 'view-head'}, e.title,
            h('a', {id: 'compare-to-run', href: `#/run/${encodeURIComponent(v.id)}`},
                `Run ${v.id}: verdict and jobs`),
            h('button', {id: 'compare-to-runs', type: 'button', class: 'link',
                onclick: () => v.runs.card.scrollIntoView({block: 'start'})},
            'Compare runs: this run against another')),
        e.status, e.error,
        h('div', {class: 'actions'}, h('span', {class: 'hint'}, 'Download the table:'), e.dl,
            disturbedSwitch('compare-disturbed', v.withDist)),
        h('div', {class: 'compare-grid'},
            e.anomCard,
            e.chartCard,
            e.heatCard,
            h('section', {class: 'card wide'}, h('h2', {}, 'Table'), e.tableBox, e.pairTableBox),
            v.runs.card));
}

function drawChart(e, data) {
    const t = data && data.main;
    clear(e.plots);
    if (!t)
        return;
    e.plots.append(smallMultiples('compare-chart', t, indexCells(t.cells),
        flagFinder(t, data.anomalies || [])));
    e.chartTitle.textContent = (t.rows || []).some((r) => splitPair(r))
        ? 'Per pair (client->server)' : 'Per host';
}

function drawHeat(e, data) {
    clear(e.heatBox);
    if (data && data.pair && e.heatSel.value)
        e.heatBox.append(...heatmap(data.pair, e.heatSel.value, data.anomalies, data.floor)
            .filter(Boolean));
    const opt = e.heatSel.selectedOptions[0];
    e.heatTitle.textContent = opt ? `Per pair: ${opt.dataset.short}` : 'Per pair';
}

// The head's state line and the downloads.
function renderHead(v) {
    const e = v.el, {run, main, pair} = v.data;
    e.title.textContent = `Compare hosts: run ${v.id}, ${run.name}`;
    const p = run.progress || {};
    e.status.textContent = `${run.state}, ${p.done ?? 0}/${p.total ?? 0} jobs, ${p.failed ?? 0} failed` +
        (ENDED.has(run.state) ? '' : ' (still running: the numbers will move)');
    clear(e.dl);
    e.dl.append(...downloads(v.id, null, v.withDist));
    if (main && pair && main !== pair)
        e.dl.append(h('span', {class: 'hint'}, 'pairs:'), ...downloads(v.id, 'pair', v.withDist));
}

function renderAnomalies(e, {anomalies, baseline, an}) {
    clear(e.anomList);
    e.anomList.append(...anomalies.map(anomalyItem));
    // "Stands apart in nothing" only of a run whose every cell was judged.
    const unjudged = notJudgedCount(an);
    clear(e.notJudged);
    e.notJudged.hidden = unjudged === 0;
    e.notJudged.dataset.verdict = an.verdict || '';
    if (unjudged)
        e.notJudged.append(h('p', {id: 'compare-verdict-text'},
            h('strong', {}, `${verdictWord(an.verdict)}:`), ` ${an.summary}. ` +
            `${unjudged} cell${unjudged === 1 ? '' : 's'} could not be judged` +
            (anomalies.length ? '' : ', so whether a host or link stands apart there is not known') +
            ':'), notJudgedList(an.inconclusive, 'compare-not-judged'));
    e.anomNote.textContent = (anomalies.length || an.verdict !== 'ok' ? '' : 'No host or link stands apart. ') +
        (baseline ? `Regressions against baseline run ${baseline.id}.`
            : 'No baseline run (an earlier run of the same name that ended done and shares a cell with it).');
}

// The heatmap's column choice (the one picked kept) and the heatmap.
function renderHeat(e, data) {
    const pair = data.pair;
    e.heatCard.hidden = !pair;
    // Alone on its row the anomalies card takes the width the heatmap would have had.
    e.anomCard.classList.toggle('solo', !pair);
    if (!pair)
        return;
    const keepH = e.heatSel.value;
    clear(e.heatSel);
    e.heatSel.append(
        ...(pair.columns || []).map((c, i) => h('option', {value: `c${i}`,
            'data-short': c.short || c.label}, `${c.label} (${c.unit})`)),
        ...(pair.ratio_columns || []).map((c, i) => h('option', {value: `r${i}`,
            'data-short': c.short || c.label}, `${c.label} (${unitText(c.unit)})`)));
    if ([...e.heatSel.options].some((o) => o.value === keepH))
        e.heatSel.value = keepH;
    drawHeat(e, data);
}

function renderTables(e, {main, pair, anomalies}) {
    clear(e.tableBox);
    clear(e.pairTableBox);
    if (main && main.rows && main.rows.length)
        e.tableBox.append(scrollBox(hostTable('ratio-table', main, anomalies)));
    else
        e.tableBox.append(h('p', {class: 'hint'}, 'No results yet.'));
    if (pair && pair !== main)
        e.pairTableBox.append(h('h3', {}, 'Pairs'), scrollBox(hostTable('pair-table', pair, anomalies)));
}

function render(v) {
    const e = v.el, main = v.data.main;
    renderHead(v);
    const cell = main ? indexCells(main.cells) : () => null;
    e.chartCard.hidden = !main || !(main.rows || []).some((_r, r) =>
        (main.columns || []).some((_c, k) => Number.isFinite((cell(r, k) || {}).median)));
    drawChart(e, v.data);
    renderAnomalies(e, v.data);
    renderHeat(e, v.data);
    renderTables(e, v.data);
}

// The run, its table (and its pairs' when it has local tests too) and its anomalies.
async function fetchData(id, withDist) {
    const run = await api.run(id);
    const scopes = new Set((run.cells || []).map((c) => (c.params && c.params.scope) || 'local'));
    // The unscoped table is the host table when the run has local tests, else the pairs.
    const [main, pairOnly, an] = await Promise.all([
        api.table(id, null, withDist),
        scopes.has('pair') && scopes.has('local') ? api.table(id, 'pair', withDist) : null,
        api.anomalies(id, null, withDist),
    ]);
    const pair = pairOnly || (main.pairs ? main : null);
    // The floor a flag needs (docs/analysis.md), the heatmap's neutral band.
    const floor = Number.isFinite(Number(an.floor)) && Number(an.floor) > 0 ? Number(an.floor) : 0.15;
    return {run, main, pair, anomalies: an.anomalies || [], baseline: an.baseline, floor, an};
}

async function load(v) {
    try {
        const data = await fetchData(v.id, v.withDist);
        if (!v.alive)
            return;
        v.data = data;
        v.el.error.hidden = true;
        render(v);
    } catch (e) {
        if (!v.alive)
            return;
        v.el.error.hidden = false;
        v.el.error.textContent = e.message;
        v.el.status.textContent = '';
        // A coordinator busy building other reports says so with a 503: ask again.
        if (e.status === 503)
            reloadSoon(v);
    }
}

// A run still going changes its tables; reload when it ends or an anomaly is found, at most
// every two seconds.
function reloadSoon(v) {
    if (!v.timer)
        v.timer = setTimeout(() => {
            v.timer = 0;
            load(v);
        }, 2000);
}

function follow(v, live) {
    return live.on({
        run: (r) => {
            if (String(r.id) === String(v.id) && v.data &&
                (ENDED.has(r.state) !== ENDED.has(v.data.run.state) || !ENDED.has(r.state)))
                reloadSoon(v);
        },
        anomaly: ({run}) => {
            if (run === String(v.id))
                reloadSoon(v);
        },
    });
}

export function mount(root, args, {live, query}) {
    const id = args[0] || '';
    const withDist = withDisturbed(query);
    // data: {run, main, pair, anomalies, baseline, floor, an} once loaded.
    const v = {id, withDist, alive: true, data: null, timer: 0, el: compareParts(id),
        runs: runsCard(id, args[1] || '', withDist)};
    root.append(layout(v));
    v.el.heatSel.addEventListener('change', () => drawHeat(v.el, v.data));
    const off = follow(v, live);
    load(v);
    v.runs.load(() => v.alive);
    return () => {
        v.alive = false;
        off();
        clearTimeout(v.timer);
    };
}
