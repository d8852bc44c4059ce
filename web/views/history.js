// History view: the runs the coordinator keeps, each ended one with its flags and cells not
// judged (its anomalies, GET /api/runs/ID/anomalies, asked for the newest runs a few at a time:
// the worker builds them off the loop and keeps them), and one run set against a baseline run
// to see which cells moved beyond both confidence intervals.

import {api} from '../api.js';
import {h, clear, scrollBox} from '../dom.js';
import {fmtDate} from '../format.js';
import {anomalyItem} from '../components/anomaly.js';
import {scheduleLink} from '../components/schedule_link.js';
import {runCounts, regressionsText} from '../components/verdict.js';

function byNewest(a, b) {
    return Number(b.id) - Number(a.id);
}

// Runs whose counts are asked for at most (the newest), and requests at a time.
const COUNTS_RUNS = 50;
const COUNTS_PARALLEL = 2;

function countCells(r, counts) {
    const k = counts.get(String(r.id));
    if (r.state === 'running' || !k || k.unknown)
        return [h('td', {class: 'num flags', title: k && k.unknown ? 'not known: its analysis failed' : null},
            r.state === 'running' ? '' : k && k.unknown ? '-' : '\u2026'),
        h('td', {class: 'num inconclusive'}, '')];
    return [
        h('td', {class: `num flags${k.flags ? ' has-flags' : ''}`, 'data-count': k.flags,
            title: k.flags ? 'hosts or links flagged (the run\'s page says why)' : 'nothing flagged'},
        k.flags ? h('a', {href: `#/run/${encodeURIComponent(r.id)}`}, String(k.flags)) : '0'),
        h('td', {class: 'num inconclusive', 'data-count': k.inconclusive,
            title: 'cells measured but not judged'}, String(k.inconclusive)),
    ];
}

function row(r, counts) {
    const p = r.progress || {};
    const done = Number(p.done) || 0, failed = Number(p.failed) || 0, total = Number(p.total) || 0;
    const id = encodeURIComponent(r.id);
    return h('tr', {'data-run': r.id},
        h('td', {class: 'num'}, h('a', {href: `#/run/${id}`}, r.id)),
        h('td', {class: 'name'}, r.name, r.schedule ? [' ', scheduleLink(r.schedule)] : null),
        h('td', {class: 'state'}, h('span', {class: `badge state-${r.state}`}, r.state),
            r.reason ? h('span', {class: 'hint'}, ` ${r.reason}`) : null),
        h('td', {class: 'progress'},
            h('progress', {max: Math.max(total, 1), value: done + failed, 'aria-hidden': 'true'}), ' ',
            `${done}/${total} jobs, ${failed} failed`),
        countCells(r, counts),
        h('td', {class: 'created'}, fmtDate(r.created_ms)),
        h('td', {class: 'finished'}, Number(r.finished_ms) > 0 ? fmtDate(r.finished_ms) : ''),
        h('td', {}, h('a', {href: `#/compare/${id}`}, 'compare')));
}

function option(r) {
    return h('option', {value: r.id}, `${r.id}: ${r.name} (${r.state})`);
}

// The page's elements and state: the runs' table, the regressions' choice and answer, and
// each ended run's counts by id (asked for once per run, again when it ends anew).
function historyPage(live) {
    const tbody = h('tbody');
    return {
        live, alive: true, seq: 0, first: true,
        counts: new Map(), asked: new Set(), inflight: 0,
        tbody,
        table: h('table', {id: 'history-table', class: 'data'},
            h('caption', {class: 'visually-hidden'}, 'runs, newest first'),
            h('thead', {}, h('tr', {},
                ['run', 'name', 'state', 'progress', 'flags', 'inconclusive', 'created', 'ended', '']
                    .map((c, i) => h('th', {scope: 'col', class: [0, 4, 5].includes(i) ? 'num' : null}, c)))),
            tbody),
        runSel: h('select', {id: 'history-run'}),
        baseSel: h('select', {id: 'baseline'}),
        show: h('button', {type: 'button', id: 'regress-show'}, 'Compare'),
        regressions: h('ul', {id: 'regressions', class: 'anomalies'}),
        note: h('p', {class: 'hint', id: 'regressions-note', 'aria-live': 'polite'},
            'Pick a run and a baseline.'),
        error: h('p', {class: 'error', role: 'alert', hidden: true}),
    };
}

function layout(v) {
    return h('section', {class: 'view history'},
        h('h1', {}, 'History'),
        h('section', {class: 'card'}, h('h2', {}, 'Regressions'),
            h('div', {class: 'regress-form'},
                h('div', {class: 'field inline'}, h('label', {for: 'history-run'}, 'run'), v.runSel),
                h('div', {class: 'field inline'}, h('label', {for: 'baseline'}, 'against baseline'),
                    v.baseSel),
                v.show),
            v.note, v.regressions),
        v.error,
        h('section', {class: 'card'}, h('h2', {}, 'Runs'), scrollBox(v.table)));
}

// The newest runs' counts, COUNTS_PARALLEL requests at a time; each row drawn again with its.
function askCounts(v) {
    const want = [...v.live.runs.values()].sort(byNewest).slice(0, COUNTS_RUNS)
        .filter((r) => r.state !== 'running' && !v.asked.has(String(r.id)));
    while (v.inflight < COUNTS_PARALLEL && want.length) {
        const id = String(want.shift().id);
        v.asked.add(id);
        v.inflight++;
        api.anomalies(id).then((an) => runCounts(an), () => null).then((k) => {
            v.inflight--;
            if (!v.alive)
                return;
            v.counts.set(id, k || {unknown: true});
            const r = v.live.runs.get(id);
            const old = v.tbody.querySelector(`tr[data-run="${CSS.escape(id)}"]`);
            if (r && old)
                old.replaceWith(row(r, v.counts));
            askCounts(v);
        });
    }
}

// Every run's row, and the runs to choose from (the choices kept).
function render(v) {
    const runs = [...v.live.runs.values()].sort(byNewest);
    clear(v.tbody);
    v.tbody.append(...runs.map((r) => row(r, v.counts)));
    if (!runs.length)
        v.tbody.append(h('tr', {}, h('td', {colspan: 9, class: 'hint'},
            'No run yet: start one on the Launch page.')));
    askCounts(v);
    const keepRun = v.runSel.value, keepBase = v.baseSel.value;
    clear(v.runSel);
    v.runSel.append(...runs.map(option));
    clear(v.baseSel);
    v.baseSel.append(h('option', {value: ''}, 'previous done run of the same name'),
        ...runs.map(option));
    if (runs.some((r) => String(r.id) === keepRun))
        v.runSel.value = keepRun;
    if (keepBase === '' || runs.some((r) => String(r.id) === keepBase))
        v.baseSel.value = keepBase;
}

function showRegressions(v, id, an) {
    const regs = (an.anomalies || []).filter((a) => a.kind === 'regression');
    // A move of the whole fleet is said once, before the hosts that moved beyond it.
    const moves = (an.anomalies || []).filter((a) => a.kind === 'fleet-move');
    v.regressions.append(...moves.map(anomalyItem), ...regs.map(anomalyItem));
    v.note.dataset.verdict = an.verdict || '';
    v.note.textContent = regressionsText(id, an, regs, moves);
}

// The run picked against the baseline picked; answers to an earlier choice are dropped.
async function compare(v) {
    const id = v.runSel.value, base = v.baseSel.value;
    const mine = ++v.seq;
    clear(v.regressions);
    v.error.hidden = true;
    // The verdict belongs to the answer shown: a question asked again has none until it is in.
    delete v.note.dataset.verdict;
    if (!id) {
        v.note.textContent = 'Pick a run and a baseline.';
        return;
    }
    if (id === base) {
        v.note.textContent = 'A run is not its own baseline: pick another.';
        return;
    }
    v.note.textContent = 'loading...';
    try {
        const an = await api.anomalies(id, base);
        if (v.alive && mine === v.seq)
            showRegressions(v, id, an);
    } catch (e) {
        if (!v.alive || mine !== v.seq)
            return;
        // Two runs that share no cell have no regressions to show, nor "none": say so.
        if (e.status === 409) {
            v.note.textContent = `${e.message}: nothing to compare.`;
            return;
        }
        v.note.textContent = '';
        v.error.hidden = false;
        v.error.textContent = e.message;
    }
}

function update(v, r) {
    const old = v.tbody.querySelector(`tr[data-run="${CSS.escape(String(r.id))}"]`);
    if (!old) {
        render(v);
        return;
    }
    // A run that ended (again) has new counts.
    if (r.state !== 'running' && !v.counts.has(String(r.id)))
        v.asked.delete(String(r.id));
    old.replaceWith(row(r, v.counts));
    askCounts(v);
    for (const sel of [v.runSel, v.baseSel])
        for (const o of sel.options)
            if (o.value === String(r.id))
                o.textContent = option(r).textContent;
}

// The newest run against its default baseline is shown at once: the question one most often
// comes here with.
function renderAll(v) {
    render(v);
    if (v.first && v.runSel.value) {
        v.first = false;
        compare(v);
    }
}

export function mount(root, _args, {live}) {
    const v = historyPage(live);
    root.append(layout(v));
    for (const el of [v.runSel, v.baseSel])
        el.addEventListener('change', () => compare(v));
    v.show.addEventListener('click', () => compare(v));
    const off = live.on({snapshot: () => renderAll(v), run: (r) => update(v, r)});
    if (live.haveSnapshot) {
        renderAll(v);
    } else {
        api.runs().then((runs) => {
            if (!v.alive || live.haveSnapshot)
                return;
            for (const r of runs)
                live.runs.set(String(r.id), r);
            renderAll(v);
        }).catch((e) => {
            if (!v.alive)
                return;
            v.error.hidden = false;
            v.error.textContent = e.message;
        });
    }
    return () => {
        v.alive = false;
        off();
    };
}
