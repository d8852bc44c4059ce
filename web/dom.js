// Small DOM and formatting helpers shared by the views; the dashboard has no framework.

// h('td', {class: 'state', 'data-agent': name}, text, child...): attributes go through
// setAttribute so that the test hooks (ids, data-*) read back exactly as written; on* keys
// take listeners; value and checked are properties because the attribute is only the default;
// style goes through the CSSOM, which the Content-Security-Policy allows (a style attribute
// it does not).
export function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false)
            continue;
        if (k.startsWith('on') && typeof v === 'function')
            el.addEventListener(k.slice(2), v);
        else if (k === 'value' || k === 'checked')
            el[k] = v;
        else if (k === 'style')
            el.style.cssText = String(v);
        else
            el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
}

function append(el, children) {
    for (const c of children) {
        if (c === undefined || c === null || c === false)
            continue;
        if (Array.isArray(c))
            append(el, c);
        else
            el.append(c instanceof Node ? c : String(c));
    }
}

// An SVG element, as h() makes an HTML one: attributes (null and undefined left out) and
// children (nodes, or text).
export function svg(tag, attrs, ...children) {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {}))
        if (v !== undefined && v !== null)
            el.setAttribute(k, String(v));
    for (const c of children)
        if (c !== null && c !== undefined)
            el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return el;
}

export function clear(el) {
    while (el.firstChild)
        el.firstChild.remove();
    return el;
}

export function hostLink(name) { return h('a', {href: '#/hosts/' + encodeURIComponent(name), class: 'host-link'}, name); }

// A table row's label as links: a host, or a pair "client->server" as its two hosts.
export function rowLink(label) {
    const s = String(label ?? '');
    const i = s.indexOf('->');
    return i < 0 ? hostLink(s) : [hostLink(s.slice(0, i)), '->', hostLink(s.slice(i + 2))];
}

// A table inside a box that scrolls sideways, so a wide matrix never widens the page.
export function scrollBox(table) {
    return h('div', {class: 'table-wrap'}, table);
}


// Numbers as the exports print them: four significant digits, no exponent for the usual
// ranges (a throughput of 1.2e4 MB/s reads better as 12000).
export function fmtNum(v) {
    if (v === null || v === undefined || v === '')
        return '';
    const x = Number(v);
    if (!Number.isFinite(x))
        return '-';
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e9))
        return x.toPrecision(4);
    return String(Number(x.toPrecision(4)));
}

export function fmtValue(v, unit) {
    const s = fmtNum(v);
    if (!s || !unit)
        return s;
    return unit === 'x' ? s + 'x' : s + ' ' + unit;
}

export function fmtPercent(rel) {
    const x = Number(rel);
    if (!Number.isFinite(x))
        return '-';
    return (x > 0 ? '+' : '') + (x * 100).toFixed(0) + '%';
}

export function fmtGiB(bytes) {
    const x = Number(bytes);
    return Number.isFinite(x) && x > 0 ? (x / 2 ** 30).toFixed(1) : '';
}

// A time with its zone, as the browser's clock reads it: "2026-12-02 14:31 UTC+1" (UTC itself
// as "UTC", a zone off the hour as "UTC+5:30"), so that a time read off the page says where.
export function fmtDate(ms) {
    const x = Number(ms);
    if (!Number.isFinite(x) || x <= 0)
        return '';
    const d = new Date(x);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
        `${p(d.getHours())}:${p(d.getMinutes())} ${zoneText(d)}`;
}

// "UTC", "UTC+1", "UTC-3:30": the zone of d from its offset (getTimezoneOffset is UTC - local).
export function zoneText(d) {
    const off = -d.getTimezoneOffset();
    if (!off)
        return 'UTC';
    const a = Math.abs(off);
    return `UTC${off > 0 ? '+' : '-'}${Math.floor(a / 60)}` +
        (a % 60 ? `:${String(a % 60).padStart(2, '0')}` : '');
}

export function fmtAgo(ms, now = Date.now()) {
    const x = Number(ms);
    if (!Number.isFinite(x) || x <= 0)
        return 'never';
    const s = Math.max(0, Math.round((now - x) / 1000));
    if (s < 60)
        return `${s} s ago`;
    if (s < 3600)
        return `${Math.floor(s / 60)} min ago`;
    if (s < 86400)
        return `${Math.floor(s / 3600)} h ago`;
    return fmtDate(x);
}

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

function anomalyWhy(a) {
    const diffs = Array.isArray(a.differences) ? a.differences : [];
    const changes = Array.isArray(a.changes) ? a.changes : [];
    if (!diffs.length && !changes.length)
        return null;
    return h('div', {class: 'why'},
        diffs.length ? h('p', {class: 'why-head'}, 'differs from the fleet in:') : null,
        diffs.length ? h('ul', {class: 'differences'}, diffs.map(differenceItem)) : null,
        changes.length ? h('p', {class: 'why-head'}, 'changed on this host since the baseline:') : null,
        changes.length ? h('ul', {class: 'changes'}, changes.map(changeItem)) : null);
}

// The change, as sm_anomaly_text writes it: within 2x either way the percentage the floor was
// tested on ("+73%"), beyond it a factor that says the direction ("315x slower"); a bound at the
// time limit ("> 3.0x slower"). Returns [text, whether it is a factor].
export function changeText(a) {
    const rel = Number(a.rel);
    if (a.rel === null || a.rel === undefined || !Number.isFinite(rel))
        return ['-', false];
    let q = Number(a.value) / Number(a.reference);
    if (!Number.isFinite(q) || q <= 0)
        q = 1 + rel;
    if (q >= 2 || (q > 0 && q <= 0.5)) {
        const f = q >= 1 ? q : 1 / q;
        return [`${a.at_limit ? '> ' : ''}${f.toFixed(f < 9.95 ? 1 : 0)}x ${a.direction}`, true];
    }
    return [`${!a.at_limit ? '' : rel > 0 ? '> ' : '< '}${fmtPercent(rel)}`, false];
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

export function anomalyItem(a) {
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
        anomalyWhy(a));
}
