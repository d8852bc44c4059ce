// components/verdict.js's words (the pure part: no DOM is built here).

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {verdictWord, notJudgedCount, needsBanner, noAnomaliesText, withDisturbed, disturbedReason,
    isDisturbed, hostVerdict, runCounts, regressionsText, CELL_VERDICTS}
    from '../../../web/components/verdict.js';

test('verdictWord capitalises the known verdicts and passes others through', () => {
    assert.equal(verdictWord('ok'), 'OK');
    assert.equal(verdictWord('flagged'), 'Flagged');
    assert.equal(verdictWord('inconclusive'), 'Inconclusive');
    assert.equal(verdictWord('failed'), 'Failed');
    assert.equal(verdictWord('none'), 'Nothing measured');
    assert.equal(verdictWord('odd'), 'odd');
    assert.equal(verdictWord(undefined), undefined);
});

test('notJudgedCount adds the inconclusive and failed cells, as numbers', () => {
    assert.equal(notJudgedCount({cells: {inconclusive: 2, failed: '1', judged: 9}}), 3);
    assert.equal(notJudgedCount({cells: {inconclusive: 'x'}}), 0);
    assert.equal(notJudgedCount({}), 0);
    assert.equal(notJudgedCount(null), 0);
});

test('needsBanner for an inconclusive or failed run, or a flagged one with cells not judged', () => {
    assert.equal(needsBanner({verdict: 'inconclusive'}), true);
    assert.equal(needsBanner({verdict: 'failed'}), true);
    assert.equal(needsBanner({verdict: 'flagged', cells: {inconclusive: 1}}), true);
    assert.equal(needsBanner({verdict: 'flagged', cells: {inconclusive: 0}}), false);
    assert.equal(needsBanner({verdict: 'ok', cells: {inconclusive: 3}}), false);
    assert.equal(needsBanner(null), false);
});

test('noAnomaliesText says "None" only of a run whose every cell was judged', () => {
    assert.equal(noAnomaliesText({verdict: 'ok'}, false), 'None.');
    assert.equal(noAnomaliesText({verdict: 'ok'}, true), 'None so far.');
    assert.equal(noAnomaliesText({verdict: 'none'}, false), 'Nothing judged.');
    assert.equal(noAnomaliesText(null, true), 'Nothing judged yet.');
    const an = {verdict: 'inconclusive', summary: '0 anomalies among 1 judged cell; 17 cells inconclusive'};
    assert.equal(noAnomaliesText(an, false),
        'Inconclusive: 0 anomalies among 1 judged cell; 17 cells inconclusive.');
    assert.equal(noAnomaliesText(an, true),
        'Inconclusive so far: 0 anomalies among 1 judged cell; 17 cells inconclusive.');
});

test('withDisturbed reads ?disturbed=include and nothing else', () => {
    assert.equal(withDisturbed(new URLSearchParams('disturbed=include')), true);
    assert.equal(withDisturbed(new URLSearchParams('disturbed=exclude')), false);
    assert.equal(withDisturbed(new URLSearchParams('')), false);
    assert.equal(withDisturbed(null), false);
});

test('disturbedReason finds the agent\'s reason on the job or either side of a pair', () => {
    assert.equal(disturbedReason({result: {host: {disturbed: true, disturbed_reason: 'load 9'}}}),
        'load 9');
    assert.equal(disturbedReason({sides: {server: {result: {host: {disturbed: true}}}}}),
        'no reason given');
    assert.equal(disturbedReason({result: {host: {disturbed: false, disturbed_reason: 'x'}}}), '');
    assert.equal(disturbedReason({}), '');
    assert.equal(isDisturbed({sides: {client: {result: {host: {disturbed: 1}}}}}), true);
    assert.equal(isDisturbed({}), false);
});

test('hostVerdict: flagged names its tests, else the worst of failed, inconclusive, ok', () => {
    const grid = {cells: [
        {host: 'h1', test: 'b', verdict: 'flagged'}, {host: 'h1', test: 'a', verdict: 'flagged'},
        {host: 'h1', test: 'c', verdict: 'failed'},
        {host: 'h2', test: 'a', verdict: 'ok'}, {host: 'h2', test: 'b', verdict: 'inconclusive'},
        {host: 'h3', test: 'a', verdict: 'no data'},
        {host: 'h4', test: 'a', verdict: 'ok'}, {host: 'h4', test: 'b', verdict: 'failed'},
    ]};
    assert.deepEqual(hostVerdict(grid, 'h1'), {verdict: 'flagged', tests: ['a', 'b']});
    assert.deepEqual(hostVerdict(grid, 'h2'), {verdict: 'inconclusive', tests: []});
    assert.deepEqual(hostVerdict(grid, 'h3'), {verdict: 'no data', tests: []});
    assert.deepEqual(hostVerdict(grid, 'h4'), {verdict: 'failed', tests: []});
    assert.deepEqual(hostVerdict(grid, 'nobody'), {verdict: 'no data', tests: []});
    assert.deepEqual(hostVerdict(null, 'h1'), {verdict: 'no data', tests: []});
    assert.equal(CELL_VERDICTS['no data'].text, 'no data');
});

test('runCounts counts flags but the fleet\'s own moves, and the inconclusive cells', () => {
    assert.deepEqual(runCounts({verdict: 'flagged', cells: {inconclusive: '2'},
        anomalies: [{kind: 'fleet'}, {kind: 'fleet-move'}, {kind: 'regression'}]}),
    {flags: 2, inconclusive: 2, verdict: 'flagged'});
    assert.deepEqual(runCounts({}), {flags: 0, inconclusive: 0, verdict: ''});
    assert.equal(runCounts(null), null);
});

test('regressionsText puts the verdict first when cells were not judged', () => {
    const base = {baseline: {id: 7}, verdict: 'ok', cells: {}};
    const tail = ' (cells whose 95% intervals no longer overlap and that moved past the floor, ' +
        'beyond the fleet\'s own move)';
    assert.equal(regressionsText('9', base, [], []),
        `No regressions of run 9 against run 7${tail}.`);
    assert.equal(regressionsText('9', base, [{}], [{}, {}]),
        `1 regression of run 9 against run 7${tail}; the whole fleet moved on 2 tests.`);
    const unjudged = {...base, verdict: 'inconclusive', summary: 'S', cells: {inconclusive: 1}};
    assert.equal(regressionsText('9', unjudged, [], [{}]),
        `Inconclusive: S. Among the judged cells, no regressions of run 9 against run 7${tail}` +
        '; the whole fleet moved on 1 test.');
    assert.equal(regressionsText('9', {verdict: 'ok'}, [], []),
        'Run 9 has no baseline: no earlier run of its name ended done with a cell in common. Pick one.');
});
