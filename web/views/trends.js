// Trends view: the fleet grid of hosts x tests, each cell the verdict of the latest ended run
// that has it (GET /api/grid), and under it the trend chart of one host's cell of one test
// (GET /api/trends): the median line, its 95% CI as a band and as a bar at each point (so that
// a trend of one run shows its interval too), flagged runs highlighted. The hash
// #/trends/HOST/TEST[/METRIC] keeps the chart across a reload, and ?disturbed=include after it
// draws the chart with the disturbed samples counted. The page explains itself in its own
// words: the API's rule texts name its fields, so they are not shown here.

import {api} from '../api.js';
import {h, clear, scrollBox, rowLink} from '../dom.js';
import {fmtNum, fmtValue, metricWords} from '../format.js';
import {PALETTE, wantsLog, timeAxis, tickText, utcSeconds} from '../scales.js';
import {withDisturbed, disturbedSwitch} from '../components/verdict.js';

// Each verdict: a class for its colour, a mark and a word, so colour is never alone, and what
// it means for the legend.
const VERDICTS = [
    {verdict: 'ok', cls: 'verdict-ok', mark: '\u2713', text: 'ok',
        means: 'judged: stands apart in nothing'},
    {verdict: 'flagged', cls: 'verdict-flagged', mark: '\u26a0', text: 'flagged',
        means: 'judged: an anomaly is on it'},
    {verdict: 'inconclusive', cls: 'verdict-inconclusive', mark: '?', text: 'inconclusive',
        means: 'measured but not judged (too few clean samples or hosts; hover for why)'},
    {verdict: 'failed', cls: 'verdict-failed', mark: '\u2717', text: 'failed',
        means: 'its jobs failed'},
    {verdict: 'no data', cls: 'verdict-nodata', mark: '\u2013', text: 'no data',
        means: 'no ended run has this cell'},
];
const BY_VERDICT = Object.fromEntries(VERDICTS.map((v) => [v.verdict, v]));
const FLAG_COLOUR = '#D55E00';

const enc = encodeURIComponent;

// What a trend's chart shows, said once under it.
const EXPLAINED = 'Each point is an ended run that measured this host in this test, oldest ' +
    'first: the median of its samples, and its 95% confidence interval as the shaded band and ' +
    'the bar through the point: the range in which the host\'s true median lies, with 95% ' +
    'confidence. A triangle marks a run whose analysis flagged this host in this test: an ' +
    'outlier in the fleet, a slow host or link, or slower than its baseline run.';

export function trendHash(host, test, metric, withDist) {
    return `#/trends/${enc(host)}/${enc(test)}` + (metric ? `/${enc(metric)}` : '') +
        (withDist ? '?disturbed=include' : '');
}

// Each point's 95% CI as a bar with caps over a pale box, drawn over the band: the band alone
// has no width at a lone point.
const ciBars = {
    id: 'smTrendCi',
    afterDatasetsDraw(chart) {
        const pts = chart.options.smPoints || [];
        const meta = chart.getDatasetMeta(2);
        const y = chart.scales.y;
        const ctx = chart.ctx;
        const area = chart.chartArea;
        const colour = chart.options.smColour;
        let tallest = 0;
        ctx.save();
        ctx.beginPath();
        ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
        ctx.clip();
        pts.forEach((p, i) => {
            const el = meta.data[i];
            if (!el || !Number.isFinite(p.ci_lo) || !Number.isFinite(p.ci_hi))
                return;
            if (y.type === 'logarithmic' && !(p.ci_lo > 0))
                return;
            const top = y.getPixelForValue(p.ci_hi), bottom = y.getPixelForValue(p.ci_lo);
            // Never thinner than 2 px: an interval too narrow to see still shows it is there.
            const mid = (top + bottom) / 2, half = Math.max((bottom - top) / 2, 1);
            const x = el.x;
            ctx.fillStyle = colour + '40';
            ctx.fillRect(x - 8, mid - half, 16, 2 * half);
            ctx.strokeStyle = colour;
            ctx.lineWidth = 2;
            ctx.beginPath();
            ctx.moveTo(x, mid - half);
            ctx.lineTo(x, mid + half);
            ctx.moveTo(x - 6, mid - half);
            ctx.lineTo(x + 6, mid - half);
            ctx.moveTo(x - 6, mid + half);
            ctx.lineTo(x + 6, mid + half);
            ctx.stroke();
            tallest = Math.max(tallest, 2 * half);
        });
        ctx.restore();
        chart.canvas.dataset.ciPx = String(Math.round(tallest));
    },
};

function legend() {
    return h('ul', {id: 'trends-legend', class: 'verdict-legend', 'aria-label': 'legend'},
        VERDICTS.map((v) => h('li', {class: v.cls, 'data-verdict': v.verdict},
            h('span', {class: 'mark', 'aria-hidden': 'true'}, v.mark), ` ${v.text}`,
            h('span', {class: 'means'}, `: ${v.means}`))));
}

function gridTable(grid, current, withDist) {
    const cells = new Map(grid.cells.map((c) => [`${c.host}\n${c.test}`, c]));
    return h('table', {id: 'trends-grid', class: 'matrix verdict-grid'},
        h('caption', {class: 'visually-hidden'},
            'hosts by tests, each cell the verdict of the latest ended run that has it'),
        h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'host'),
            grid.tests.map((t) => h('th', {scope: 'col'}, t)))),
        h('tbody', {}, grid.hosts.map((host) => h('tr', {'data-host': host},
            h('th', {scope: 'row'}, rowLink(host)),
            grid.tests.map((test) => {
                const c = cells.get(`${host}\n${test}`) || {verdict: 'no data'};
                const v = BY_VERDICT[c.verdict] || BY_VERDICT['no data'];
                const value = c.median !== null && c.median !== undefined
                    ? ` ${fmtValue(c.median, c.unit || '')}` : '';
                // The analysis' reason is the tooltip's first words for a cell not judged.
                const label = `${v.text}${c.run ? `, run ${c.run}` : ''}${c.why ? `: ${c.why}` : ''}`;
                const here = current && current.host === host && current.test === test;
                return h('td', {class: `${v.cls}${here ? ' current' : ''}`, 'data-host': host,
                    'data-test': test, 'data-verdict': c.verdict, 'data-run': c.run || ''},
                c.run
                    ? h('a', {href: trendHash(host, test, c.metric, withDist),
                        title: `${label} (click: trend of ${host}, ${test})`},
                        h('span', {class: 'mark', 'aria-hidden': 'true'}, v.mark),
                        h('span', {class: 'visually-hidden'}, `${v.text} `), value)
                    : h('span', {title: label}, h('span', {class: 'mark', 'aria-hidden': 'true'}, v.mark),
                        h('span', {class: 'visually-hidden'}, v.text)));
            })))));
}

// The chart's lines: the CI as a band between its two bounds, and the medians, a flagged
// run's as a larger vermillion triangle.
function trendDatasets(pts, colour) {
    const xy = (k) => pts.map((p) => ({x: Number(p.finished_ms), y: p[k]}));
    return [
        {label: '95% confidence interval', data: xy('ci_hi'), pointRadius: 0, borderWidth: 0, fill: false,
            backgroundColor: colour + '33', tension: 0},
        {label: '95% CI low', data: xy('ci_lo'), pointRadius: 0, borderWidth: 0,
            fill: '-1', backgroundColor: colour + '33', tension: 0},
        {label: 'median', data: xy('median'), borderColor: colour, backgroundColor: colour,
            tension: 0,
            pointRadius: pts.map((p) => (p.flagged ? 7 : 3)),
            pointHoverRadius: pts.map((p) => (p.flagged ? 9 : 5)),
            pointStyle: pts.map((p) => (p.flagged ? 'triangle' : 'circle')),
            pointBackgroundColor: pts.map((p) => (p.flagged ? FLAG_COLOUR : colour)),
            pointBorderColor: pts.map((p) => (p.flagged ? '#000' : colour))},
    ];
}

// The chart's title, legend (one entry for the band) and tooltip (a run's figures).
function trendPlugins(t, pts) {
    const unit = t.unit || '';
    return {
        title: {display: true, text: `${t.host}: ${t.test}`, color: '#111', font: {size: 14}},
        legend: {labels: {color: '#222', filter: (item) => item.text !== '95% CI low'}},
        tooltip: {
            filter: (item) => item.datasetIndex === 2,
            callbacks: {
                title: (items) => (items.length ? utcSeconds(pts[items[0].dataIndex].finished_ms) : ''),
                label(item) {
                    const p = pts[item.dataIndex];
                    return `run ${p.run} (${p.run_name}): ${fmtValue(p.median, unit)}, ` +
                        `95% CI ${fmtNum(p.ci_lo)} to ${fmtNum(p.ci_hi)}, ${p.n} samples` +
                        (p.flagged ? ', flagged' : '');
                },
            },
        },
    };
}

// The chart of a trend's points on canvas; the Chart (destroy() it), or null without Chart.js.
function trendChart(canvas, t) {
    const Chart = window.Chart;
    const pts = t.points;
    // The same axis choice as the comparison's bars: log when the medians span more than 10x.
    const log = wantsLog([{cells: pts}]);
    canvas.dataset.points = String(pts.length);
    canvas.dataset.flagged = String(pts.filter((p) => p.flagged).length);
    canvas.dataset.scale = log ? 'log' : 'linear';
    if (!Chart)
        return null;
    const rootPx = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    Chart.defaults.font.size = Math.round(rootPx * 0.85);
    const colour = PALETTE[0];
    const unit = t.unit || '';
    const axis = timeAxis(pts.map((p) => Number(p.finished_ms)));
    // Room above and below the band, so that an outlier's mark at either end is whole.
    const ys = pts.flatMap((p) => [p.ci_lo, p.median, p.ci_hi]).filter((v) => Number.isFinite(v) && (!log || v > 0));
    const lo = Math.min(...ys), hi = Math.max(...ys);
    return new Chart(canvas, {
        type: 'line',
        plugins: [ciBars],
        data: {datasets: trendDatasets(pts, colour)},
        options: {
            responsive: true,
            maintainAspectRatio: false,
            animation: false,
            smPoints: pts,
            smColour: colour,
            interaction: {mode: 'nearest', intersect: false, axis: 'x'},
            // A point opens its run.
            onClick(_ev, els) {
                const e = els.find((x) => x.datasetIndex === 2) || els[0];
                if (e && pts[e.index])
                    location.hash = `#/run/${enc(pts[e.index].run)}`;
            },
            scales: {
                x: {
                    type: 'linear',
                    min: axis.min,
                    max: axis.max,
                    title: {display: true, text: 'run finished (UTC)', color: '#222'},
                    ticks: {color: '#222', maxRotation: 0, autoSkip: true, stepSize: axis.step,
                        maxTicksLimit: 8, callback: (v) => tickText(v, axis.step)},
                },
                y: {
                    type: log ? 'logarithmic' : 'linear',
                    suggestedMin: log ? lo / 2 : lo - (hi - lo) * 0.1,
                    suggestedMax: log ? hi * 2 : hi + (hi - lo) * 0.1,
                    title: {display: true, text: `${metricWords(t.metric)}, ${unit}` + (log ? ', log scale' : ''),
                        color: '#222'},
                    ticks: {color: '#222'},
                },
            },
            plugins: trendPlugins(t, pts),
        },
    });
}

function pointsTable(t) {
    return h('table', {id: 'trend-points', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'the trend\'s points, oldest first'),
        h('thead', {}, h('tr', {}, ['finished (UTC)', 'run', `median [95% CI] ${t.unit || ''}`, 'samples', 'verdict']
            .map((c) => h('th', {scope: 'col'}, c)))),
        h('tbody', {}, t.points.map((p) => h('tr', {'data-run': p.run, class: p.flagged ? 'anomalous' : null},
            h('td', {}, utcSeconds(p.finished_ms)),
            h('td', {class: 'num'}, h('a', {href: `#/run/${enc(p.run)}`}, p.run)),
            h('td', {class: 'num'}, `${fmtNum(p.median)} [${fmtNum(p.ci_lo)}, ${fmtNum(p.ci_hi)}]`),
            h('td', {class: 'num'}, String(p.n)),
            verdictCell(p)))));
}

// A point's verdict as the grid writes it; a point of an older coordinator has its flag only.
function verdictCell(p) {
    const v = BY_VERDICT[p.verdict || (p.flagged ? 'flagged' : 'ok')] || BY_VERDICT.ok;
    return h('td', {class: p.flagged ? 'flagged' : null, 'data-verdict': v.verdict,
        title: p.why || null}, `${v.mark} ${v.text}`);
}

export function mount(root, args, {query} = {}) {
    const withDist = withDisturbed(query);
    let alive = true;
    let chart = null;
    const [host, test, metric] = args;
    const current = host && test ? {host, test} : null;
    const gridBox = h('div', {});
    const gridNote = h('p', {class: 'hint', id: 'trends-grid-note', 'aria-live': 'polite'}, 'loading...');
    const trendBox = h('div', {});
    const trendNote = h('p', {class: 'hint', id: 'trend-note', 'aria-live': 'polite'},
        current ? 'loading...' : 'Pick a cell of the grid to see its trend.');
    root.append(h('section', {class: 'view trends'},
        h('h1', {}, 'Trends'),
        h('section', {class: 'card', id: 'trends-grid-card'},
            h('h2', {}, 'Fleet grid: latest verdict per host and test'), legend(), gridNote, gridBox),
        h('section', {class: 'card', id: 'trend-card'},
            h('h2', {}, current ? ['Trend of ', rowLink(host), `: ${test}`] : 'Trend'),
            current ? h('div', {class: 'actions'}, disturbedSwitch('trends-disturbed', withDist)) : null,
            trendNote, trendBox)));

    (async () => {
        try {
            const grid = await api.grid();
            if (!alive)
                return;
            gridNote.textContent = grid.hosts.length
                ? `${grid.hosts.length} hosts x ${grid.tests.length} tests. Each cell is the verdict ` +
                    'of the latest ended run that measured that host in that test; a cell opens ' +
                    'the trend of that host in that test below.'
                : 'No ended run yet: the grid fills as runs end.';
            clear(gridBox);
            if (grid.hosts.length) {
                const box = scrollBox(gridTable(grid, current, withDist));
                gridBox.append(box);
                // Nothing else says that the tests go on past the box's right edge.
                if (box.scrollWidth > box.clientWidth)
                    gridNote.append(' Scroll the grid sideways for all its tests.');
            }
        } catch (e) {
            if (alive)
                gridNote.textContent = e.message;
        }
    })();
    if (current) {
        (async () => {
            try {
                const t = await api.trends(host, test, metric, withDist);
                if (!alive)
                    return;
                const n = t.points.length, flagged = t.points.filter((p) => p.flagged).length;
                trendNote.textContent = t.note ||
                    `${n} run${n === 1 ? '' : 's'}, ${flagged} flagged; ${metricWords(t.metric)} ` +
                    `(${t.unit}). A point opens its run.`;
                clear(trendBox);
                if (!n)
                    return;
                const canvas = h('canvas', {id: 'trend-chart', role: 'img',
                    'aria-label': `${metricWords(t.metric)} of ${host} in ${test} over ${n} runs`});
                trendBox.append(h('div', {class: 'chart-box'}, canvas),
                    h('p', {class: 'hint', id: 'trend-explained'}, EXPLAINED), scrollBox(pointsTable(t)));
                chart = trendChart(canvas, t);
            } catch (e) {
                if (alive)
                    trendNote.textContent = e.message;
            }
        })();
    }
    return () => {
        alive = false;
        if (chart)
            chart.destroy();
    };
}
