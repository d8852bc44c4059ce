// The pure parts of a run's page: the time left, a cell's samples, the table's lookups.

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {fmtDuration, etaText, firstStart} from '../../../web/components/run_live.js';
import {cellHref, stripRange, sampleNote, cellFigures} from '../../../web/components/cell_samples.js';
import {jobKey} from '../../../web/components/run_jobs.js';
import {indexCells, splitPair, rowAnomalies, unitText} from '../../../web/components/results.js';

test('fmtDuration: seconds below 90 s, minutes below 90 min, then hours and minutes', () => {
    assert.equal(fmtDuration(0), '0 s');
    assert.equal(fmtDuration(-5000), '0 s');
    assert.equal(fmtDuration(44_600), '45 s');
    assert.equal(fmtDuration(89_000), '89 s');
    assert.equal(fmtDuration(90_000), '2 min');
    assert.equal(fmtDuration(12 * 60e3), '12 min');
    assert.equal(fmtDuration(89 * 60e3), '89 min');
    assert.equal(fmtDuration(125 * 60e3), '2 h 5 min');
    assert.equal(fmtDuration(48 * 3600e3), '48 h 0 min');
});

test('etaText: the jobs left at the pace of those finished since the first started', () => {
    const run = {progress: {done: 3, failed: 1, total: 10}, created_ms: 1000};
    assert.equal(etaText(run, 1000 + 40_000, 1000),
        'about 60 s left (an estimate from the pace of the 4 jobs finished so far)');
    assert.equal(etaText({progress: {done: 1, total: 2}}, 31_000, 1000),
        'about 30 s left (an estimate from the pace of the 1 job finished so far)');
    // Without the first job's start, the run's creation.
    assert.equal(etaText(run, 1000 + 4_000, 0),
        'about 6 s left (an estimate from the pace of the 4 jobs finished so far)');
});

test('etaText says nothing before a job finished, after all did, or without a start', () => {
    assert.equal(etaText({progress: {done: 0, total: 5}, created_ms: 1}, 10_000, 1), '');
    assert.equal(etaText({progress: {done: 5, total: 5}, created_ms: 1}, 10_000, 1), '');
    assert.equal(etaText({progress: {done: 1, total: 5}}, 10_000, 0), '');
    assert.equal(etaText({progress: {done: 1, total: 5}}, 10_000, 20_000), '');
    assert.equal(etaText({}, 10_000, 1), '');
});

test('firstStart is the earliest start of the jobs that started, 0 of none', () => {
    assert.equal(firstStart([{started_ms: 50}, {started_ms: 20}, {started_ms: 0}, {}]), 20);
    assert.equal(firstStart([{started_ms: null}]), 0);
    assert.equal(firstStart([]), 0);
});

test('cellHref links a cell\'s samples, its parts encoded', () => {
    assert.equal(cellHref(12, 3), '#/run/12/cell/3');
    assert.equal(cellHref('a b', '0'), '#/run/a%20b/cell/0');
});

test('stripRange spans the values, median and CI, and widens one number into a range', () => {
    assert.deepEqual(stripRange({values: [{value: 3}, {value: 9}, {value: NaN}], median: 5,
        ci95_low: 2, ci95_high: 10}), {lo: 2, hi: 10});
    assert.deepEqual(stripRange({values: [{value: 5}, {value: 5}]}), {lo: 4.5, hi: 5.5});
    assert.deepEqual(stripRange({values: [{value: -20}]}), {lo: -22, hi: -18});
    assert.deepEqual(stripRange({values: [{value: 0}]}), {lo: -1, hi: 1});
});

test('sampleNote says which values the table leaves out and why', () => {
    assert.equal(sampleNote({counted: true}), '');
    assert.equal(sampleNote({counted: true, disturbed: true, disturbed_reason: 'load 9'}),
        ' (disturbed, counted: load 9)');
    assert.equal(sampleNote({counted: false, warmup: true, disturbed: true}), ' (not counted)');
    assert.equal(sampleNote({counted: false, disturbed: true}), ' (disturbed, not counted)');
    assert.equal(sampleNote({counted: false, disturbed: true, disturbed_reason: 'steal'}),
        ' (disturbed, not counted: steal)');
    assert.equal(sampleNote({counted: false}), ' (not counted)');
});

test('cellFigures gives the median and CI in the table\'s notation, or why there is none', () => {
    assert.equal(cellFigures({median: 1234.5, unit: 'MB/s', ci95_low: 1200, ci95_high: 1300.25, n: 5}),
        'median 1235 MB/s [1200, 1300] n=5');
    assert.equal(cellFigures({median: NaN, n: 0}),
        'no median: the table counts none of these values');
    assert.equal(cellFigures({median: null, n: 3}), 'no median yet');
});

test('jobKey changes with what a job\'s line shows, not with the rest', () => {
    const j = {id: 1, state: 'done', attempt: 1, reason: '', finished_ms: 5, headline: {value: 1}};
    assert.equal(jobKey(j), jobKey({...j, result: {big: true}}));
    assert.notEqual(jobKey(j), jobKey({...j, state: 'failed'}));
    assert.notEqual(jobKey(j), jobKey({...j, headline: {value: 2}}));
});

test('indexCells looks cells up by row and column, numbers from strings, nulls as NaN', () => {
    const cell = indexCells([{row: '0', column: 1, n: '5', median: '2.5', ci95_low: null,
        ci95_high: 3, cv: null, failed: undefined, disturbed: '2'}]);
    const c = cell(0, 1);
    assert.equal(c.n, 5);
    assert.equal(c.median, 2.5);
    assert.ok(Number.isNaN(c.ci95_low));
    assert.equal(c.ci95_high, 3);
    assert.ok(Number.isNaN(c.cv));
    assert.equal(c.failed, 0);
    assert.equal(c.disturbed, 2);
    assert.equal(cell(1, 0), null);
    assert.equal(indexCells(null)(0, 0), null);
});

test('splitPair and rowAnomalies read a pair row as its two hosts', () => {
    assert.deepEqual(splitPair('h1->h2'), ['h1', 'h2']);
    assert.equal(splitPair('h1'), null);
    const slowServer = {kind: 'slow-host', host: 'h2', role: 'server'};
    const slowClient = {kind: 'slow-host', host: 'h2', role: 'client'};
    const own = {kind: 'fleet', host: 'h1->h2'};
    assert.deepEqual(rowAnomalies('h1->h2', [slowServer, slowClient, own]), [slowServer, own]);
    assert.deepEqual(rowAnomalies('h2->h3', [slowServer, slowClient]), [slowClient]);
    // A host's own row carries every anomaly of that host.
    assert.deepEqual(rowAnomalies('h2', [slowServer, own, {kind: 'fleet', host: 'h2'}]),
        [slowServer, {kind: 'fleet', host: 'h2'}]);
    assert.equal(unitText('x'), 'ratio');
    assert.equal(unitText('MB/s'), 'MB/s');
});
