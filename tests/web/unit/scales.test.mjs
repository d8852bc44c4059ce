// scales.js: the charts' colours and axes.

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {PALETTE, NEUTRAL, deviationColour, wantsLog, valueAxis, niceStep, tickText, timeAxis,
    utcSeconds} from '../../../web/scales.js';

test('deviationColour is neutral within the floor and for no number', () => {
    assert.deepEqual(deviationColour(0, 0.15, 1), NEUTRAL);
    assert.deepEqual(deviationColour(0.149, 0.15, 1), NEUTRAL);
    assert.deepEqual(deviationColour(-0.149, 0.15, 1), NEUTRAL);
    assert.deepEqual(deviationColour(NaN, 0.15, 1), NEUTRAL);
    assert.deepEqual(deviationColour(Infinity, 0.15, 1), NEUTRAL);
    assert.deepEqual(NEUTRAL, {bg: 'rgb(238, 241, 244)', fg: '#000'});
});

test('deviationColour is blue above and vermillion below, deeper up to the span', () => {
    // At the floor: the palette's hue at 30%, black text on the pale cell.
    assert.deepEqual(deviationColour(0.15, 0.15, 1), {bg: 'rgb(179, 213, 232)', fg: '#000'});
    assert.deepEqual(deviationColour(-0.15, 0.15, 1), {bg: 'rgb(242, 207, 179)', fg: '#000'});
    // At the span and past it: the palette's own blue and vermillion.
    assert.deepEqual(deviationColour(1, 0.15, 1), {bg: 'rgb(0, 114, 178)', fg: '#fff'});
    assert.deepEqual(deviationColour(50, 0.15, 1), {bg: 'rgb(0, 114, 178)', fg: '#fff'});
    assert.deepEqual(deviationColour(-1e9, 0.15, 1), {bg: 'rgb(213, 94, 0)', fg: '#000'});
    assert.equal(PALETTE[0], '#0072B2');
    assert.equal(PALETTE[5], '#D55E00');
});

test('deviationColour survives a span no wider than the floor', () => {
    assert.deepEqual(deviationColour(0.2, 0.15, 0.15), {bg: 'rgb(0, 114, 178)', fg: '#fff'});
});

test('wantsLog only when the positive medians span more than 10x', () => {
    const g = (...m) => [{cells: m.map((median) => (median === null ? null : {median}))}];
    assert.equal(wantsLog(g(1, 11)), true);
    assert.equal(wantsLog(g(1, 10)), false);
    assert.equal(wantsLog(g(5)), false);
    assert.equal(wantsLog(g()), false);
    // Zero, negatives, NaN and missing cells do not count.
    assert.equal(wantsLog(g(0, -100, 5, 20)), false);
    assert.equal(wantsLog(g(NaN, null, 1, 1e6)), true);
    assert.equal(wantsLog([{cells: [{median: 1}]}, {cells: [{median: 100}]}]), true);
});

test('niceStep rounds up to 1, 2 or 5 of a power of ten', () => {
    assert.equal(niceStep(0.75), 1);
    assert.equal(niceStep(1.5), 2);
    assert.equal(niceStep(3), 5);
    assert.equal(niceStep(7), 10);
    assert.equal(niceStep(250), 500);
    assert.equal(niceStep(0.003), 0.005);
    assert.equal(niceStep(0), 1);
});

test('valueAxis is linear from zero, its ticks whole steps', () => {
    const ax = valueAxis([1, 2, 3]);
    assert.equal(ax.log, false);
    assert.deepEqual(ax.ticks, [0, 1, 2, 3]);
    assert.equal(ax.frac(0), 0);
    assert.ok(Math.abs(ax.frac(3) - 1 / 1.08) < 1e-12);
    // Only one value, or none: a span of its own size, or of 1.
    assert.deepEqual(valueAxis([]).ticks, [0, 0.5, 1]);
    assert.deepEqual(valueAxis([NaN, undefined]).ticks, [0, 0.5, 1]);
    assert.deepEqual(valueAxis([5]).ticks, [0, 2, 4]);
    // All zeros: the point sits on the axis, the one tick is 0 (the top is only 0.08).
    assert.deepEqual(valueAxis([0, 0]).ticks, [0]);
    assert.equal(valueAxis([0]).frac(0), 0);
    // Negative values reach below zero.
    assert.deepEqual(valueAxis([-5, 5]).ticks, [-5, 0, 5]);
    assert.deepEqual(valueAxis([0.1, 0.3]).ticks, [0, 0.1, 0.2, 0.3]);
});

test('valueAxis is log past 10x, a decade a tick, with room below the smallest', () => {
    const ax = valueAxis([1, 1000]);
    assert.equal(ax.log, true);
    assert.deepEqual(ax.ticks, [0.1, 1, 10, 100, 1000]);
    assert.ok(Math.abs(ax.frac(1) - 0.3) < 1e-12, 'the smallest keeps 30% below it');
    assert.ok(ax.frac(1000) < 1 && ax.frac(1000) > 0.9);
    // Zero and negatives sit on the axis' bottom, not below it.
    assert.equal(ax.frac(0), 0);
    assert.equal(ax.frac(-5), 0);
});

test('valueAxis on log labels 1-2-5 steps when fewer than three decades show', () => {
    const ax = valueAxis([10, 150]);
    assert.equal(ax.log, true);
    assert.deepEqual(ax.ticks, [5, 10, 20, 50, 100, 200]);
});

test('the time axis of a trend: whole steps around its points, at most 6 of them', () => {
    const t0 = Date.UTC(2026, 11, 2, 12, 0, 0);
    const one = timeAxis([t0]);
    assert.ok(one.min < t0 && one.max > t0, 'a lone point has room on either side');
    assert.equal(one.min % one.step, 0);
    assert.equal(one.max % one.step, 0);
    const day = timeAxis([t0, t0 + 86400e3 * 3]);
    assert.ok((day.max - day.min) / day.step <= 7);
    assert.equal(day.step, 86400e3);
});

test('a time tick gives its date, and its time as precisely as the step needs', () => {
    const t = Date.UTC(2026, 11, 2, 13, 31, 5);
    assert.equal(utcSeconds(t), '2026-12-02 13:31:05 UTC');
    assert.equal(tickText(t, 86400e3), '2026-12-02');
    assert.deepEqual(tickText(t, 3600e3), ['2026-12-02', '13:31']);
    assert.deepEqual(tickText(t, 5e3), ['2026-12-02', '13:31:05']);
});
