// Run against run, for the compare view: a select of the other runs and, once one is picked
// (#/compare/A/B), the cells both runs share side by side from /api/compare, the changes whose
// 95% intervals are apart marked, and the cells only one run has listed under them.

import {api} from '../api.js';
import {h, clear, scrollBox, rowLink} from '../dom.js';
import {fmtNum} from '../format.js';

const VERDICT = {
    higher: 'higher, CIs apart',
    lower: 'lower, CIs apart',
    overlap: 'CIs overlap: no change claimed',
    'no data': 'no median',
};

function side(s) {
    if (!s || s.median === null)
        return h('td', {class: 'num empty'}, s && s.failed ? `${s.failed} failed` : '-');
    return h('td', {class: 'num', title: `95% CI coverage ${fmtNum((s.ci_coverage || 0) * 100)}%`},
        h('span', {class: 'median'}, `${fmtNum(s.median)} ${s.unit}`),
        h('span', {class: 'ci'}, `[${fmtNum(s.ci95_low)}, ${fmtNum(s.ci95_high)}] n=${s.n}`));
}

function sharedTable(cmp) {
    const a = cmp.a.id, b = cmp.b.id;
    return h('table', {class: 'matrix', id: 'runs-compare-table'},
        h('thead', {}, h('tr', {},
            h('th', {scope: 'col'}, 'host'), h('th', {scope: 'col'}, 'test'),
            h('th', {scope: 'col'}, `run ${a}`), h('th', {scope: 'col'}, `run ${b}`),
            h('th', {scope: 'col'}, `change (${cmp.change_unit})`), h('th', {scope: 'col'}, 'verdict'))),
        h('tbody', {}, cmp.shared.map((c) => {
            const apart = c.verdict === 'higher' || c.verdict === 'lower';
            return h('tr', {'data-host': c.host, 'data-test': c.test, 'data-verdict': c.verdict,
                class: apart ? 'anomalous' : null},
            h('th', {scope: 'row'}, rowLink(c.host)), h('td', {}, c.test), side(c.a), side(c.b),
            h('td', {class: 'num' + (apart ? ' flagged' : '')},
                c.change_pct === null ? '-' : `${c.change_pct > 0 ? '+' : ''}${fmtNum(c.change_pct)}%`),
            h('td', {class: apart ? 'flagged' : null}, VERDICT[c.verdict] || c.verdict));
        })));
}

function onlyList(id, runId, cells) {
    if (!cells.length)
        return null;
    return h('div', {},
        h('h3', {}, `Only in run ${runId} (${cells.length})`),
        h('ul', {id, class: 'plain'}, cells.map((c) => h('li', {}, rowLink(c.host), `: ${c.test}`))));
}

// The card; load() fills it. id is this view's run, other the run to set against it ('' none);
// with withDist the comparison counts disturbed samples too (the view's ?disturbed=include).
export function runsCard(id, other, withDist) {
    const sel = h('select', {id: 'compare-other'});
    const note = h('p', {class: 'hint', id: 'runs-compare-note', 'aria-live': 'polite'},
        'Pick another run to set this one against.');
    const box = h('div', {});
    const card = h('section', {class: 'card wide', id: 'runs-compare'},
        h('h2', {}, 'Against another run'),
        h('div', {class: 'field inline'}, h('label', {for: 'compare-other'}, `run ${id} against`), sel),
        note, box);
    sel.addEventListener('change', () => {
        location.hash = (sel.value ? `#/compare/${encodeURIComponent(id)}/${encodeURIComponent(sel.value)}`
            : `#/compare/${encodeURIComponent(id)}`) + (withDist ? '?disturbed=include' : '');
    });
    const load = async (alive) => {
        try {
            const runs = await api.runs();
            if (!alive())
                return;
            clear(sel);
            sel.append(h('option', {value: ''}, '(pick a run)'),
                ...runs.filter((r) => String(r.id) !== String(id)).map((r) =>
                    h('option', {value: String(r.id)}, `${r.id}: ${r.name} (${r.state})`)));
            sel.value = other && [...sel.options].some((o) => o.value === String(other)) ? String(other) : '';
        } catch (e) {
            note.textContent = e.message;
        }
        if (!other)
            return;
        clear(box);
        note.textContent = 'loading...';
        try {
            const cmp = await api.compare(id, other, withDist);
            if (!alive())
                return;
            const n = cmp.counts;
            const running = [cmp.a, cmp.b].filter((r) => r.state === 'running').map((r) => `run ${r.id}`);
            note.textContent = `${n.shared} cell${n.shared === 1 ? '' : 's'} in both runs, ` +
                `${n.changed} changed (their 95% CIs are apart); change is run ${cmp.b.id} / run ${cmp.a.id} - 1.` +
                (running.length ? ` ${running.join(' and ')} still running: the numbers will move.` : '');
            box.append(scrollBox(sharedTable(cmp)),
                h('p', {class: 'hint'}, 'A change is claimed only where the two medians\' 95% intervals ' +
                    'are apart; below 6 samples an interval is [min, max] and covers less than 95%.'),
                ...[onlyList('runs-only-a', cmp.a.id, cmp.only_a), onlyList('runs-only-b', cmp.b.id, cmp.only_b)]
                    .filter(Boolean));
        } catch (e) {
            if (alive())
                note.textContent = e.message; // "runs 1 and 3 share no cell: ..." and the like
        }
    };
    return {card, load};
}
