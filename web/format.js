// Numbers, units, times and changes as the dashboard writes them: pure functions of their
// arguments (the clock and zone of fmtDate, fmtAgo and zoneText aside), tested by tests/web/unit.

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

// A time in UTC to the second, "2026-12-02 13:31:05 UTC" ("" for none): schedules fire in UTC.
export function utc(ms) {
    const x = Number(ms);
    if (!Number.isFinite(x) || x <= 0)
        return '';
    return new Date(x).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
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

// "every 15 min", "every 1 d", "cron 0 3 * * *": the largest unit the interval is a whole of.
export function whenText(s) {
    if (s.cron)
        return `cron ${s.cron}`;
    const n = Number(s.every_s);
    for (const [unit, k] of [['d', 86400], ['h', 3600], ['min', 60]])
        if (n >= k && n % k === 0)
            return `every ${n / k} ${unit}`;
    return `every ${n} s`;
}

// The metrics a trend can follow, in words; the unit beside them says the rest.
const METRIC_WORDS = {
    throughput_MBps: 'throughput', seconds: 'time taken', msgs_per_s: 'messages per second',
    rtt_p50_us: 'round trip, median', rtt_p90_us: 'round trip, 90th percentile',
    rtt_p99_us: 'round trip, 99th percentile', rtt_p999_us: 'round trip, 99.9th percentile',
    rtt_max_us: 'round trip, longest', rt_per_s: 'round trips per second',
    connects_per_s: 'connections per second', connect_p50_us: 'connect time, median',
    cpu_s_per_GB: 'CPU time per GB', tcp_rtt_us: 'TCP round trip', tcp_retrans: 'TCP retransmits',
    ttfb_ms: 'time to first byte', connect_ms: 'connect time', tls_ms: 'TLS handshake',
    first_MBps: 'throughput of the first round', first_ttfb_ms: 'first round\'s time to first byte',
    user_s: 'user CPU time', sys_s: 'system CPU time', tx_user_s: 'sender user CPU time',
    tx_sys_s: 'sender system CPU time', rx_user_s: 'receiver user CPU time',
    rx_sys_s: 'receiver system CPU time',
};

export function metricWords(metric) {
    return METRIC_WORDS[metric] || String(metric || '').replace(/_/g, ' ');
}
