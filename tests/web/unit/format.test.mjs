// format.js: numbers, units, times and changes as the dashboard writes them.

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {fmtNum, fmtValue, fmtPercent, fmtGiB, fmtDate, zoneText, fmtAgo, utc, changeText, whenText,
    metricWords} from '../../../web/format.js';

test('fmtNum keeps four significant digits without an exponent in the usual range', () => {
    assert.equal(fmtNum(0), '0');
    assert.equal(fmtNum(1), '1');
    assert.equal(fmtNum(3.14159), '3.142');
    assert.equal(fmtNum(-1234.5678), '-1235');
    assert.equal(fmtNum(12345), '12350');
    assert.equal(fmtNum(123456789), '123500000');
    assert.equal(fmtNum(0.001), '0.001');
    assert.equal(fmtNum('42.5'), '42.5');
});

test('fmtNum writes an exponent below 1e-3 and from 1e9', () => {
    assert.equal(fmtNum(0.0001234), '0.0001234');
    assert.equal(fmtNum(1e9), '1.000e+9');
    assert.equal(fmtNum(-2.5e12), '-2.500e+12');
    assert.equal(fmtNum(Number.MAX_VALUE), '1.798e+308');
});

test('fmtNum says nothing of no value and "-" of one that is not a number', () => {
    assert.equal(fmtNum(null), '');
    assert.equal(fmtNum(undefined), '');
    assert.equal(fmtNum(''), '');
    assert.equal(fmtNum(NaN), '-');
    assert.equal(fmtNum(Infinity), '-');
    assert.equal(fmtNum(-Infinity), '-');
    assert.equal(fmtNum('abc'), '-');
});

test('fmtValue puts the unit after a space, a ratio\'s x without one', () => {
    assert.equal(fmtValue(1234.5, 'MB/s'), '1235 MB/s');
    assert.equal(fmtValue(315, 'x'), '315x');
    assert.equal(fmtValue(0, 'us'), '0 us');
    assert.equal(fmtValue(-3, 's'), '-3 s');
    assert.equal(fmtValue(5, ''), '5');
    assert.equal(fmtValue(5, undefined), '5');
    assert.equal(fmtValue(null, 's'), '');
    assert.equal(fmtValue(NaN, 's'), '- s');
});

test('fmtPercent signs a rise, rounds to a whole percent, and says "-" of no number', () => {
    assert.equal(fmtPercent(0.734), '+73%');
    assert.equal(fmtPercent(-0.5), '-50%');
    assert.equal(fmtPercent(0), '0%');
    assert.equal(fmtPercent(12.345), '+1235%');
    assert.equal(fmtPercent(NaN), '-');
    assert.equal(fmtPercent(null), '0%');
    assert.equal(fmtPercent(undefined), '-');
});

test('fmtGiB gives one decimal of GiB, nothing for no or a negative size', () => {
    assert.equal(fmtGiB(2 ** 31), '2.0');
    assert.equal(fmtGiB(16 * 2 ** 30 + 2 ** 29), '16.5');
    assert.equal(fmtGiB(1), '0.0');
    assert.equal(fmtGiB(0), '');
    assert.equal(fmtGiB(-1), '');
    assert.equal(fmtGiB(NaN), '');
    assert.equal(fmtGiB(null), '');
});

test('zoneText names the zone by its offset from UTC', () => {
    const at = (offsetMin) => ({getTimezoneOffset: () => offsetMin});
    assert.equal(zoneText(at(0)), 'UTC');
    assert.equal(zoneText(at(-60)), 'UTC+1');
    assert.equal(zoneText(at(-330)), 'UTC+5:30');
    assert.equal(zoneText(at(180)), 'UTC-3');
    assert.equal(zoneText(at(210)), 'UTC-3:30');
    assert.equal(zoneText(at(-765)), 'UTC+12:45');
});

test('fmtDate writes the browser\'s time with its zone, nothing for no time', () => {
    process.env.TZ = 'UTC';
    assert.equal(fmtDate(Date.UTC(2026, 11, 2, 14, 31, 59)), '2026-12-02 14:31 UTC');
    assert.equal(fmtDate(String(Date.UTC(2026, 0, 5, 3, 4))), '2026-01-05 03:04 UTC');
    process.env.TZ = 'Europe/Berlin';
    assert.equal(fmtDate(Date.UTC(2026, 11, 2, 13, 31)), '2026-12-02 14:31 UTC+1');
    assert.equal(fmtDate(Date.UTC(2026, 6, 2, 13, 31)), '2026-07-02 15:31 UTC+2');
    process.env.TZ = 'UTC';
    assert.equal(fmtDate(0), '');
    assert.equal(fmtDate(-1), '');
    assert.equal(fmtDate(NaN), '');
    assert.equal(fmtDate(null), '');
});

test('fmtAgo counts seconds, minutes and hours, then gives the date', () => {
    process.env.TZ = 'UTC';
    const now = Date.UTC(2026, 11, 2, 12, 0, 0);
    assert.equal(fmtAgo(now, now), '0 s ago');
    assert.equal(fmtAgo(now - 59_400, now), '59 s ago');
    assert.equal(fmtAgo(now - 60_000, now), '1 min ago');
    assert.equal(fmtAgo(now - 3_599_000, now), '59 min ago');
    assert.equal(fmtAgo(now - 7_200_000, now), '2 h ago');
    assert.equal(fmtAgo(now - 86_400_000, now), '2026-12-01 12:00 UTC');
    // A clock a little ahead of the browser's is "0 s ago", not a negative time.
    assert.equal(fmtAgo(now + 5000, now), '0 s ago');
    assert.equal(fmtAgo(0, now), 'never');
    assert.equal(fmtAgo(NaN, now), 'never');
    assert.equal(fmtAgo(undefined, now), 'never');
});

test('utc writes a time in UTC to the second, nothing for no time', () => {
    assert.equal(utc(Date.UTC(2026, 11, 2, 13, 31, 5, 123)), '2026-12-02 13:31:05 UTC');
    assert.equal(utc('1767225600000'), '2026-01-01 00:00:00 UTC');
    assert.equal(utc(0), '');
    assert.equal(utc(-5), '');
    assert.equal(utc(NaN), '');
    assert.equal(utc(null), '');
});

test('changeText gives a percentage within 2x and a factor with its direction beyond', () => {
    assert.deepEqual(changeText({rel: 0.73, value: 173, reference: 100, direction: 'slower'}),
        ['+73%', false]);
    assert.deepEqual(changeText({rel: -0.3, value: 70, reference: 100, direction: 'slower'}),
        ['-30%', false]);
    assert.deepEqual(changeText({rel: 314, value: 315, reference: 1, direction: 'slower'}),
        ['315x slower', true]);
    assert.deepEqual(changeText({rel: 1, value: 200, reference: 100, direction: 'faster'}),
        ['2.0x faster', true]);
    assert.deepEqual(changeText({rel: -0.6, value: 40, reference: 100, direction: 'slower'}),
        ['2.5x slower', true]);
    // 9.95x and up lose their decimal.
    assert.deepEqual(changeText({rel: 8.96, value: 9.96, reference: 1, direction: 'slower'}),
        ['10x slower', true]);
});

test('changeText marks a bound at the time limit and falls back on rel without a ratio', () => {
    assert.deepEqual(changeText({rel: 2, value: 3, reference: 1, direction: 'slower',
        at_limit: true}),
        ['> 3.0x slower', true]);
    assert.deepEqual(changeText({rel: 0.5, value: 150, reference: 100, direction: 'slower',
        at_limit: true}), ['> +50%', false]);
    assert.deepEqual(changeText({rel: -0.2, value: 80, reference: 100, at_limit: true}),
        ['< -20%', false]);
    // No reference (0 or missing): the ratio is 1 + rel.
    assert.deepEqual(changeText({rel: 4, value: 5, reference: 0, direction: 'slower'}),
        ['5.0x slower', true]);
    assert.deepEqual(changeText({rel: null, value: 1, reference: 1}), ['-', false]);
    assert.deepEqual(changeText({rel: NaN}), ['-', false]);
    assert.deepEqual(changeText({}), ['-', false]);
});

test('whenText says an interval in the largest unit it is a whole of, or the cron line', () => {
    assert.equal(whenText({cron: '0 3 * * *', every_s: 60}), 'cron 0 3 * * *');
    assert.equal(whenText({every_s: 86400}), 'every 1 d');
    assert.equal(whenText({every_s: 172800}), 'every 2 d');
    assert.equal(whenText({every_s: 7200}), 'every 2 h');
    assert.equal(whenText({every_s: 900}), 'every 15 min');
    assert.equal(whenText({every_s: 90}), 'every 90 s');
    assert.equal(whenText({every_s: 3660}), 'every 61 min');
    assert.equal(whenText({every_s: 10}), 'every 10 s');
    assert.equal(whenText({every_s: '3600'}), 'every 1 h');
});

test('metricWords says a metric in words, an unknown one with its underscores as spaces', () => {
    assert.equal(metricWords('throughput_MBps'), 'throughput');
    assert.equal(metricWords('rtt_p50_us'), 'round trip, median');
    assert.equal(metricWords('new_metric_x'), 'new metric x');
    assert.equal(metricWords(undefined), '');
    assert.equal(metricWords(''), '');
});
