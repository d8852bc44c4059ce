// Run view: one run's results first (its verdict, anomalies with their why, the table of
// medians and the plot of every test), then its progress and jobs, live. The page's state
// comes from GET /api/runs/ID and its jobs from GET /api/runs/ID/jobs, so a reload (or a
// finished run opened later) shows what the coordinator knows; /ws events move it on from
// there. #/run/ID/cell/N adds that cell's samples (GET /api/runs/ID/cells/N): one dot per
// repetition, so a wide interval can be seen for what it is. The run's verdict (GET
// /api/runs/ID/anomalies) heads the page when some of its cells could not be judged;
// #/run/ID?disturbed=include asks every figure with the disturbed samples counted.

import {api, ApiError} from './api.js';
import {h, svg, clear, scrollBox, fmtDate, fmtNum, fmtValue, anomalyItem, hostLink, rowLink}
    from './dom.js';
import {indexCells, hostTable, flagFinder} from './results.js';
import {smallMultiples} from './charts.js';
import {etaText, followRunning, firstStart} from './run_live.js';
import {scheduleLink} from './schedules.js';
import {verdictWord, needsBanner, notJudgedList, noAnomaliesText, withDisturbed, disturbedSwitch,
    disturbedReason} from './verdict.js';

const ENDED = new Set(['done', 'failed', 'cancelled']);
const JOBS_SHOWN_MAX = 20000; // past this the cells table, which sums them all, has to do
const REFETCH_MS = 1000;
const VERDICT_MS = 5000; // a running run's verdict is asked again at most this often
const TABLE_MS = 3000; // and its table of figures
const ETA_MS = 5000; // the time left is said again this often, jobs or not



const cellHref = (run, cell) => `#/run/${encodeURIComponent(run)}/cell/${encodeURIComponent(cell)}`;

// The strip plot of a cell's values in run order: x the job's place, y its value; warm-ups
// hollow, values the table leaves out grey, the table's CI a band and its median a line.
function stripPlot(c) {
    const W = 560, H = 160, L = 72, R = 8, T = 10, B = 10;
    const vals = (c.values || []).filter((v) => Number.isFinite(v.value));
    const ys = vals.map((v) => v.value);
    for (const k of ['median', 'ci95_low', 'ci95_high'])
        if (Number.isFinite(c[k]))
            ys.push(c[k]);
    let lo = Math.min(...ys), hi = Math.max(...ys);
    if (!(hi > lo)) {
        const pad = Math.abs(lo) * 0.1 || 1;
        lo -= pad;
        hi += pad;
    }
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

export function mount(root, args, {live, query}) {
    const id = args[0] || '';
    const withDist = withDisturbed(query);
    let alive = true;
    let run = null;
    const title = h('h1', {}, `Run ${id}`);
    // What the analysis made of the run when it could not judge all of it: the verdict, the
    // cells not judged with their reasons, and the way to measure them again.
    const banner = h('section', {id: 'run-verdict', class: 'verdict-banner', role: 'status',
        hidden: true});
    const again = h('button', {id: 'run-again', type: 'button'}, 'Measure the inconclusive cells again');
    const againError = h('p', {id: 'run-again-error', class: 'error', role: 'alert', hidden: true});
    const state = h('span', {id: 'run-state', class: 'badge'}, 'loading');
    const reason = h('span', {id: 'run-reason', class: 'hint'});
    const progress = h('progress', {id: 'run-progress', max: 1, value: 0, 'aria-labelledby': 'run-progress-text'});
    const progressText = h('span', {id: 'run-progress-text'}, '');
    const cancel = h('button', {id: 'run-cancel', type: 'button', class: 'danger'}, 'Cancel run');
    const eta = h('span', {id: 'run-eta', class: 'hint', hidden: true});
    // One word, one meaning: hosts within this run, this run against another, the hosts'
    // settings side by side.
    const toCompare = h('a', {id: 'to-compare', href: `#/compare/${encodeURIComponent(id)}`,
        class: 'button', title: 'this run\'s hosts side by side: pair heatmap, tables, downloads'},
    'Compare hosts');
    const toRuns = h('a', {id: 'to-runs', href: `#/compare/${encodeURIComponent(id)}`,
        class: 'button', title: 'this run against another run'}, 'Compare runs');
    const toSettings = h('a', {id: 'to-settings', class: 'button', hidden: true,
        title: 'the settings (fingerprints) of this run\'s hosts side by side'}, 'Host settings');
    const error = h('p', {id: 'run-error', class: 'error', role: 'alert', hidden: true});
    const created = h('span', {class: 'hint'});
    // A run started by a schedule says which, linked to the Schedules view.
    const scheduleNote = h('span', {id: 'run-schedule', class: 'hint', hidden: true});
    // How the run's jobs go: one at a time and why, or the warning that hosts sharing one
    // machine run side by side as the spec asked.
    const parallelNote = h('p', {id: 'run-parallel', class: 'run-parallel', hidden: true});
    // The results: the table of medians with their intervals, and every test's plot.
    const tableBox = h('div', {id: 'run-table-box'}, h('p', {class: 'hint'}, 'No results yet.'));
    const plotsBox = h('div', {id: 'run-plots-box'});
    const resultsNote = h('p', {id: 'run-results-note', class: 'hint'});
    const cellsBody = h('tbody');
    const cellsTable = h('table', {id: 'run-cells', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'cells of the run and their jobs'),
        h('thead', {}, h('tr', {},
            ['cell', 'host', 'peer', 'test', 'jobs', 'queued', 'active', 'done', 'failed']
                .map((c, i) => h('th', {scope: 'col', class: i >= 4 ? 'num' : null}, c)))),
        cellsBody);
    const jobs = h('ul', {id: 'run-jobs', class: 'jobs', 'aria-live': 'polite'});
    const jobsNote = h('p', {id: 'run-jobs-note', class: 'hint'}, 'No jobs yet.');
    const nowNote = h('p', {id: 'run-now', class: 'run-now', hidden: true});
    const jobLis = new Map(); // job id -> {li, key}
    let jobsStart = 0; // when the run's first job started
    const anomalies = h('ul', {id: 'run-anomalies', class: 'anomalies'});
    const anomNote = h('p', {id: 'run-anomalies-note', class: 'hint'}, 'Not judged yet.');
    const anomTitle = h('h2', {}, 'Anomalies');
    // #/run/ID/cell/N: that cell's samples above the rest.
    const sampleCell = args[1] === 'cell' && /^\d+$/.test(args[2] || '') ? args[2] : null;
    const samples = h('section', {id: 'run-samples', class: 'card', hidden: true,
        'data-cell': sampleCell});

    root.append(h('section', {class: 'view run'},
        title,
        banner,
        h('div', {class: 'run-head'}, state, reason, created, scheduleNote),
        parallelNote,
        h('div', {class: 'run-progress'}, progress, progressText, eta),
        h('div', {class: 'actions'}, cancel, toCompare, toRuns, toSettings,
            disturbedSwitch('run-disturbed', withDist)),
        error,
        samples,
        h('section', {id: 'run-anomalies-card', class: 'card'}, anomTitle, anomNote, anomalies),
        h('section', {id: 'run-results', class: 'card'}, h('h2', {}, 'Results'), resultsNote,
            tableBox, plotsBox),
        h('div', {class: 'run-grid'},
            h('section', {id: 'run-jobs-card', class: 'card'}, h('h2', {}, 'Jobs'), nowNote,
                jobsNote, jobs),
            h('section', {class: 'card'}, h('h2', {}, 'Cells'), scrollBox(cellsTable)))));

    // The API's answer and the events travel on two connections: an answer sent before an
    // event may arrive after it. A run only moves forward, so an older view of it is dropped.
    const rank = (r) => {
        const p = r.progress || {};
        return (ENDED.has(r.state) ? 1e15 : 0) + (Number(p.done) || 0) + (Number(p.failed) || 0);
    };
    const showRun = (r) => {
        if (run && run.progress && r.progress && rank(r) < rank(run))
            return;
        run = Object.assign(run || {}, r);
        const p = run.progress || {};
        const done = Number(p.done) || 0, failed = Number(p.failed) || 0;
        const total = Number(p.total) || 0;
        title.textContent = `Run ${run.id}: ${run.name || ''}`;
        state.textContent = run.state;
        state.className = `badge state-${run.state}`;
        reason.textContent = run.reason || '';
        // Events carry no such fields; the API's answer does (an older coordinator's not).
        if (run.parallel === false) {
            parallelNote.hidden = false;
            parallelNote.dataset.parallel = 'false';
            parallelNote.textContent = 'Jobs run one at a time' +
                (run.serial_reason ? `: ${run.serial_reason}` : '');
        } else if (run.parallel === true && run.parallel_warning) {
            parallelNote.hidden = false;
            parallelNote.dataset.parallel = 'true';
            parallelNote.textContent = `Warning: ${run.parallel_warning}`;
        }
        if (run.schedule && scheduleNote.dataset.schedule !== String(run.schedule)) {
            scheduleNote.dataset.schedule = String(run.schedule);
            clear(scheduleNote).append('started by ', scheduleLink(run.schedule));
            scheduleNote.hidden = false;
        }
        created.textContent = run.created_ms ? `started ${fmtDate(run.created_ms)}` +
            (Number(run.finished_ms) > 0 ? `, ended ${fmtDate(run.finished_ms)}` : '') : '';
        progress.max = Math.max(total, 1);
        progress.value = done + failed;
        // The CLI's words: done of total, then the failures apart.
        progressText.textContent = `${done}/${total} jobs, ${failed} failed`;
        const ended = ENDED.has(run.state);
        cancel.hidden = ended;
        cancel.disabled = ended;
        anomTitle.textContent = ended ? 'Anomalies' : 'Anomalies so far';
        const hosts = [...new Set((run.cells || []).flatMap((c) => [c.host, c.peer]).filter(Boolean))];
        if (hosts.length > 1) {
            toSettings.href = `#/settings/${hosts.map(encodeURIComponent).join(',')}`;
            toSettings.hidden = false;
        }
        showEta();
    };
    // The time left, from the pace of the jobs finished so far; none before the first.
    const showEta = () => {
        const text = run && !ENDED.has(run.state) ? etaText(run, Date.now(), jobsStart) : '';
        eta.textContent = text;
        eta.hidden = !text;
    };

    const showCells = (cells) => {
        clear(cellsBody);
        for (const c of cells || [])
            cellsBody.append(h('tr', {'data-cell': c.index},
                h('td', {class: 'num'}, h('a', {class: 'cell-link', href: cellHref(id, c.index),
                    title: 'this cell\'s samples'}, c.index)),
                h('td', {}, hostLink(c.host)), h('td', {}, c.peer ? hostLink(c.peer) : ''),
                // The coordinator's name for the test (its tables', show's): never formatted here.
                h('td', {class: 'test'}, c.test || ''),
                ['jobs', 'queued', 'active', 'done', 'failed'].map((k) =>
                    h('td', {class: `num ${k}${k === 'failed' && c[k] > 0 ? ' bad' : ''}`}, c[k]))));
    };

    // Whether the table counts a value, and the agent's reason when its host was disturbed.
    const sampleNote = (v) => {
        const why = v.disturbed && v.disturbed_reason ? `: ${v.disturbed_reason}` : '';
        if (v.counted)
            return v.disturbed ? ` (disturbed, counted${why})` : '';
        if (v.warmup)
            return ' (not counted)';
        return v.disturbed ? ` (disturbed, not counted${why})` : ' (not counted)';
    };
    // The cell's values from the API, in run order, with the table's median and CI.
    const showSamples = (c) => {
        clear(samples);
        samples.hidden = false;
        const figures = Number.isFinite(c.median)
            ? `median ${fmtValue(c.median, c.unit)} [${fmtNum(c.ci95_low)}, ${fmtNum(c.ci95_high)}]` +
              ` n=${c.n}`
            : c.n === 0 ? 'no median: the table counts none of these values'
                : 'no median yet';
        const list = h('ol', {id: 'run-samples-list', class: 'samples'},
            (c.values || []).map((v) => h('li', {'data-job': v.job,
                'data-warmup': v.warmup ? '1' : '0', 'data-counted': v.counted ? '1' : '0'},
            h('a', {href: `/api/jobs/${encodeURIComponent(v.job)}`}, `#${v.job}`), ' ',
            v.warmup ? `warm-up ${v.repetition}` : `rep ${v.repetition}`, ': ',
            Number.isFinite(v.value) ? fmtValue(v.value, c.unit) : v.state,
            sampleNote(v))));
        samples.append(
            h('h2', {}, `Cell ${c.cell}: `, rowLink(c.row), `, ${c.test}`),
            h('p', {id: 'run-samples-figures'}, `${c.metric}: ${figures}`,
                ' ', h('a', {href: `#/run/${encodeURIComponent(id)}`, class: 'hint'}, 'close')),
            h('p', {class: 'hint'}, 'One dot per repetition in run order; warm-ups hollow, ' +
                'values the table leaves out grey; the line is the median, the band its 95% CI.'),
            stripPlot(c), list);
    };
    const loadSamples = async () => {
        if (sampleCell === null)
            return;
        try {
            const c = await api.runCell(id, sampleCell, withDist);
            if (alive)
                showSamples(c);
        } catch (e) {
            if (!alive)
                return;
            clear(samples);
            samples.hidden = false;
            samples.append(h('p', {class: 'error', role: 'alert'}, `cell ${sampleCell}: ${e.message}`));
        }
    };

    const load = async () => {
        try {
            const r = await api.run(id);
            if (!alive)
                return;
            error.hidden = true;
            showRun(r);
            showCells(r.cells);
            await loadJobs();
            await loadSamples();
            // This answer's state: a run event that ends the run asks again (refetchSoon).
            const ended = ENDED.has(r.state);
            await loadVerdict(ended);
            await loadTable(ended);
        } catch (e) {
            if (!alive)
                return;
            if (e instanceof ApiError && e.status === 404) {
                state.textContent = 'unknown';
                progressText.textContent = '';
                cancel.hidden = true;
            }
            error.hidden = false;
            error.textContent = e.message;
        }
    };

    // Events come in bursts (a round of jobs ends at once); the cells table is refetched at most
    // once a second, and once more after the burst.
    let refetchTimer = 0, lastFetch = 0;
    const seenAnomalies = new Set();
    // The events and the API may both tell of a flag, a reconnect again: one line per flag.
    const addAnomaly = (a) => {
        const key = [a.kind, a.host, a.role, a.test, a.ratio].join('\n');
        if (seenAnomalies.has(key))
            return;
        seenAnomalies.add(key);
        anomNote.hidden = true;
        anomalies.append(anomalyItem(a));
    };
    // The run's flags and verdict: an ended run's once (they are in the store, and a page opened
    // after the events missed them), a running run's every few seconds, "so far".
    let verdictAt = 0, verdictFinal = false;
    const loadVerdict = async (ended) => {
        if (verdictFinal || (!ended && Date.now() - verdictAt < VERDICT_MS))
            return;
        verdictAt = Date.now();
        const an = await api.anomalies(id, null, withDist);
        // A running run's answer that comes after the ended run's is older: dropped.
        if (!alive || verdictFinal)
            return;
        verdictFinal = ended;
        if (ended) { // the list becomes the analysis' final one
            clear(anomalies);
            seenAnomalies.clear();
        }
        (an.anomalies || []).forEach(addAnomaly);
        lastAnomalies = an.anomalies || [];
        // "Compare runs" opens on the run the regressions were judged against, when one is.
        if (an.baseline && an.baseline.id !== undefined) {
            toRuns.href = `#/compare/${encodeURIComponent(id)}/${encodeURIComponent(an.baseline.id)}`;
            toRuns.title = `this run against run ${an.baseline.id}, its baseline`;
        }
        if (!an.anomalies || !an.anomalies.length)
            anomNote.hidden = false;
        showVerdict(an, ended);
        if (lastTable)
            showTable(lastTable);
    };
    // The table of figures: a running run's every few seconds (each cell's median as soon as it
    // has one), an ended run's once more, after its verdict.
    let lastAnomalies = [], lastTable = null, tableAt = 0, tableFinal = false;
    const loadTable = async (ended) => {
        if (tableFinal || (!ended && Date.now() - tableAt < TABLE_MS))
            return;
        tableAt = Date.now();
        const t = await api.table(id, null, withDist);
        if (!alive || tableFinal)
            return;
        tableFinal = ended;
        lastTable = t;
        showTable(t);
    };
    const showTable = (t) => {
        const cell = indexCells(t.cells);
        const have = (t.cells || []).filter((c) => c.median !== null && c.median !== undefined).length;
        const all = (t.rows || []).length * (t.columns || []).length;
        // "So far" until the table asked for after the run ended is in.
        resultsNote.textContent = !all ? '' : tableFinal
            ? 'Median [95% CI] n per host and test; each test\'s plot below (a flagged host in ' +
              'vermillion, with its factor).'
            : `So far: ${have} of ${all} cells have a figure; the numbers move until the run ends.`;
        clear(tableBox);
        clear(plotsBox);
        if (!all) {
            tableBox.append(h('p', {class: 'hint'}, 'No results yet.'));
            return;
        }
        tableBox.append(scrollBox(hostTable('run-table', t, lastAnomalies)));
        plotsBox.append(smallMultiples('run-plots', t, cell, flagFinder(t, lastAnomalies)));
    };
    const showVerdict = (an, ended) => {
        anomNote.textContent = noAnomaliesText(an, !ended);
        anomNote.dataset.verdict = an.verdict;
        clear(banner);
        banner.hidden = !ended || !needsBanner(an);
        if (banner.hidden)
            return;
        banner.dataset.verdict = an.verdict;
        banner.className = `verdict-banner verdict-${an.verdict}`;
        // Only a table cell can be measured again; a ratio's cells are those of its tests.
        const cells = (an.inconclusive || []).filter((x) => !x.ratio);
        banner.append(
            h('p', {id: 'run-verdict-text', class: 'verdict-head'},
                h('strong', {}, `${verdictWord(an.verdict)}:`), ` ${an.summary}`),
            (an.inconclusive || []).length ? h('p', {class: 'hint'},
                'Not judged, and why:') : null,
            notJudgedList(an.inconclusive, 'run-not-judged'),
            cells.length ? h('div', {class: 'actions'}, again) : null, againError);
    };
    again.addEventListener('click', async () => {
        again.disabled = true;
        againError.hidden = true;
        try {
            const r = await api.againRun(id);
            if (alive)
                location.hash = `#/run/${encodeURIComponent(r.run)}`;
        } catch (e) {
            if (!alive)
                return;
            again.disabled = false;
            againError.hidden = false;
            againError.textContent = e instanceof ApiError && e.status === 401
                ? `${e.message}: set it on the Launch page` : e.message;
        }
    });
    const refetchSoon = () => {
        if (refetchTimer)
            return;
        const wait = Math.max(0, lastFetch + REFETCH_MS - Date.now());
        refetchTimer = setTimeout(() => {
            refetchTimer = 0;
            lastFetch = Date.now();
            load();
        }, wait);
    };

    // One line per job, in run order, from the API: the test as the table names it, the
    // headline figure in the table's notation, and its result a click away.
    const jobKey = (j) => JSON.stringify([j.state, j.attempt, j.reason, j.finished_ms, j.headline]);
    const jobLi = (j) => {
        const who = j.peer ? [hostLink(j.host), '->', hostLink(j.peer)] : hostLink(j.host);
        const why = disturbedReason(j);
        const rep = j.repetition === null || j.repetition === undefined ? null
            : h('span', {class: `rep${j.warmup ? ' warmup' : ''}`},
                j.warmup ? `warm-up ${j.repetition}` : `rep ${j.repetition}`);
        const took = j.duration_ms === null || j.duration_ms === undefined ? null
            : h('span', {class: 'duration'}, fmtValue(j.duration_ms / 1000, 's'));
        const head = j.headline ? h('span', {class: 'headline', title: j.headline.metric},
            fmtValue(j.headline.value, j.headline.unit)) : null;
        const pre = h('pre', {class: 'job-json'});
        const details = h('details', {class: 'job-details', 'data-job': j.id},
            h('summary', {}, j.samples ? `samples (${(j.samples.metrics || []).length} figures)`
                : 'result'), pre);
        details.addEventListener('toggle', () => {
            if (details.open && !pre.textContent) {
                const shown = {samples: j.samples, result: j.result, sides: j.sides, params: j.params};
                pre.textContent = JSON.stringify(shown, null, 2);
            }
        });
        return h('li', {'data-job': j.id, 'data-state': j.state, 'data-warmup': j.warmup ? '1' : '0',
            class: 'job'},
            h('a', {class: 'job-id', href: `/api/jobs/${encodeURIComponent(j.id)}`,
                title: 'the job as JSON'}, `#${j.id}`),
            h('span', {class: 'host'}, who),
            h('span', {class: 'test'}, j.test || ''),
            rep,
            h('span', {class: `badge state-${j.state}`}, j.state),
            took, head,
            // Kept, but not in the table's statistics unless asked for (docs/analysis.md); the
            // agent's reason beside it.
            why ? h('span', {class: 'badge disturbed', title: why}, 'disturbed') : null,
            why ? h('span', {class: 'disturbed-reason'}, why) : null,
            j.state === 'failed' && j.reason ? h('span', {class: 'reason'}, j.reason) : null,
            j.cell === null || j.cell === undefined ? null
                : h('a', {class: 'samples-link', href: cellHref(id, j.cell),
                    title: 'every repetition of this cell'}, `cell ${j.cell}`),
            details);
    };
    // The list becomes the API's: rows whose job did not change stay (an open details too).
    const showJobs = (list) => {
        const want = new Set(list.map((j) => String(j.id)));
        for (const [jid, x] of jobLis)
            if (!want.has(jid)) {
                x.li.remove();
                jobLis.delete(jid);
            }
        let prev = null;
        for (const j of list) {
            const jid = String(j.id), key = jobKey(j);
            let x = jobLis.get(jid);
            if (!x || x.key !== key) {
                const li = jobLi(j);
                const open = x && x.li.querySelector('details')?.open;
                if (x)
                    x.li.replaceWith(li);
                if (open)
                    li.querySelector('details').open = true;
                x = {li, key};
                jobLis.set(jid, x);
            }
            const at = prev ? prev.nextSibling : jobs.firstChild;
            if (at !== x.li)
                jobs.insertBefore(x.li, at);
            prev = x.li;
        }
        jobsNote.hidden = list.length > 0;
        jobsStart = firstStart(list);
        followRunning(jobs, list, nowNote, jobLis);
        showEta();
    };
    // Every page, in order; an answer older than one already shown is dropped.
    let jobsAsked = 0, jobsShown = 0;
    const loadJobs = async () => {
        const ask = ++jobsAsked;
        const list = [];
        let after = null;
        do {
            const page = await api.runJobs(id, after);
            list.push(...(page.jobs || []));
            after = page.next;
        } while (after && list.length < JOBS_SHOWN_MAX && alive);
        if (!alive || ask < jobsShown)
            return;
        jobsShown = ask;
        showJobs(list);
    };
    const onJob = (j) => {
        if (String(j.run) !== String(id))
            return;
        refetchSoon();
    };

    const off = live.on({
        run: (r) => {
            if (String(r.id) !== String(id))
                return;
            showRun(r);
            refetchSoon();
        },
        job: onJob,
        anomaly: ({run: rid, anomaly}) => {
            if (rid === String(id))
                addAnomaly(anomaly);
        },
        // After a reconnect the events missed meanwhile are in the snapshot and the store.
        snapshot: ({runs}) => {
            const r = runs.find((x) => String(x.id) === String(id));
            if (r)
                showRun(r);
            refetchSoon();
        },
    });

    cancel.addEventListener('click', async () => {
        cancel.disabled = true;
        error.hidden = true;
        try {
            const r = await api.cancelRun(id);
            if (!alive)
                return;
            showRun(r);
            showCells(r.cells);
        } catch (e) {
            if (!alive)
                return;
            cancel.disabled = false;
            error.hidden = false;
            error.textContent = e instanceof ApiError && e.status === 401
                ? `${e.message}: set it on the Launch page`
                : e.message;
        }
    });

    load();
    const etaTimer = setInterval(showEta, ETA_MS);
    return () => {
        alive = false;
        off();
        clearInterval(etaTimer);
        clearTimeout(refetchTimer);
    };
}
