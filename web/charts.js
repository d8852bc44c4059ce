// Charts and colour scales for the comparison view: bars with 95% CI whiskers (Chart.js, loaded
// as vendor/chart.umd.js) and the pair heatmap's scale of deviations from the median.

import {fmtNum, fmtValue} from './dom.js';

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

// Draws each bar's [low, high] as a vertical whisker with caps, after the bars. Chart.js has
// no error bars of its own, and a plugin package for them would be a second dependency for
// twenty lines.
const whiskers = {
    id: 'smWhiskers',
    afterDatasetsDraw(chart) {
        const {ctx} = chart;
        const y = chart.scales.y;
        chart.data.datasets.forEach((ds, i) => {
            if (!ds.whiskers || !chart.isDatasetVisible(i))
                return;
            chart.getDatasetMeta(i).data.forEach((bar, j) => {
                const w = ds.whiskers[j];
                if (!w || !Number.isFinite(w[0]) || !Number.isFinite(w[1]))
                    return;
                const top = y.getPixelForValue(w[1]), bottom = y.getPixelForValue(w[0]);
                const half = Math.max(3, Math.min(10, (bar.width || 12) / 4));
                ctx.save();
                ctx.strokeStyle = '#1a1a1a';
                ctx.lineWidth = 1.5;
                ctx.beginPath();
                ctx.moveTo(bar.x, top);
                ctx.lineTo(bar.x, bottom);
                ctx.moveTo(bar.x - half, top);
                ctx.lineTo(bar.x + half, top);
                ctx.moveTo(bar.x - half, bottom);
                ctx.lineTo(bar.x + half, bottom);
                ctx.stroke();
                ctx.restore();
            });
        });
    },
};

// Each bar's median, written above its whisker (or its bar), so that a bar too short to see
// beside the others still says what it is.
const valueLabels = {
    id: 'smValueLabels',
    afterDatasetsDraw(chart) {
        const {ctx} = chart;
        const y = chart.scales.y;
        ctx.save();
        ctx.fillStyle = '#111';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'bottom';
        ctx.font = `${Math.max(10, Math.round(window.Chart.defaults.font.size * 0.85))}px sans-serif`;
        chart.data.datasets.forEach((ds, i) => {
            if (!chart.isDatasetVisible(i))
                return;
            chart.getDatasetMeta(i).data.forEach((bar, j) => {
                const v = ds.data[j];
                if (!Number.isFinite(v))
                    return;
                const w = ds.whiskers && ds.whiskers[j];
                const top = w && Number.isFinite(w[1]) ? y.getPixelForValue(w[1]) : bar.y;
                ctx.fillText(fmtNum(v), bar.x, Math.max(12, Math.min(top, bar.y)) - 2);
            });
        });
        ctx.restore();
    },
};

// Whether bars of these cells are better read on a log axis: the positive medians span more
// than 10x, so that the small ones would be invisible beside the large ones.
export function wantsLog(groups) {
    const v = groups.flatMap((g) => g.cells.map((c) => (c ? c.median : NaN)))
        .filter((x) => Number.isFinite(x) && x > 0);
    return v.length > 1 && Math.max(...v) / Math.min(...v) > 10;
}

// groups: [{label, cells: [cell|null per row]}] with cell {median, ci95_low, ci95_high, n,
// noisy}. flagged: the rows (hosts) an anomaly names: their labels are marked and their bars
// outlined. log: true, false, or undefined for wantsLog. The canvas says what it drew in
// data-scale ("log" or "linear") and data-flagged (the flagged rows, comma-separated). Returns
// the Chart (destroy() it when the view goes), or null when Chart.js is absent.
export function whiskerBars(canvas, {rows, groups, unit, title, flagged = new Set(), log}) {
    const Chart = window.Chart;
    if (!Chart)
        return null;
    // Chart.js draws 12 px text whatever the page's size; follow the page's own scale instead.
    const rootPx = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    Chart.defaults.font.size = Math.round(rootPx * 0.85);
    const useLog = log === undefined ? wantsLog(groups) : !!log;
    canvas.dataset.scale = useLog ? 'log' : 'linear';
    canvas.dataset.flagged = rows.filter((r) => flagged.has(r)).join(',');
    const mark = (r) => (flagged.has(r) ? `\u26a0 ${r}` : r);
    let top = 0;
    const datasets = groups.map((g, i) => {
        const colour = PALETTE[i % PALETTE.length];
        const ws = g.cells.map((c) => c && Number.isFinite(c.ci95_low) && Number.isFinite(c.ci95_high)
            ? [c.ci95_low, c.ci95_high] : null);
        for (const w of ws)
            if (w)
                top = Math.max(top, w[1]);
        return {
            label: g.label,
            data: g.cells.map((c) => (c && Number.isFinite(c.median) ? c.median : null)),
            cells: g.cells,
            whiskers: ws,
            backgroundColor: colour + 'cc',
            // A flagged host's bars: outlined in vermillion, thick, so the outlier is the first
            // thing one sees whatever its height.
            borderColor: rows.map((r) => (flagged.has(r) ? '#D55E00' : colour)),
            borderWidth: rows.map((r) => (flagged.has(r) ? 3 : 1)),
        };
    });
    return new Chart(canvas, {
        type: 'bar',
        data: {labels: rows.map(mark), datasets},
        plugins: [whiskers, valueLabels],
        options: {
            responsive: true,
            maintainAspectRatio: false,
            animation: false,
            scales: {
                x: {
                    ticks: {
                        color: (c) => (flagged.has(rows[c.index]) ? '#B34700' : '#222'),
                        font: (c) => (flagged.has(rows[c.index]) ? {weight: 'bold'} : {}),
                    },
                    grid: {display: false},
                },
                y: {
                    type: useLog ? 'logarithmic' : 'linear',
                    beginAtZero: !useLog,
                    // Whiskers and value labels past the tallest bar must stay on the canvas.
                    suggestedMax: top > 0 ? top * (useLog ? 2 : 1.12) : undefined,
                    title: {display: true, text: unit + (useLog ? ', log scale' : ''),
                        color: '#222'},
                    ticks: {color: '#222'},
                },
            },
            plugins: {
                title: {display: !!title, text: title, color: '#111', font: {size: 14}},
                legend: {labels: {color: '#222'}},
                tooltip: {
                    callbacks: {
                        label(item) {
                            const c = item.dataset.cells[item.dataIndex];
                            if (!c)
                                return `${item.dataset.label}: no data`;
                            return `${item.dataset.label}: ${fmtValue(c.median, unit)} ` +
                                `[${fmtNum(c.ci95_low)}, ${fmtNum(c.ci95_high)}] n=${c.n}` +
                                (c.noisy ? ' (noisy)' : '');
                        },
                    },
                },
            },
        },
    });
}
