// Proving the cause by experiment: the "Find the cause" button of a flagged anomaly (POST
// /api/runs/ID/experiments with its host and test, then the experiment's own run page), and
// the answer an experiment's run page opens on (GET /api/runs/ID/experiment): the headline,
// then per suspect its verdict, the share of the gap its treatment closed with its 95%
// interval, and why, as `sockmatrix explain` prints them.

import {api, ApiError} from '../api.js';
import {h, clear, rowLink} from '../dom.js';
import {fmtValue} from '../format.js';

// The anomalies an experiment can test: a host against the fleet, or a host against its
// baseline, with something that sets it apart; never a pair's end nor a ratio.
export function explainable(a) {
    const diffs = Array.isArray(a.differences) ? a.differences.length : 0;
    const changes = Array.isArray(a.changes) ? a.changes.length : 0;
    return (a.kind === 'fleet' || a.kind === 'regression') && !a.role && !a.ratio &&
        !String(a.host || '').includes('->') && diffs + changes > 0;
}

function errorText(e) {
    return e instanceof ApiError ? e.message : `could not plan the experiment: ${e.message}`;
}

// The button and the line under it that says what came of it: the experiment's run opened,
// or, when nothing could be tested, each suspect and why.
export function explainButton(run, a) {
    return run && explainable(a) ? causeButton(run, a.host, a.test) : null;
}

// The same for a host's flagged test of run `run` (the host page), whatever the anomaly.
export function causeButton(run, host, test) {
    const a = {host, test};
    const button = h('button', {type: 'button', class: 'find-cause',
        title: `re-measure ${a.host} with each difference given the fleet's value, beside ` +
            'untreated controls, and say which closes the gap'}, 'Find the cause');
    const note = h('div', {class: 'find-cause-note', role: 'status', hidden: true});
    button.addEventListener('click', async () => {
        button.disabled = true;
        note.hidden = true;
        try {
            const r = await api.explain(run, {host: a.host, test: a.test});
            if (r.run) {
                location.hash = `#/run/${encodeURIComponent(r.run)}`;
                return;
            }
            clear(note).append(h('p', {}, 'Nothing could be tested:'),
                h('ul', {}, (r.plan || []).map((s) => h('li', {'data-item': s.item || ''},
                    h('span', {class: 'item'}, s.label || s.item), ': ',
                    h('span', {class: 'why'}, s.why_untested || 'no treatment')))));
        } catch (e) {
            clear(note).append(h('p', {class: 'error'}, errorText(e)));
        }
        note.hidden = false;
        button.disabled = false;
    });
    return h('div', {class: 'find-cause-box'}, button, note);
}

const VERDICT_CLASS = {
    'cause': 'verdict-flagged', 'part of it': 'verdict-flagged', 'not the cause': 'verdict-ok',
    'inconclusive': 'verdict-inconclusive', 'could not be tested': 'verdict-nodata',
};

function pct(x) {
    return x === null || x === undefined || !Number.isFinite(Number(x)) ? '-'
        : `${Math.round(Number(x) * 100)}%`;
}

function suspectRow(s, unit) {
    const treated = s.share === null || s.share === undefined;
    return h('tr', {'data-item': s.item || '', 'data-verdict': s.verdict},
        h('td', {class: `verdict ${VERDICT_CLASS[s.verdict] || ''}`}, s.verdict),
        h('th', {scope: 'row', title: s.treatment || null}, s.label || s.item,
            s.host_value !== undefined ? h('span', {class: 'hint'},
                ` ${s.host_value} \u2192 ${s.fleet_value}`) : null),
        h('td', {class: 'num share'}, treated ? '-' : `${pct(s.share)} [${pct(s.lo)}, ${pct(s.hi)}]`),
        h('td', {class: 'num'}, fmtValue(s.control_median, unit)),
        h('td', {class: 'num'}, fmtValue(s.treated_median, unit)),
        h('td', {class: 'why'}, s.why || ''));
}

const REVERSE_CLASS = {
    'confirms': 'verdict-flagged', 'confirms in part': 'verdict-flagged',
    'does not confirm': 'verdict-ok', 'inconclusive': 'verdict-inconclusive',
};

// The row under a suspect for its reverse: the odd host's value given to a fleet host, and the
// share of the gap that opened there.
function reverseRow(s, host, unit) {
    const r = s.reverse;
    const opened = r.share === null || r.share === undefined ? '-'
        : `${pct(r.share)} [${pct(r.lo)}, ${pct(r.hi)}] opened`;
    return h('tr', {class: 'reverse', 'data-item': s.item || '', 'data-verdict': r.verdict},
        h('td', {class: `verdict ${REVERSE_CLASS[r.verdict] || ''}`}, r.verdict),
        h('th', {scope: 'row', title: r.treatment}, `reverse on ${r.host}`,
            h('span', {class: 'hint'}, ` ${host}'s ${s.label}: ${s.host_value}`)),
        h('td', {class: 'num share'}, opened),
        h('td', {class: 'num'}, fmtValue(r.control_median, unit)),
        h('td', {class: 'num'}, fmtValue(r.treated_median, unit)),
        h('td', {class: 'why'}, r.why || ''));
}

function suspectRows(s, host, unit) {
    return s.reverse ? [suspectRow(s, unit), reverseRow(s, host, unit)] : [suspectRow(s, unit)];
}

// The section an experiment's run page shows its answer in; hidden until there is one.
export function experimentPanel() {
    return h('section', {id: 'run-experiment', class: 'card experiment', hidden: true});
}

export function showExperiment(el, xp) {
    el.hidden = false;
    el.dataset.state = xp.state;
    const unit = xp.unit || '';
    const ended = xp.state === 'done' || xp.state === 'failed' || xp.state === 'cancelled';
    clear(el).append(
        h('h2', {}, 'Experiment: why ', rowLink(xp.host), ' stands apart'),
        h('p', {class: 'hint'}, `${xp.test}, from `,
            h('a', {href: `#/run/${encodeURIComponent(xp.explains)}`}, `run ${xp.explains}`),
            `: each suspect given the fleet's value on ${xp.host}, beside untreated controls`),
        h('p', {id: 'run-experiment-summary', class: 'headline'},
            ended ? xp.summary : `So far: ${xp.summary}`),
        h('table', {id: 'run-experiment-table', class: 'data'},
            h('thead', {}, h('tr', {},
                h('th', {scope: 'col'}, 'verdict'), h('th', {scope: 'col'}, 'suspect'),
                h('th', {scope: 'col', class: 'num'}, 'gap closed [95% CI]'),
                h('th', {scope: 'col', class: 'num'}, 'control'),
                h('th', {scope: 'col', class: 'num'}, 'treated'),
                h('th', {scope: 'col'}, 'why'))),
            h('tbody', {}, (xp.suspects || []).flatMap((s) => suspectRows(s, xp.host, unit)))),
        h('p', {class: 'hint'}, `${(xp.control || {}).n ?? 0} control samples` +
            ((xp.control || {}).disturbed ? ` (${xp.control.disturbed} disturbed, left out)` : '') +
            `; the gap is the control against the fleet's median in run ${xp.explains}`));
}
