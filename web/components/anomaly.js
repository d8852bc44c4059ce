// An anomaly as one line of a list, with its evidence and what sets the host apart: the
// run, compare and history views list them.

import {h, rowLink} from '../dom.js';
import {fmtValue, changeText} from '../format.js';
import {explainButton} from './experiment.js';

// The one-line account of an anomaly, the same evidence as the CLI's sm_anomaly_text: value,
// what it was compared with, relative difference, z, direction, rule. Built of spans so the
// numbers can be styled and found.
const REFERENCE_WORD = {
    'fleet': 'fleet median',
    'slow-host': 'overall',
    'slow-link': 'expected',
    'regression': 'baseline',
    'fleet-move': 'baseline',
};

// A host whose jobs ran into their time limit has a bound, not a value: "> 60 s" (only a
// time has a bound: the limit itself), or "> limit" where the limit gives none (a throughput).
function anomalyValue(a) {
    if (!a.at_limit)
        return fmtValue(a.value, a.unit);
    if (a.value === null || a.value === undefined)
        return '> limit';
    return `> ${fmtValue(a.value, a.unit)}`;
}

// What sets the flagged host apart (the anomaly's "differences": its fingerprint against the
// fleet's majority, most relevant first) or what changed on it since the baseline (a
// regression's "changes"), one line each, as the CLI's anomalies list them.
function differenceItem(d) {
    const fleet = d.fleet_value === null || d.fleet_value === undefined
        ? `no majority of ${d.fleet_hosts} hosts`
        : `${d.fleet_value}, ${d.hosts_with_fleet_value} of ${d.fleet_hosts} hosts`;
    return h('li', {'data-item': d.item},
        h('span', {class: 'item', title: d.item}, d.label || d.item), ' ',
        h('span', {class: 'host-value'}, d.host_value), ' ',
        h('span', {class: 'fleet-value'}, `(fleet: ${fleet})`));
}

function changeItem(c) {
    return h('li', {'data-item': c.item},
        h('span', {class: 'item', title: c.item}, c.label || c.item), ' now ',
        h('span', {class: 'host-value'}, c.after), ' ',
        h('span', {class: 'fleet-value'}, `(was ${c.before})`));
}

// What an experiment on the anomaly found ("experiment": its run and headline): a proven cause
// heads the why, and the suspects stay listed under it. The host page shows it under the
// flagged test's row.
export function experimentLine(a) {
    const x = a.experiment;
    if (!x || !x.run)
        return null;
    return h('p', {class: a.cause ? 'proven-cause' : 'tested', 'data-experiment': x.run},
        h('strong', {}, a.cause ? 'Proven: ' : 'Tested: '), x.summary || '', ' (',
        h('a', {href: `#/run/${encodeURIComponent(x.run)}`}, `experiment run ${x.run}`), ')');
}

function anomalyWhy(a) {
    const diffs = Array.isArray(a.differences) ? a.differences : [];
    const changes = Array.isArray(a.changes) ? a.changes : [];
    if (!diffs.length && !changes.length && !a.experiment)
        return null;
    return h('div', {class: 'why'},
        experimentLine(a),
        diffs.length ? h('p', {class: 'why-head'}, 'differs from the fleet in:') : null,
        diffs.length ? h('ul', {class: 'differences'}, diffs.map(differenceItem)) : null,
        changes.length ? h('p', {class: 'why-head'}, 'changed on this host since the baseline:') : null,
        changes.length ? h('ul', {class: 'changes'}, changes.map(changeItem)) : null);
}

// z with the digits that show it passed its rule's cut ("|z| > 3.5": 3.503, not 3.5).
function zText(a) {
    if (a.z === null || a.z === undefined || !Number.isFinite(Number(a.z)))
        return '-';
    const m = /\|z\| > ([0-9.]+)/.exec(a.rule || '');
    const cut = m ? Number(m[1]) : NaN;
    let s = '';
    for (let d = 1; d <= 3; d++) {
        s = Number(a.z).toFixed(d);
        if (!(Math.abs(Number(s)) <= cut))
            break;
    }
    return s;
}

// run: the run the anomaly is of, where the page offers "Find the cause" (the run page).
export function anomalyItem(a, run) {
    // A host's name opens its page (a pair's two hosts each theirs); a move of the whole fleet
    // names no host.
    const name = a.kind === 'fleet-move' ? a.host : rowLink(a.host);
    const [change, factor] = changeText(a);
    // The metric as the table heads its column: a ratio is a ratio, else its unit.
    const heading = a.ratio ? 'ratio' : a.unit || a.metric;
    return h('li', {'data-host': a.host, 'data-kind': a.kind, class: 'anomaly'},
        h('span', {class: 'kind'}, a.kind), ' ',
        h('strong', {class: 'host'}, name, a.role ? ` (${a.role})` : ''), ': ',
        h('span', {class: 'test'}, `${a.test} (${heading})`), ' ',
        h('span', {class: 'value', title: a.at_limit ? 'time limit' : 'value'}, anomalyValue(a)),
        ' vs ', REFERENCE_WORD[a.kind] || 'reference', ' ',
        h('span', {class: 'reference', title: 'reference'}, fmtValue(a.reference, a.unit)),
        ', ', h('span', {class: 'rel'}, change),
        ', z ', h('span', {class: 'z'}, zText(a)),
        factor ? null : ', ', factor ? null : h('span', {class: 'direction'}, a.direction),
        ' ', h('span', {class: 'rule'}, `[${a.rule}]`),
        anomalyWhy(a), explainButton(run, a));
}
