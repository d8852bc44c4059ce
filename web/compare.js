// Compare view: a run's comparison tables as charts, a pair heatmap, the anomalies with their
// evidence, and the exports. Everything here is drawn from the API's JSON table and anomalies;
// no statistic is recomputed in the browser, so the page and `sockmatrix export` agree.

import {api, tableUrl, getToken, download} from './api.js';
import {h, clear, scrollBox, fmtNum, fmtPercent, anomalyItem} from './dom.js';
import {whiskerBars, deviationColour, NEUTRAL} from './charts.js';
import {runsCard} from './compare_runs.js';
import {verdictWord, notJudgedCount, notJudgedList, withDisturbed, disturbedSwitch} from './verdict.js';

const ENDED = new Set(['done', 'failed', 'cancelled']);

// The table's cells as [row][column] lookups; row and column may travel as numbers or strings.
function indexCells(list) {
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

// Columns read "<workload> <variant> <the rest>" (export.c): the variants of one test (tcp,
// unix, tcp+nodelay; thread, pool, multi) share the rest and the metric, and are drawn side by
// side in one chart.
export function families(columns) {
    const out = new Map();
    columns.forEach((c, i) => {
        const t = c.label.split(' ');
        const test = [t[0], ...t.slice(2)].join(' ');
        const key = `${test}|${c.metric}|${c.unit}`;
        if (!out.has(key))
            out.set(key, {key, test, metric: c.metric, unit: c.unit, variants: []});
        out.get(key).variants.push({label: t[1] || c.label, col: i});
    });
    return [...out.values()];
}

function splitPair(label) {
    const i = label.indexOf('->');
    return i < 0 ? null : [label.slice(0, i), label.slice(i + 2)];
}

// Whether a table row (a host, or "client->server") carries one of the anomalies: its own, or
// a slow host in the role that row gives it.
function rowAnomalies(label, anomalies) {
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

// The host (or pair) table: every column and ratio column of the JSON table, and its flags.
function hostTable(id, t, anomalies) {
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
            h('th', {scope: 'row', title: mine.length ? `${mine.length} anomalies` : null}, row),
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

// What "~" means, in the exports' words (coordinator/table.h SM_TABLE_TILDE_RULE).
const TILDE_RULE = '~ marks an interval that covers less than 95% (below 6 samples it is [min, max])';

// A ratio's unit "x" reads "ratio" in a header, as the Markdown export writes it.
const unitText = (u) => (u === 'x' ? 'ratio' : u);

// The API's short header, the full label on hover.
function headerCell(c, cls) {
    return h('th', {scope: 'col', class: cls, 'data-label': c.label,
        title: `${c.label}: ${c.metric} (${unitText(c.unit)})`},
    `${c.short || c.label} (${unitText(c.unit)})`);
}

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
                title: slowHost(s, 'server') ? 'slow host (server)' : null}, s)))),
        h('tbody', {}, names.map((c) => h('tr', {'data-client': c},
            h('th', {scope: 'row', class: slowHost(c, 'client') ? 'anomalous' : null,
                title: slowHost(c, 'client') ? 'slow host (client)' : null}, c),
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

export function mount(root, args, {live, query}) {
    const id = args[0] || '';
    const withDist = withDisturbed(query);
    const runs = runsCard(id, args[1] || '', withDist);
    let alive = true;
    let chart = null;
    let data = null; // {run, main, pair, anomalies}
    const title = h('h1', {}, `Compare run ${id}`);
    const status = h('p', {class: 'hint', id: 'compare-status', 'aria-live': 'polite'}, 'loading...');
    const error = h('p', {class: 'error', role: 'alert', hidden: true});
    const dl = h('div', {class: 'downloads'});
    const familySel = h('select', {id: 'compare-family'});
    const canvas = h('canvas', {id: 'compare-chart', role: 'img',
        'aria-label': 'medians per host with 95% confidence intervals'});
    const chartNote = h('p', {class: 'hint'},
        'Bars: median. Whiskers: 95% confidence interval of the median ([min, max] below 6 repetitions).');
    // The axis: automatic (log when the medians span more than 10x), or what the user chose.
    const logBox = h('input', {type: 'checkbox', id: 'compare-log'});
    let logChosen;
    logBox.addEventListener('change', () => {
        logChosen = logBox.checked;
        drawChart();
    });
    const chartTitle = h('h2', {}, 'Per host');
    const chartCard = h('section', {class: 'card wide'}, chartTitle,
        h('div', {class: 'field inline'}, h('label', {for: 'compare-family'}, 'test'), familySel,
            h('label', {class: 'pick', for: 'compare-log'}, logBox, ' log scale')),
        h('div', {class: 'chart-box'}, canvas), chartNote);
    const anomList = h('ul', {id: 'anomalies', class: 'anomalies'});
    const anomCard = h('section', {class: 'card'}, h('h2', {}, 'Anomalies'));
    const anomNote = h('p', {class: 'hint', id: 'anomalies-note'});
    // The cells the analysis could not judge, and why: nothing can be said of them either way.
    const notJudged = h('div', {id: 'compare-verdict', class: 'verdict-note', hidden: true});
    const heatSel = h('select', {id: 'heatmap-column'});
    const heatBox = h('div', {class: 'heat-box'});
    const heatTitle = h('h2', {id: 'heatmap-title'}, 'Per pair');
    const heatCard = h('section', {class: 'card', hidden: true}, heatTitle,
        h('div', {class: 'field inline'}, h('label', {for: 'heatmap-column'}, 'column'), heatSel),
        heatBox);
    anomCard.append(notJudged, anomNote, anomList);
    const tableBox = h('div', {});
    const pairTableBox = h('div', {});

    root.append(h('section', {class: 'view compare'},
        h('div', {class: 'view-head'}, title,
            h('a', {href: `#/run/${encodeURIComponent(id)}`}, 'progress and jobs')),
        status, error,
        h('div', {class: 'actions'}, h('span', {class: 'hint'}, 'Download the table:'), dl,
            disturbedSwitch('compare-disturbed', withDist)),
        h('div', {class: 'compare-grid'},
            chartCard,
            anomCard,
            heatCard,
            h('section', {class: 'card wide'}, h('h2', {}, 'Table'), tableBox, pairTableBox),
            runs.card)));

    const drawChart = () => {
        if (chart)
            chart.destroy();
        chart = null;
        const t = data && data.main;
        if (!t)
            return;
        const fams = families(t.columns || []);
        const fam = fams.find((f) => f.key === familySel.value) || fams[0];
        if (!fam)
            return;
        const cell = indexCells(t.cells);
        const labels = new Set(fam.variants.map((v) => t.columns[v.col].label));
        const flagged = new Set((data.anomalies || []).filter((a) => labels.has(a.test))
            .flatMap((a) => (t.rows || []).filter((r) => rowAnomalies(r, [a]).length)));
        const groups = fam.variants.map((v) => ({label: v.label,
            cells: (t.rows || []).map((_r, r) => cell(r, v.col))}));
        chart = whiskerBars(canvas, {
            rows: t.rows || [],
            unit: `${fam.metric} (${fam.unit})`,
            title: fam.test,
            groups,
            flagged,
            log: logChosen,
        });
        logBox.checked = canvas.dataset.scale === 'log';
        chartTitle.textContent = (t.rows || []).some((r) => splitPair(r))
            ? 'Per pair (client->server)' : 'Per host';
        if (!chart && !window.Chart)
            chartNote.textContent = 'The chart library (vendor/chart.umd.js) did not load; the table below has the same numbers.';
    };

    const drawHeat = () => {
        clear(heatBox);
        if (data && data.pair && heatSel.value)
            heatBox.append(...heatmap(data.pair, heatSel.value, data.anomalies, data.floor)
                .filter(Boolean));
        const opt = heatSel.selectedOptions[0];
        heatTitle.textContent = opt ? `Per pair: ${opt.dataset.short}` : 'Per pair';
    };

    const render = () => {
        const {run, main, pair, anomalies, baseline, an} = data;
        title.textContent = `Compare run ${id}: ${run.name}`;
        const p = run.progress || {};
        status.textContent = `${run.state}, ${p.done ?? 0}/${p.total ?? 0} jobs, ${p.failed ?? 0} failed` +
            (ENDED.has(run.state) ? '' : ' (still running: the numbers will move)');

        clear(dl);
        dl.append(...downloads(id, null, withDist));
        if (main && pair && main !== pair)
            dl.append(h('span', {class: 'hint'}, 'pairs:'), ...downloads(id, 'pair', withDist));

        const keep = familySel.value;
        clear(familySel);
        const fams = main ? families(main.columns || []) : [];
        familySel.append(...fams.map((f) => h('option', {value: f.key},
            `${f.test}: ${f.metric} (${f.unit})`)));
        // A cancelled run may have results for its first tests only: open on one that has some.
        const cell = main ? indexCells(main.cells) : () => null;
        const withData = fams.filter((f) => f.variants.some((v) =>
            (main.rows || []).some((_r, r) => Number.isFinite((cell(r, v.col) || {}).median))));
        if (fams.some((f) => f.key === keep))
            familySel.value = keep;
        else if (withData.length)
            familySel.value = withData[0].key;
        chartCard.hidden = withData.length === 0;
        drawChart();

        clear(anomList);
        anomList.append(...anomalies.map(anomalyItem));
        // "Stands apart in nothing" only of a run whose every cell was judged.
        const unjudged = notJudgedCount(an);
        clear(notJudged);
        notJudged.hidden = unjudged === 0;
        notJudged.dataset.verdict = an.verdict || '';
        if (unjudged)
            notJudged.append(h('p', {id: 'compare-verdict-text'},
                h('strong', {}, `${verdictWord(an.verdict)}:`), ` ${an.summary}. ` +
                `${unjudged} cell${unjudged === 1 ? '' : 's'} could not be judged` +
                (anomalies.length ? '' : ', so whether a host or link stands apart there is not known') +
                ':'), notJudgedList(an.inconclusive, 'compare-not-judged'));
        anomNote.textContent = (anomalies.length || an.verdict !== 'ok' ? '' : 'No host or link stands apart. ') +
            (baseline ? `Regressions against baseline run ${baseline.id}.`
                : 'No baseline run (an earlier run of the same name that ended done and shares a cell with it).');

        heatCard.hidden = !pair;
        // Alone on its row the anomalies card takes the width the heatmap would have had.
        anomCard.classList.toggle('solo', !pair);
        if (pair) {
            const keepH = heatSel.value;
            clear(heatSel);
            heatSel.append(
                ...(pair.columns || []).map((c, i) => h('option', {value: `c${i}`,
                    'data-short': c.short || c.label}, `${c.label} (${c.unit})`)),
                ...(pair.ratio_columns || []).map((c, i) => h('option', {value: `r${i}`,
                    'data-short': c.short || c.label}, `${c.label} (${unitText(c.unit)})`)));
            if ([...heatSel.options].some((o) => o.value === keepH))
                heatSel.value = keepH;
            drawHeat();
        }

        clear(tableBox);
        clear(pairTableBox);
        if (main && main.rows && main.rows.length)
            tableBox.append(scrollBox(hostTable('ratio-table', main, anomalies)));
        else
            tableBox.append(h('p', {class: 'hint'}, 'No results yet.'));
        if (pair && pair !== main)
            pairTableBox.append(h('h3', {}, 'Pairs'), scrollBox(hostTable('pair-table', pair, anomalies)));
    };

    const load = async () => {
        try {
            const run = await api.run(id);
            const scopes = new Set((run.cells || []).map((c) => (c.params && c.params.scope) || 'local'));
            // The unscoped table is the host table when the run has local tests, else the pairs.
            const [main, pairOnly, an] = await Promise.all([
                api.table(id, null, withDist),
                scopes.has('pair') && scopes.has('local') ? api.table(id, 'pair', withDist) : null,
                api.anomalies(id, null, withDist),
            ]);
            if (!alive)
                return;
            const pair = pairOnly || (main.pairs ? main : null);
            // The floor a flag needs (docs/analysis.md), the heatmap's neutral band.
            const floor = Number.isFinite(Number(an.floor)) && Number(an.floor) > 0 ? Number(an.floor) : 0.15;
            data = {run, main, pair, anomalies: an.anomalies || [], baseline: an.baseline, floor, an};
            error.hidden = true;
            render();
        } catch (e) {
            if (!alive)
                return;
            error.hidden = false;
            error.textContent = e.message;
            status.textContent = '';
        }
    };

    familySel.addEventListener('change', drawChart);
    heatSel.addEventListener('change', drawHeat);

    // A run still going changes its tables; reload when it ends or an anomaly is found, at most
    // every two seconds.
    let timer = 0;
    const reloadSoon = () => {
        if (!timer)
            timer = setTimeout(() => {
                timer = 0;
                load();
            }, 2000);
    };
    const off = live.on({
        run: (r) => {
            if (String(r.id) === String(id) && data && (ENDED.has(r.state) !== ENDED.has(data.run.state) ||
                !ENDED.has(r.state)))
                reloadSoon();
        },
        anomaly: ({run}) => {
            if (run === String(id))
                reloadSoon();
        },
    });
    load();
    runs.load(() => alive);
    return () => {
        alive = false;
        off();
        clearTimeout(timer);
        if (chart)
            chart.destroy();
    };
}
