// A run's verdict as the views show it: the banner of a run whose cells were not all judged,
// the list of those cells with the analysis' reason, the words of a run without anomalies, and
// the "include disturbed samples" switch that the run, compare and trends views share.

import {h, rowLink} from '../dom.js';

// Cells listed before the rest fold into "N more".
const NOT_JUDGED_SHOWN = 10;

const WORD = {ok: 'OK', flagged: 'Flagged', inconclusive: 'Inconclusive', failed: 'Failed', none: 'Nothing measured'};

export function verdictWord(v) {
    return WORD[v] || v;
}

// How many cells the analysis could not judge (inconclusive or failed), from the anomalies'
// "cells" (GET /api/runs/ID/anomalies).
export function notJudgedCount(an) {
    const c = (an && an.cells) || {};
    return (Number(c.inconclusive) || 0) + (Number(c.failed) || 0);
}

// Whether a run's anomalies say something a reader must see before the anomalies: its verdict
// is inconclusive or failed, or it is flagged with some cells not judged.
export function needsBanner(an) {
    return !!an && (an.verdict === 'inconclusive' || an.verdict === 'failed' ||
        (an.verdict === 'flagged' && notJudgedCount(an) > 0));
}

// One line per cell not judged: host (or pair), test, why; the first ten shown, the rest
// behind a "N more" that opens.
export function notJudgedList(list, id) {
    const item = (x) => h('li', {'data-row': x.row, 'data-test': x.test,
        'data-verdict': x.verdict, 'data-ratio': x.ratio ? '1' : '0'},
    h('strong', {class: 'row'}, rowLink(x.row)), ' ',
    h('span', {class: 'test'}, x.test), x.ratio ? ' (ratio)' : '',
    x.verdict === 'failed' ? h('span', {class: 'badge verdict-word verdict-failed'}, 'failed') : null,
    ': ', h('span', {class: 'why'}, x.why || ''));
    const all = list || [];
    const ul = h('ul', {id, class: 'not-judged'}, all.slice(0, NOT_JUDGED_SHOWN).map(item));
    if (all.length <= NOT_JUDGED_SHOWN)
        return ul;
    return h('div', {}, ul, h('details', {class: 'not-judged-more'},
        h('summary', {}, `${all.length - NOT_JUDGED_SHOWN} more`),
        h('ul', {class: 'not-judged'}, all.slice(NOT_JUDGED_SHOWN).map(item))));
}

// What a view says of a run's anomalies when it lists none, from the anomalies' verdict:
// "None" only when every cell was judged; otherwise the verdict and the analysis' summary
// ("Inconclusive: 0 anomalies among 1 judged cell; 17 cells inconclusive"). A run still going
// says "so far".
export function noAnomaliesText(an, running) {
    const sofar = running ? ' so far' : '';
    if (!an || an.verdict === 'none')
        return `Nothing judged${running ? ' yet' : ''}.`;
    if (an.verdict === 'ok')
        return `None${sofar}.`;
    return `${verdictWord(an.verdict)}${sofar}: ${an.summary}.`;
}

// The views' state in the hash: "#/view/args?disturbed=include".
export function withDisturbed(query) {
    return !!query && query.get('disturbed') === 'include';
}

// The "include disturbed samples" switch: toggling it moves the hash to the same view with
// or without ?disturbed=include, which mounts the view again with the API's figures for it.
export function disturbedSwitch(id, on) {
    const box = h('input', {type: 'checkbox', id, checked: on});
    box.addEventListener('change', () => {
        const path = location.hash.replace(/\?.*$/, '');
        location.hash = box.checked ? `${path}?disturbed=include` : path;
    });
    return h('label', {class: 'pick disturbed-switch', for: id,
        title: 'Samples measured while their host was disturbed are kept but left out of the ' +
            'statistics; this puts them back in.'},
    box, ' include disturbed samples');
}

// The agent's reason a job's host was disturbed (its result's host block, or either side's
// of a pair job); '' when it was not.
export function disturbedReason(j) {
    const hosts = [j.result?.host, j.sides?.client?.result?.host, j.sides?.server?.result?.host];
    const host = hosts.find((x) => x && x.disturbed);
    return host ? host.disturbed_reason || 'no reason given' : '';
}

export function isDisturbed(j) {
    return !!disturbedReason(j);
}

// The words, marks and classes of a cell's verdict in the fleet grid (the Trends grid's), and
// of a host's latest verdict on the Fleet and host pages.
export const CELL_VERDICTS = {
    'ok': {cls: 'verdict-ok', mark: '\u2713', text: 'ok'},
    'flagged': {cls: 'verdict-flagged', mark: '\u26a0', text: 'flagged'},
    'inconclusive': {cls: 'verdict-inconclusive', mark: '?', text: 'inconclusive'},
    'failed': {cls: 'verdict-failed', mark: '\u2717', text: 'failed'},
    'no data': {cls: 'verdict-nodata', mark: '\u2013', text: 'no data'},
};

// A host's latest verdict from the grid's cells (GET /api/grid) of its row: flagged when one
// of its tests is (the tests named), else failed, inconclusive or ok as the worst of them
// says, "no data" when no ended run has it. {verdict, tests}: the flagged tests, sorted.
export function hostVerdict(grid, host) {
    const cells = ((grid && grid.cells) || []).filter((c) => c.host === host && c.verdict !== 'no data');
    const flagged = cells.filter((c) => c.verdict === 'flagged').map((c) => c.test).sort();
    const verdict = flagged.length ? 'flagged'
        : ['failed', 'inconclusive', 'ok'].find((v) => cells.some((c) => c.verdict === v)) || 'no data';
    return {verdict, tests: flagged};
}

// The badge of a host's latest verdict: its mark and word, and the flagged tests after it.
export function hostVerdictBadge(v) {
    const w = CELL_VERDICTS[v.verdict] || CELL_VERDICTS['no data'];
    return h('span', {class: 'host-verdict', 'data-verdict': v.verdict},
        h('span', {class: `badge verdict-word ${w.cls}`},
            h('span', {class: 'mark', 'aria-hidden': 'true'}, w.mark), ` ${w.text}`),
        v.tests.length ? h('span', {class: 'flagged-tests'}, ` ${v.tests.join(', ')}`) : null);
}

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

// What the regressions' answer says of run id against its baseline (an: the anomalies with a
// baseline; regs, moves: its regressions and the fleet's moves). "No regressions" of a run with
// cells not judged would claim what nobody looked at: the verdict comes first, and the count is
// of the judged cells.
export function regressionsText(id, an, regs, moves) {
    const unjudged = notJudgedCount(an);
    if (!an.baseline)
        return `Run ${id} has no baseline: no earlier run of its name ended done with a cell in common. Pick one.`;
    return (unjudged ? `${verdictWord(an.verdict)}: ${an.summary}. Among the judged cells, ` : '') +
        `${regs.length ? regs.length : unjudged ? 'no' : 'No'} regression${regs.length === 1 ? '' : 's'} of run ${id} ` +
        `against run ${an.baseline.id} (cells whose 95% intervals no longer overlap and ` +
        'that moved past the floor, beyond the fleet\'s own move)' +
        (moves.length ? `; the whole fleet moved on ${moves.length} test${moves.length === 1 ? '' : 's'}.` : '.');
}
