// The scales of the charts: colours (the palette, the heatmap's deviation colours), the value
// axis of a dot plot (log or linear, its ticks) and the time axis of a trend. Pure: no DOM,
// tested by tests/web/unit.

// Okabe and Ito's palette: told apart with every common colour-vision deficiency.
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00',
    '#F0E442', '#000000'];

// WCAG relative luminance of an sRGB colour.
function luminance(rgb) {
    const [r, g, b] = rgb.map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

// The pair heatmap's neutral cell: a deviation the analysis would never flag.
export const NEUTRAL = {bg: 'rgb(238, 241, 244)', fg: '#000'};

// A relative deviation from the fleet's median -> {bg, fg}. Within floor (the analysis' flag
// floor) neutral; past it the palette's blue above and vermillion below, told apart with every
// common colour-vision deficiency, deeper up to span. The text is black or white, whichever
// contrasts more with the cell (WCAG's ratio).
export function deviationColour(dev, floor, span) {
    if (!Number.isFinite(dev) || Math.abs(dev) < floor)
        return NEUTRAL;
    const k = Math.min(1, (Math.abs(dev) - floor) / Math.max(span - floor, 1e-9));
    const hue = dev > 0 ? [0, 114, 178] : [213, 94, 0];
    const c = hue.map((v) => Math.round(255 + (v - 255) * (0.3 + 0.7 * k)));
    const L = luminance(c);
    const onWhite = 1.05 / (L + 0.05), onBlack = (L + 0.05) / 0.05;
    return {bg: `rgb(${c[0]}, ${c[1]}, ${c[2]})`, fg: onBlack >= onWhite ? '#000' : '#fff'};
}

// Whether bars of these cells are better read on a log axis: the positive medians span more
// than 10x, so that the small ones would be invisible beside the large ones.
export function wantsLog(groups) {
    const v = groups.flatMap((g) => g.cells.map((c) => (c ? c.median : NaN)))
        .filter((x) => Number.isFinite(x) && x > 0);
    return v.length > 1 && Math.max(...v) / Math.min(...v) > 10;
}

// The value axis of one plot. Log when the positive figures span more than 10x; then the
// smallest figure keeps HEADROOM of the height below it (never a sliver on the axis) and every
// decade (or 1-2-5 step, when fewer than two decades show) is labelled. Linear from zero.
const HEADROOM = 0.3, TOPROOM = 0.08;
export function valueAxis(values) {
    const pos = values.filter((v) => Number.isFinite(v) && v > 0);
    const all = values.filter(Number.isFinite);
    const log = pos.length > 1 && Math.max(...pos) / Math.min(...pos) > 10;
    if (log) {
        const a = Math.log10(Math.min(...pos)), b = Math.log10(Math.max(...pos));
        const total = Math.max(b - a, 0.3) / (1 - HEADROOM - TOPROOM);
        const lo = a - HEADROOM * total, hi = b + TOPROOM * total;
        let ticks = [];
        for (let k = Math.ceil(lo); k <= Math.floor(hi); k++)
            ticks.push(10 ** k);
        if (ticks.length < 3) {
            ticks = [];
            for (let k = Math.floor(lo); k <= Math.ceil(hi); k++)
                for (const m of [1, 2, 5])
                    if (Math.log10(m * 10 ** k) >= lo && Math.log10(m * 10 ** k) <= hi)
                        ticks.push(m * 10 ** k);
        }
        return {log, ticks, frac: (v) => (Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)};
    }
    const top = all.length ? Math.max(...all, 0) : 1;
    const bottom = all.length ? Math.min(...all, 0) : 0;
    const span = top - bottom || Math.abs(top) || 1;
    const hi = top + span * TOPROOM;
    const step = niceStep(span / 4);
    const ticks = [];
    for (let v = Math.ceil(bottom / step) * step; v <= hi; v += step)
        ticks.push(Number(v.toPrecision(12)));
    return {log, ticks, frac: (v) => (v - bottom) / (hi - bottom)};
}

export function niceStep(raw) {
    const p = 10 ** Math.floor(Math.log10(raw || 1));
    const m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

// A time in UTC to the second, whatever it is (the trend's points all have one).
export function utcSeconds(ms) {
    return new Date(Number(ms)).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

// A tick's text: always its date, and under it the time as precisely as the ticks' step needs
// (none for steps of days).
export function tickText(ms, step) {
    const t = utcSeconds(ms);
    if (step >= 86400e3)
        return t.slice(0, 10);
    return [t.slice(0, 10), step >= 60e3 ? t.slice(11, 16) : t.slice(11, 19)];
}

// Steps of the time axis a reader counts in: seconds to weeks.
const STEPS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600,
    86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 365 * 86400].map((s) => s * 1e3);

// The time axis: a margin on each side so that the first and last points are whole (an hour
// around a trend of one point; runs seconds apart stay apart), ticks at whole steps (UTC) with
// at most 6 of them, the bounds on ticks.
export function timeAxis(times) {
    const lo = Math.min(...times), hi = Math.max(...times);
    const pad = hi > lo ? Math.max((hi - lo) * 0.05, 1e3) : 1800e3;
    const range = hi - lo + 2 * pad;
    const step = STEPS.find((s) => range / s <= 6) || STEPS[STEPS.length - 1];
    return {min: Math.floor((lo - pad) / step) * step, max: Math.ceil((hi + pad) / step) * step, step};
}
