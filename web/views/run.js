// Run view: one run's results first (its verdict, anomalies with their why, the table of
// medians and the plot of every test), then its progress and jobs, live. The page's state
// comes from GET /api/runs/ID and its jobs from GET /api/runs/ID/jobs, so a reload (or a
// finished run opened later) shows what the coordinator knows; /ws events move it on from
// there. #/run/ID/cell/N adds that cell's samples (GET /api/runs/ID/cells/N): one dot per
// repetition, so a wide interval can be seen for what it is. The run's verdict (GET
// /api/runs/ID/anomalies) heads the page when some of its cells could not be judged;
// #/run/ID?disturbed=include asks every figure with the disturbed samples counted.

import {api, ApiError} from '../api.js';
import {h, clear, scrollBox, hostLink} from '../dom.js';
import {fmtDate} from '../format.js';
import {anomalyItem} from '../components/anomaly.js';
import {experimentPanel, showExperiment} from '../components/experiment.js';
import {indexCells, hostTable, flagFinder} from '../components/results.js';
import {smallMultiples} from '../components/charts.js';
import {etaText} from '../components/run_live.js';
import {scheduleLink} from '../components/schedule_link.js';
import {cellHref, showSamples, showSamplesError} from '../components/cell_samples.js';
import {jobList, showJobs} from '../components/run_jobs.js';
import {verdictWord, needsBanner, notJudgedList, noAnomaliesText, withDisturbed, disturbedSwitch}
    from '../components/verdict.js';

const ENDED = new Set(['done', 'failed', 'cancelled']);
const JOBS_SHOWN_MAX = 20000; // past this the cells table, which sums them all, has to do
const REFETCH_MS = 1000;
const VERDICT_MS = 5000; // a running run's verdict is asked again at most this often
const TABLE_MS = 3000; // and its table of figures
const ETA_MS = 5000; // the time left is said again this often, jobs or not

// The page's head: the run's title, state, progress and time left, and its buttons. One word,
// one meaning: hosts within this run, this run against another, the hosts' settings side by
// side.
function headParts(id) {
    return {
        title: h('h1', {}, `Run ${id}`),
        state: h('span', {id: 'run-state', class: 'badge'}, 'loading'),
        reason: h('span', {id: 'run-reason', class: 'hint'}),
        progress: h('progress', {id: 'run-progress', max: 1, value: 0,
            'aria-labelledby': 'run-progress-text'}),
        progressText: h('span', {id: 'run-progress-text'}, ''),
        cancel: h('button', {id: 'run-cancel', type: 'button', class: 'danger'}, 'Cancel run'),
        eta: h('span', {id: 'run-eta', class: 'hint', hidden: true}),
        toCompare: h('a', {id: 'to-compare', href: `#/compare/${encodeURIComponent(id)}`,
            class: 'button', title: 'this run\'s hosts side by side: pair heatmap, tables, downloads'},
        'Compare hosts'),
        toRuns: h('a', {id: 'to-runs', href: `#/compare/${encodeURIComponent(id)}`,
            class: 'button', title: 'this run against another run'}, 'Compare runs'),
        toSettings: h('a', {id: 'to-settings', class: 'button', hidden: true,
            title: 'the settings (fingerprints) of this run\'s hosts side by side'}, 'Host settings'),
        error: h('p', {id: 'run-error', class: 'error', role: 'alert', hidden: true}),
        created: h('span', {class: 'hint'}),
        // A run started by a schedule says which, linked to the Schedules view.
        scheduleNote: h('span', {id: 'run-schedule', class: 'hint', hidden: true}),
        // How the run's jobs go: one at a time and why, or the warning that hosts sharing one
        // machine run side by side as the spec asked.
        parallelNote: h('p', {id: 'run-parallel', class: 'run-parallel', hidden: true}),
    };
}

// What the analysis made of the run: the banner of its verdict when it could not judge all of
// it (the cells not judged with their reasons, and the way to measure them again), its
// anomalies, and the results: the table of medians with their intervals, and every test's plot.
function resultParts() {
    return {
        banner: h('section', {id: 'run-verdict', class: 'verdict-banner', role: 'status',
            hidden: true}),
        again: h('button', {id: 'run-again', type: 'button'},
            'Measure the inconclusive cells again'),
        againError: h('p', {id: 'run-again-error', class: 'error', role: 'alert', hidden: true}),
        tableBox: h('div', {id: 'run-table-box'}, h('p', {class: 'hint'}, 'No results yet.')),
        plotsBox: h('div', {id: 'run-plots-box'}),
        resultsNote: h('p', {id: 'run-results-note', class: 'hint'}),
        cellsBody: h('tbody'),
        anomalies: h('ul', {id: 'run-anomalies', class: 'anomalies'}),
        anomNote: h('p', {id: 'run-anomalies-note', class: 'hint'}, 'Not judged yet.'),
        anomTitle: h('h2', {}, 'Anomalies'),
        experiment: experimentPanel(),
    };
}

function cellsTable(body) {
    return h('table', {id: 'run-cells', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'cells of the run and their jobs'),
        h('thead', {}, h('tr', {},
            ['cell', 'host', 'peer', 'test', 'jobs', 'queued', 'active', 'done', 'failed']
                .map((c, i) => h('th', {scope: 'col', class: i >= 4 ? 'num' : null}, c)))),
        body);
}

// The page's state: its elements (el), the jobs' list, what was shown and asked for last.
// sampleCell: the cell of #/run/ID/cell/N, whose samples are shown above the rest, or null.
function runPage(id, withDist, sampleCell) {
    return {
        id, withDist, sampleCell, alive: true, run: null,
        el: {...headParts(id), ...resultParts(),
            samples: h('section', {id: 'run-samples', class: 'card', hidden: true,
                'data-cell': sampleCell})},
        jobs: jobList(),
        jobsStart: 0, // when the run's first job started
        jobsAsked: 0, jobsShown: 0,
        refetchTimer: 0, lastFetch: 0,
        seenAnomalies: new Set(),
        verdictAt: 0, verdictFinal: false,
        lastAnomalies: [], lastTable: null, tableAt: 0, tableFinal: false,
    };
}

function layout(v) {
    const e = v.el, jl = v.jobs;
    return h('section', {class: 'view run'},
        e.title,
        e.banner,
        e.experiment,
        h('div', {class: 'run-head'}, e.state, e.reason, e.created, e.scheduleNote),
        e.parallelNote,
        h('div', {class: 'run-progress'}, e.progress, e.progressText, e.eta),
        h('div', {class: 'actions'}, e.cancel, e.toCompare, e.toRuns, e.toSettings,
            disturbedSwitch('run-disturbed', v.withDist)),
        e.error,
        e.samples,
        h('section', {id: 'run-anomalies-card', class: 'card'}, e.anomTitle, e.anomNote,
            e.anomalies),
        h('section', {id: 'run-results', class: 'card'}, h('h2', {}, 'Results'), e.resultsNote,
            e.tableBox, e.plotsBox),
        h('div', {class: 'run-grid'},
            h('section', {id: 'run-jobs-card', class: 'card'}, h('h2', {}, 'Jobs'), jl.nowNote,
                jl.note, jl.ul),
            h('section', {class: 'card'}, h('h2', {}, 'Cells'), scrollBox(cellsTable(e.cellsBody)))));
}

// The API's answer and the events travel on two connections: an answer sent before an event
// may arrive after it. A run only moves forward, so an older view of it is dropped.
function rank(r) {
    const p = r.progress || {};
    return (ENDED.has(r.state) ? 1e15 : 0) + (Number(p.done) || 0) + (Number(p.failed) || 0);
}

// Events carry no such fields; the API's answer does (an older coordinator's not).
function showParallel(note, run) {
    if (run.parallel === false) {
        note.hidden = false;
        note.dataset.parallel = 'false';
        note.textContent = 'Jobs run one at a time' +
            (run.serial_reason ? `: ${run.serial_reason}` : '');
    } else if (run.parallel === true && run.parallel_warning) {
        note.hidden = false;
        note.dataset.parallel = 'true';
        note.textContent = `Warning: ${run.parallel_warning}`;
    }
}

// The head's lines of the run: its name, state, schedule, times and progress.
function showHead(e, run) {
    const p = run.progress || {};
    const done = Number(p.done) || 0, failed = Number(p.failed) || 0;
    const total = Number(p.total) || 0;
    e.title.textContent = `Run ${run.id}: ${run.name || ''}`;
    e.state.textContent = run.state;
    e.state.className = `badge state-${run.state}`;
    e.reason.textContent = run.reason || '';
    showParallel(e.parallelNote, run);
    if (run.schedule && e.scheduleNote.dataset.schedule !== String(run.schedule)) {
        e.scheduleNote.dataset.schedule = String(run.schedule);
        clear(e.scheduleNote).append('started by ', scheduleLink(run.schedule));
        e.scheduleNote.hidden = false;
    }
    e.created.textContent = run.created_ms ? `started ${fmtDate(run.created_ms)}` +
        (Number(run.finished_ms) > 0 ? `, ended ${fmtDate(run.finished_ms)}` : '') : '';
    e.progress.max = Math.max(total, 1);
    e.progress.value = done + failed;
    // The CLI's words: done of total, then the failures apart.
    e.progressText.textContent = `${done}/${total} jobs, ${failed} failed`;
}

function showRun(v, r) {
    if (v.run && v.run.progress && r.progress && rank(r) < rank(v.run))
        return;
    const run = v.run = Object.assign(v.run || {}, r);
    const e = v.el;
    showHead(e, run);
    const ended = ENDED.has(run.state);
    e.cancel.hidden = ended;
    e.cancel.disabled = ended;
    e.anomTitle.textContent = ended ? 'Anomalies' : 'Anomalies so far';
    const hosts = [...new Set((run.cells || []).flatMap((c) => [c.host, c.peer]).filter(Boolean))];
    if (hosts.length > 1) {
        e.toSettings.href = `#/settings/${hosts.map(encodeURIComponent).join(',')}`;
        e.toSettings.hidden = false;
    }
    showEta(v);
}

// The time left, from the pace of the jobs finished so far; none before the first.
function showEta(v) {
    const text = v.run && !ENDED.has(v.run.state) ? etaText(v.run, Date.now(), v.jobsStart) : '';
    v.el.eta.textContent = text;
    v.el.eta.hidden = !text;
}

function showCells(v, cells) {
    const body = clear(v.el.cellsBody);
    for (const c of cells || [])
        body.append(h('tr', {'data-cell': c.index},
            h('td', {class: 'num'}, h('a', {class: 'cell-link', href: cellHref(v.id, c.index),
                title: 'this cell\'s samples'}, c.index)),
            h('td', {}, hostLink(c.host)), h('td', {}, c.peer ? hostLink(c.peer) : ''),
            // The coordinator's name for the test (its tables', show's): never formatted here.
            h('td', {class: 'test'}, c.test || ''),
            ['jobs', 'queued', 'active', 'done', 'failed'].map((k) =>
                h('td', {class: `num ${k}${k === 'failed' && c[k] > 0 ? ' bad' : ''}`}, c[k]))));
}

async function loadSamples(v) {
    if (v.sampleCell === null)
        return;
    try {
        const c = await api.runCell(v.id, v.sampleCell, v.withDist);
        if (v.alive)
            showSamples(v.el.samples, c, v.id);
    } catch (e) {
        if (v.alive)
            showSamplesError(v.el.samples, v.sampleCell, e);
    }
}

async function load(v) {
    try {
        const r = await api.run(v.id);
        if (!v.alive)
            return;
        v.el.error.hidden = true;
        showRun(v, r);
        showCells(v, r.cells);
        await loadJobs(v);
        await loadSamples(v);
        // This answer's state: a run event that ends the run asks again (refetchSoon).
        const ended = ENDED.has(r.state);
        v.isExperiment = Boolean(r.explains);
        await loadExperiment(v, ended);
        await loadVerdict(v, ended);
        await loadTable(v, ended);
    } catch (e) {
        if (!v.alive)
            return;
        if (e instanceof ApiError && e.status === 404) {
            v.el.state.textContent = 'unknown';
            v.el.progressText.textContent = '';
            v.el.cancel.hidden = true;
        }
        v.el.error.hidden = false;
        v.el.error.textContent = e.message;
    }
}

// An experiment's run (its "explains" names the run it explains) opens on its answer, asked
// again while it runs.
async function loadExperiment(v, ended) {
    if (!v.isExperiment || v.experimentFinal)
        return;
    const xp = await api.experiment(v.id);
    if (!v.alive)
        return;
    v.experimentFinal = ended;
    showExperiment(v.el.experiment, xp);
}

// Events come in bursts (a round of jobs ends at once); the page is refetched at most once a
// second, and once more after the burst.
function refetchSoon(v) {
    if (v.refetchTimer)
        return;
    const wait = Math.max(0, v.lastFetch + REFETCH_MS - Date.now());
    v.refetchTimer = setTimeout(() => {
        v.refetchTimer = 0;
        v.lastFetch = Date.now();
        load(v);
    }, wait);
}

// The events and the API may both tell of a flag, a reconnect again: one line per flag.
function addAnomaly(v, a) {
    const key = [a.kind, a.host, a.role, a.test, a.ratio].join('\n');
    if (v.seenAnomalies.has(key))
        return;
    v.seenAnomalies.add(key);
    v.el.anomNote.hidden = true;
    // An experiment's own anomalies are of its treated cells: nothing to explain there.
    v.el.anomalies.append(anomalyItem(a, v.isExperiment ? null : v.id));
}

// The run's flags and verdict: an ended run's once (they are in the store, and a page opened
// after the events missed them), a running run's every few seconds, "so far".
async function loadVerdict(v, ended) {
    if (v.verdictFinal || (!ended && Date.now() - v.verdictAt < VERDICT_MS))
        return;
    v.verdictAt = Date.now();
    const an = await api.anomalies(v.id, null, v.withDist);
    // A running run's answer that comes after the ended run's is older: dropped.
    if (!v.alive || v.verdictFinal)
        return;
    v.verdictFinal = ended;
    if (ended) { // the list becomes the analysis' final one
        clear(v.el.anomalies);
        v.seenAnomalies.clear();
    }
    (an.anomalies || []).forEach((a) => addAnomaly(v, a));
    v.lastAnomalies = an.anomalies || [];
    // "Compare runs" opens on the run the regressions were judged against, when one is.
    if (an.baseline && an.baseline.id !== undefined) {
        v.el.toRuns.href = `#/compare/${encodeURIComponent(v.id)}/` +
            encodeURIComponent(an.baseline.id);
        v.el.toRuns.title = `this run against run ${an.baseline.id}, its baseline`;
    }
    if (!an.anomalies || !an.anomalies.length)
        v.el.anomNote.hidden = false;
    showVerdict(v.el, an, ended);
    if (v.lastTable)
        showTable(v, v.lastTable);
}

// The table of figures: a running run's every few seconds (each cell's median as soon as it
// has one), an ended run's once more, after its verdict.
async function loadTable(v, ended) {
    if (v.tableFinal || (!ended && Date.now() - v.tableAt < TABLE_MS))
        return;
    v.tableAt = Date.now();
    const t = await api.table(v.id, null, v.withDist);
    if (!v.alive || v.tableFinal)
        return;
    v.tableFinal = ended;
    v.lastTable = t;
    showTable(v, t);
}

// "So far" until the table asked for after the run ended is in.
function resultsText(t, final) {
    const have = (t.cells || []).filter((c) => c.median !== null && c.median !== undefined).length;
    const all = (t.rows || []).length * (t.columns || []).length;
    if (!all)
        return '';
    return final
        ? 'Median [95% CI] n per host and test; each test\'s plot below (a flagged host in ' +
          'vermillion, with its factor).'
        : `So far: ${have} of ${all} cells have a figure; the numbers move until the run ends.`;
}

function showTable(v, t) {
    const e = v.el;
    const all = (t.rows || []).length * (t.columns || []).length;
    e.resultsNote.textContent = resultsText(t, v.tableFinal);
    clear(e.tableBox);
    clear(e.plotsBox);
    if (!all) {
        e.tableBox.append(h('p', {class: 'hint'}, 'No results yet.'));
        return;
    }
    e.tableBox.append(scrollBox(hostTable('run-table', t, v.lastAnomalies)));
    e.plotsBox.append(smallMultiples('run-plots', t, indexCells(t.cells),
        flagFinder(t, v.lastAnomalies)));
}

function showVerdict(e, an, ended) {
    e.anomNote.textContent = noAnomaliesText(an, !ended);
    e.anomNote.dataset.verdict = an.verdict;
    clear(e.banner);
    e.banner.hidden = !ended || !needsBanner(an);
    if (e.banner.hidden)
        return;
    e.banner.dataset.verdict = an.verdict;
    e.banner.className = `verdict-banner verdict-${an.verdict}`;
    // Only a table cell can be measured again; a ratio's cells are those of its tests.
    const cells = (an.inconclusive || []).filter((x) => !x.ratio);
    e.banner.append(
        h('p', {id: 'run-verdict-text', class: 'verdict-head'},
            h('strong', {}, `${verdictWord(an.verdict)}:`), ` ${an.summary}`),
        (an.inconclusive || []).length ? h('p', {class: 'hint'},
            'Not judged, and why:') : null,
        notJudgedList(an.inconclusive, 'run-not-judged'),
        cells.length ? h('div', {class: 'actions'}, e.again) : null, e.againError);
}

// A refused write's words: a 401 says where the token is set.
function writeError(e) {
    return e instanceof ApiError && e.status === 401
        ? `${e.message}: set it on the Launch page` : e.message;
}

async function measureAgain(v) {
    const e = v.el;
    e.again.disabled = true;
    e.againError.hidden = true;
    try {
        const r = await api.againRun(v.id);
        if (v.alive)
            location.hash = `#/run/${encodeURIComponent(r.run)}`;
    } catch (err) {
        if (!v.alive)
            return;
        e.again.disabled = false;
        e.againError.hidden = false;
        e.againError.textContent = writeError(err);
    }
}

async function cancelRun(v) {
    const e = v.el;
    e.cancel.disabled = true;
    e.error.hidden = true;
    try {
        const r = await api.cancelRun(v.id);
        if (!v.alive)
            return;
        showRun(v, r);
        showCells(v, r.cells);
    } catch (err) {
        if (!v.alive)
            return;
        e.cancel.disabled = false;
        e.error.hidden = false;
        e.error.textContent = writeError(err);
    }
}

// Every page, in order; an answer older than one already shown is dropped.
async function loadJobs(v) {
    const ask = ++v.jobsAsked;
    const list = [];
    let after = null;
    do {
        const page = await api.runJobs(v.id, after);
        list.push(...(page.jobs || []));
        after = page.next;
    } while (after && list.length < JOBS_SHOWN_MAX && v.alive);
    if (!v.alive || ask < v.jobsShown)
        return;
    v.jobsShown = ask;
    v.jobsStart = showJobs(v.jobs, list, v.id);
    showEta(v);
}

// The run's events: its state and progress at once, the rest from the API soon after.
function follow(v, live) {
    const id = String(v.id);
    return live.on({
        run: (r) => {
            if (String(r.id) !== id)
                return;
            showRun(v, r);
            refetchSoon(v);
        },
        job: (j) => {
            if (String(j.run) === id)
                refetchSoon(v);
        },
        anomaly: ({run: rid, anomaly}) => {
            if (rid === id)
                addAnomaly(v, anomaly);
        },
        // After a reconnect the events missed meanwhile are in the snapshot and the store.
        snapshot: ({runs}) => {
            const r = runs.find((x) => String(x.id) === id);
            if (r)
                showRun(v, r);
            refetchSoon(v);
        },
    });
}

export function mount(root, args, {live, query}) {
    // #/run/ID/cell/N: that cell's samples above the rest.
    const sampleCell = args[1] === 'cell' && /^\d+$/.test(args[2] || '') ? args[2] : null;
    const v = runPage(args[0] || '', withDisturbed(query), sampleCell);
    root.append(layout(v));
    v.el.again.addEventListener('click', () => measureAgain(v));
    v.el.cancel.addEventListener('click', () => cancelRun(v));
    const off = follow(v, live);
    load(v);
    const etaTimer = setInterval(() => showEta(v), ETA_MS);
    return () => {
        v.alive = false;
        off();
        clearInterval(etaTimer);
        clearTimeout(v.refetchTimer);
    };
}
