// Charts and colour scales for the comparison view: bars with 95% CI whiskers (Chart.js, loaded
// as vendor/chart.umd.js) and a viridis scale for the pair heatmap.

import {fmtNum, fmtValue} from './dom.js';

// Okabe and Ito's palette: told apart with every common colour-vision deficiency.
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00',
    '#F0E442', '#000000'];

// Viridis, sampled at ten stops: perceptually uniform, readable in grey and by colour-blind
// readers, unlike red-to-green.
const VIRIDIS = [
    [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
    [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];

// WCAG relative luminance of an sRGB colour.
function luminance(rgb) {
    const [r, g, b] = rgb.map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

// t in [0, 1] -> {bg, fg}: the text is black or white, whichever contrasts more with the
// cell (WCAG's ratio), so the value in each cell stays readable along the whole scale.
export function viridis(t) {
    const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
    const f = x - i;
    const c = VIRIDIS[i].map((v, k) => Math.round(v + (VIRIDIS[i + 1][k] - v) * f));
    const L = luminance(c);
    const onWhite = 1.05 / (L + 0.05), onBlack = (L + 0.05) / 0.05;
    return {bg: `rgb(${c[0]}, ${c[1]}, ${c[2]})`, fg: onBlack >= onWhite ? '#000' : '#fff'};
}

export function viridisGradient() {
    return 'linear-gradient(to right, ' +
        VIRIDIS.map((c, i) => `rgb(${c.join(',')}) ${(i * 100 / (VIRIDIS.length - 1)).toFixed(0)}%`)
            .join(', ') + ')';
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

// groups: [{label, cells: [cell|null per row]}] with cell {median, ci95_low, ci95_high, n,
// noisy}. Returns the Chart (destroy() it when the view goes), or null when Chart.js is absent.
export function whiskerBars(canvas, {rows, groups, unit, title}) {
    const Chart = window.Chart;
    if (!Chart)
        return null;
    // Chart.js draws 12 px text whatever the page's size; follow the page's own scale instead.
    const rootPx = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    Chart.defaults.font.size = Math.round(rootPx * 0.85);
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
            borderColor: colour,
            borderWidth: 1,
        };
    });
    return new Chart(canvas, {
        type: 'bar',
        data: {labels: rows, datasets},
        plugins: [whiskers],
        options: {
            responsive: true,
            maintainAspectRatio: false,
            animation: false,
            scales: {
                x: {ticks: {color: '#222'}, grid: {display: false}},
                y: {
                    beginAtZero: true,
                    // Whiskers past the tallest bar must stay on the canvas.
                    suggestedMax: top > 0 ? top * 1.05 : undefined,
                    title: {display: true, text: unit, color: '#222'},
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
