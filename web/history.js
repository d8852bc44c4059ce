// History view: the runs the coordinator keeps, each ended one with its flags and cells not
// judged (its anomalies, GET /api/runs/ID/anomalies, asked for the newest runs a few at a time:
// the worker builds them off the loop and keeps them), and one run set against a baseline run
// to see which cells moved beyond both confidence intervals.

import {api} from './api.js';
import {h, clear, scrollBox, fmtDate, anomalyItem} from './dom.js';
import {scheduleLink} from './schedules.js';
import {verdictWord, notJudgedCount} from './verdict.js';

function byNewest(a, b) {
    return Number(b.id) - Number(a.id);
}

// Runs whose counts are asked for at most (the newest), and requests at a time.
const COUNTS_RUNS = 50;
const COUNTS_PARALLEL = 2;

// A run's flags (its anomalies but the fleet's own moves, which flag no host) and cells not
// judged, from its anomalies; null when they are not known.
export function runCounts(an) {
    if (!an)
        return null;
    const c = an.cells || {};
    return {
        flags: (an.anomalies || []).filter((a) => a.kind !== 'fleet-move').length,
        inconclusive: Number(c.inconclusive) || 0,
        verdict: an.verdict || '',
    };
}

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

export function mount(root, _args, {live}) {
    let alive = true;
    let seq = 0;
    const tbody = h('tbody');
    const table = h('table', {id: 'history-table', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'runs, newest first'),
        h('thead', {}, h('tr', {},
            ['run', 'name', 'state', 'progress', 'flags', 'inconclusive', 'created', 'ended', '']
                .map((c, i) => h('th', {scope: 'col', class: [0, 4, 5].includes(i) ? 'num' : null}, c)))),
        tbody);
    const runSel = h('select', {id: 'history-run'});
    const baseSel = h('select', {id: 'baseline'});
    const show = h('button', {type: 'button', id: 'regress-show'}, 'Compare');
    const regressions = h('ul', {id: 'regressions', class: 'anomalies'});
    const note = h('p', {class: 'hint', id: 'regressions-note', 'aria-live': 'polite'},
        'Pick a run and a baseline.');
    const error = h('p', {class: 'error', role: 'alert', hidden: true});
    root.append(h('section', {class: 'view history'},
        h('h1', {}, 'History'),
        h('section', {class: 'card'}, h('h2', {}, 'Regressions'),
            h('div', {class: 'regress-form'},
                h('div', {class: 'field inline'}, h('label', {for: 'history-run'}, 'run'), runSel),
                h('div', {class: 'field inline'}, h('label', {for: 'baseline'}, 'against baseline'), baseSel),
                show),
            note, regressions),
        error,
        h('section', {class: 'card'}, h('h2', {}, 'Runs'), scrollBox(table))));

    // Each ended run's counts, by id; asked for once per run (again when it ends anew).
    const counts = new Map();
    const asked = new Set();
    let inflight = 0;
    const askCounts = () => {
        const want = [...live.runs.values()].sort(byNewest).slice(0, COUNTS_RUNS)
            .filter((r) => r.state !== 'running' && !asked.has(String(r.id)));
        while (inflight < COUNTS_PARALLEL && want.length) {
            const id = String(want.shift().id);
            asked.add(id);
            inflight++;
            api.anomalies(id).then((an) => runCounts(an), () => null).then((k) => {
                inflight--;
                if (!alive)
                    return;
                counts.set(id, k || {unknown: true});
                const r = live.runs.get(id);
                const old = tbody.querySelector(`tr[data-run="${CSS.escape(id)}"]`);
                if (r && old)
                    old.replaceWith(row(r, counts));
                askCounts();
            });
        }
    };

    const render = () => {
        const runs = [...live.runs.values()].sort(byNewest);
        clear(tbody);
        tbody.append(...runs.map((r) => row(r, counts)));
        if (!runs.length)
            tbody.append(h('tr', {}, h('td', {colspan: 9, class: 'hint'}, 'No run yet: start one on the Launch page.')));
        askCounts();
        const keepRun = runSel.value, keepBase = baseSel.value;
        clear(runSel);
        runSel.append(...runs.map(option));
        clear(baseSel);
        baseSel.append(h('option', {value: ''}, 'previous done run of the same name'),
            ...runs.map(option));
        if (runs.some((r) => String(r.id) === keepRun))
            runSel.value = keepRun;
        if (keepBase === '' || runs.some((r) => String(r.id) === keepBase))
            baseSel.value = keepBase;
    };

    const compare = async () => {
        const id = runSel.value, base = baseSel.value;
        const mine = ++seq; // answers to an earlier choice are dropped
        clear(regressions);
        error.hidden = true;
        // The verdict belongs to the answer shown: a question asked again has none until it is in.
        delete note.dataset.verdict;
        if (!id) {
            note.textContent = 'Pick a run and a baseline.';
            return;
        }
        if (id === base) {
            note.textContent = 'A run is not its own baseline: pick another.';
            return;
        }
        note.textContent = 'loading...';
        try {
            const an = await api.anomalies(id, base);
            if (!alive || mine !== seq)
                return;
            const regs = (an.anomalies || []).filter((a) => a.kind === 'regression');
            // A move of the whole fleet is said once, before the hosts that moved beyond it.
            const moves = (an.anomalies || []).filter((a) => a.kind === 'fleet-move');
            regressions.append(...moves.map(anomalyItem), ...regs.map(anomalyItem));
            // "No regressions" of a run with cells not judged would claim what nobody looked at:
            // the verdict comes first, and the count is of the judged cells.
            const unjudged = notJudgedCount(an);
            note.dataset.verdict = an.verdict || '';
            note.textContent = !an.baseline
                ? `Run ${id} has no baseline: no earlier run of its name ended done with a cell in common. Pick one.`
                : (unjudged ? `${verdictWord(an.verdict)}: ${an.summary}. Among the judged cells, ` : '') +
                  `${regs.length ? regs.length : unjudged ? 'no' : 'No'} regression${regs.length === 1 ? '' : 's'} of run ${id} ` +
                  `against run ${an.baseline.id} (cells whose 95% intervals no longer overlap and ` +
                  'that moved past the floor, beyond the fleet\'s own move)' +
                  (moves.length ? `; the whole fleet moved on ${moves.length} test${moves.length === 1 ? '' : 's'}.` : '.');
        } catch (e) {
            if (!alive || mine !== seq)
                return;
            // Two runs that share no cell have no regressions to show, nor "none": say so.
            if (e.status === 409) {
                note.textContent = `${e.message}: nothing to compare.`;
                return;
            }
            note.textContent = '';
            error.hidden = false;
            error.textContent = e.message;
        }
    };
    runSel.addEventListener('change', compare);
    baseSel.addEventListener('change', compare);
    show.addEventListener('click', compare);

    const update = (r) => {
        const old = tbody.querySelector(`tr[data-run="${CSS.escape(String(r.id))}"]`);
        if (!old) {
            render();
            return;
        }
        // A run that ended (again) has new counts.
        if (r.state !== 'running' && !counts.has(String(r.id)))
            asked.delete(String(r.id));
        old.replaceWith(row(r, counts));
        askCounts();
        for (const sel of [runSel, baseSel])
            for (const o of sel.options)
                if (o.value === String(r.id))
                    o.textContent = option(r).textContent;
    };
    // The newest run against its default baseline is shown at once: the question one most
    // often comes here with.
    let first = true;
    const renderAll = () => {
        render();
        if (first && runSel.value) {
            first = false;
            compare();
        }
    };
    const off = live.on({snapshot: renderAll, run: update});
    if (live.haveSnapshot) {
        renderAll();
    } else {
        api.runs().then((runs) => {
            if (!alive || live.haveSnapshot)
                return;
            for (const r of runs)
                live.runs.set(String(r.id), r);
            renderAll();
        }).catch((e) => {
            if (!alive)
                return;
            error.hidden = false;
            error.textContent = e.message;
        });
    }
    return () => {
        alive = false;
        off();
    };
}
