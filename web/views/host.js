// A host's page (#/hosts/NAME): its latest verdict per test with its value against the fleet's
// (GET /api/grid), its flags over time as one small trend per test (GET /api/trends), its
// fingerprint with the settings in which it differs from the rest of the fleet and when it
// changed (GET /api/agents/NAME/fingerprint, /api/fingerprints/diff), and its latest jobs
// (GET /api/agents/NAME/jobs). Every part loads on its own: one that fails says so alone.

import {api} from '../api.js';
import {h, svg, clear, scrollBox, hostLink} from '../dom.js';
import {fmtDate, fmtAgo, fmtValue, fmtPercent} from '../format.js';
import {CELL_VERDICTS, hostVerdict, hostVerdictBadge} from '../components/verdict.js';
import {causeButton} from '../components/experiment.js';
import {experimentLine} from '../components/anomaly.js';

const enc = encodeURIComponent;
// The side by side takes 16 hosts at most (the API's bound): this one and 15 others.
const SETTINGS_HOSTS = 16;
const JOBS_SHOWN = 20;
// Trends asked for at a time: each is built by the coordinator's report worker.
const TRENDS_PARALLEL = 2;


function part(id, title, ...children) {
    return h('section', {class: 'card', id}, h('h2', {}, title), ...children);
}

function failNote(e) {
    return h('p', {class: 'error', role: 'alert'}, e.message);
}

// The host's medians of one test over the ended runs, a dot per run, the flagged runs' dots
// larger and in the flag colour: the flags over time at a glance (its title says how many).
function sparkline(t) {
    const pts = (t.points || []).filter((p) => Number.isFinite(Number(p.median)));
    const W = 160, H = 28, P = 4;
    const flagged = pts.filter((p) => p.flagged).length;
    const s = svg('svg', {class: 'sparkline', viewBox: `0 0 ${W} ${H}`, width: W, height: H,
        role: 'img', 'data-points': pts.length, 'data-flagged': flagged});
    const title = svg('title', {});
    title.textContent = `${pts.length} run${pts.length === 1 ? '' : 's'}, ${flagged} flagged`;
    s.append(title);
    if (!pts.length)
        return s;
    const ys = pts.map((p) => Number(p.median));
    const lo = Math.min(...ys), hi = Math.max(...ys);
    const x = (i) => pts.length === 1 ? W / 2 : P + (i * (W - 2 * P)) / (pts.length - 1);
    const y = (v) => hi === lo ? H / 2 : H - P - ((v - lo) * (H - 2 * P)) / (hi - lo);
    if (pts.length > 1)
        s.append(svg('polyline', {class: 'line', fill: 'none', stroke: '#0072B2', 'stroke-width': 1.5,
            points: pts.map((p, i) => `${x(i).toFixed(1)},${y(Number(p.median)).toFixed(1)}`).join(' ')}));
    pts.forEach((p, i) => s.append(svg('circle', {class: p.flagged ? 'flag' : 'point',
        cx: x(i).toFixed(1), cy: y(Number(p.median)).toFixed(1), r: p.flagged ? 3.5 : 2,
        fill: p.flagged ? '#D55E00' : '#0072B2'})));
    return s;
}

// The host's value against the fleet's: "+12%", or a factor beyond 2x either way ("315x
// slower" needs the metric's direction, which the grid does not give: "0.003x").
function againstFleet(c) {
    const v = Number(c.median), f = Number(c.fleet_median);
    if (c.median === null || c.fleet_median === null || !Number.isFinite(v) || !Number.isFinite(f) || f === 0)
        return '';
    const q = v / f;
    if (q >= 2 || (q > 0 && q <= 0.5)) {
        // A factor, as the anomalies write it: "234x slower" of a throughput, "5.9x slower" of
        // a time; a ratio has no better side, only above or below.
        const x = q >= 1 ? q : 1 / q;
        const fx = `${x.toFixed(x < 9.95 ? 1 : 0)}x`;
        const unit = c.unit || '';
        const better = /\/s$/.test(unit) ? q > 1 : unit === 's' ? q < 1 : null;
        return better === null ? `${fx} ${q >= 1 ? 'above' : 'below'} the fleet`
            : `${fx} ${better ? 'faster' : 'slower'}`;
    }
    return fmtPercent(q - 1);
}

// A flagged test of the host itself (not a pair's, not a ratio: unit "x") offers "Find the
// cause".
function verdictCell(c) {
    const w = CELL_VERDICTS[c.verdict] || CELL_VERDICTS['no data'];
    const explain = c.verdict === 'flagged' && c.run && c.unit !== 'x' && c.unit !== 'ratio' &&
        !String(c.host).includes('->');
    return h('td', {class: `verdict ${w.cls}`, title: c.why || null},
        h('span', {class: 'mark', 'aria-hidden': 'true'}, w.mark), ` ${w.text}`,
        explain ? causeButton(c.run, c.host, c.test) : null);
}

// The host's own rows first, then the pairs it is an end of, each named by its pair.
function verdictsTable(name, cells) {
    const rows = cells.map((c) => h('tr', {'data-test': c.test, 'data-row': c.host,
        'data-verdict': c.verdict, 'data-run': c.run || '', 'data-median': c.median ?? ''},
    h('th', {scope: 'row'}, h('a', {href: `#/trends/${enc(c.host)}/${enc(c.test)}` +
        (c.metric ? `/${enc(c.metric)}` : ''), title: 'its trend'}, c.test),
    c.host !== name ? h('span', {class: 'hint'}, ` (${c.host})`) : null),
    verdictCell(c),
    h('td', {class: 'num value'}, fmtValue(c.median, c.unit || '')),
    h('td', {class: 'num fleet', title: c.fleet_rows ? `median of ${c.fleet_rows} ` +
        `${c.host.includes('->') ? 'pairs' : 'hosts'} in that run` : null},
    fmtValue(c.fleet_median, c.unit || '')),
    h('td', {class: 'num against'}, againstFleet(c)),
    h('td', {class: 'num run'}, c.run ? h('a', {href: `#/run/${enc(c.run)}`}, c.run) : ''),
    h('td', {class: 'spark', 'data-row': c.host, 'data-test': c.test}, '')));
    return h('table', {id: 'host-verdicts', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'latest verdict of each test'),
        h('thead', {}, h('tr', {},
            h('th', {scope: 'col'}, 'test'),
            h('th', {scope: 'col'}, 'latest verdict'),
            h('th', {scope: 'col', class: 'num'}, 'value'),
            h('th', {scope: 'col', class: 'num', title: 'the median of all hosts in the same run'},
                'fleet'),
            h('th', {scope: 'col', class: 'num'}, 'against the fleet'),
            h('th', {scope: 'col', class: 'num'}, 'run'),
            h('th', {scope: 'col', title: 'its median in each ended run, oldest first; ' +
                'the flagged runs in orange'}, 'flags over time'))),
        h('tbody', {}, rows));
}

// Under each flagged row whose anomaly an experiment has answered, what it proved (or tested),
// linked to the experiment: one request per run, the run's anomalies.
function loadCauses(table, cells, alive) {
    const flagged = cells.filter((c) => c.verdict === 'flagged' && c.run);
    for (const run of new Set(flagged.map((c) => c.run))) {
        api.anomalies(run).then((doc) => {
            if (!alive())
                return;
            for (const c of flagged.filter((x) => x.run === run)) {
                const a = (doc.anomalies || []).find((x) => x.host === c.host &&
                    x.test === c.test && x.experiment && (!c.metric || x.metric === c.metric));
                const tr = [...table.querySelectorAll('tbody tr[data-test]')]
                    .find((x) => x.dataset.row === c.host && x.dataset.test === c.test);
                const line = a ? experimentLine(a) : null;
                if (tr && line)
                    tr.after(h('tr', {class: 'experiment-row', 'data-cause-of': c.host,
                        'data-cause-test': c.test}, h('td', {colspan: 7}, line)));
            }
        }, () => {}); // the row's verdict stands without it; the run's page says more
    }
}

// Fills each row's sparkline, TRENDS_PARALLEL trends at a time.
function loadSparklines(table, cells, alive) {
    const todo = cells.filter((c) => c.run);
    const next = () => {
        const c = todo.shift();
        if (!c || !alive())
            return;
        const td = [...table.querySelectorAll('td.spark')]
            .find((x) => x.dataset.row === c.host && x.dataset.test === c.test);
        api.trends(c.host, c.test, c.metric).then((t) => {
            if (alive() && td)
                clear(td).append(sparkline(t));
        }, (e) => {
            if (alive() && td)
                clear(td).append(h('span', {class: 'hint', title: e.message}, '-'));
        }).finally(next);
    };
    for (let i = 0; i < TRENDS_PARALLEL; i++)
        next();
}

// The items in which the host differs from the rest: those of the side by side whose value on
// this host is not the one most of the others have. [{item, label, value, fleet, of}].
function differences(name, diff) {
    const out = [];
    for (const it of diff.items || []) {
        const mine = it.values[name];
        const others = Object.entries(it.values).filter(([n]) => n !== name).map(([, v]) => v);
        const count = new Map();
        for (const v of others)
            count.set(v, (count.get(v) || 0) + 1);
        const top = [...count.entries()].sort((a, b) => b[1] - a[1]);
        const fleet = top.length && (top.length === 1 || top[0][1] > top[1][1]) ? top[0][0] : null;
        if (fleet !== null && fleet === mine)
            continue;
        out.push({item: it.item, label: it.label || it.item, value: mine, fleet,
            of: fleet === null ? 0 : top[0][1], hosts: others.length});
    }
    return out;
}

function differencesTable(list) {
    return h('table', {id: 'host-differs', class: 'data fingerprints'},
        h('caption', {class: 'visually-hidden'}, 'settings in which this host differs from the fleet'),
        h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'setting'),
            h('th', {scope: 'col'}, 'this host'), h('th', {scope: 'col'}, 'the rest of the fleet'))),
        h('tbody', {}, list.map((d) => h('tr', {'data-item': d.item, class: 'differs'},
            h('th', {scope: 'row', title: d.item}, d.label),
            h('td', {class: 'odd host-value'}, d.value ?? '(absent)'),
            h('td', {class: 'fleet-value'}, d.fleet === null
                ? `no majority of ${d.hosts} hosts` : `${d.fleet} (${d.of} of ${d.hosts} hosts)`)))));
}

function itemText(v) {
    if (v && typeof v === 'object')
        return `unreadable (${v.unreadable})`;
    return String(v);
}

function historyList(fp) {
    const hist = fp.history || [];
    return h('ul', {id: 'host-fp-history', class: 'fp-history'},
        hist.map((v, i) => h('li', {'data-hash': v.hash},
            h('code', {}, v.hash), `: seen from ${fmtDate(v.first_seen_ms)} to ${fmtDate(v.last_seen_ms)}`,
            i === hist.length - 1 && hist.length > 1 ? ' (the latest)' : '')),
        fp.history_left_out ? h('li', {class: 'hint'}, `${fp.history_left_out} earlier versions not kept`) : null);
}

function fingerprintPart(box, name, agents, alive) {
    const others = agents.map((a) => a.name).filter((n) => n !== name).slice(0, SETTINGS_HOSTS - 1);
    const diff = others.length ? api.fingerprintDiff([name, ...others]) : Promise.resolve(null);
    Promise.all([api.fingerprint(name), diff]).then(([fp, d]) => {
        if (!alive())
            return;
        const items = (fp.fingerprint && fp.fingerprint.items) || {};
        const list = d ? differences(name, d) : [];
        const n = Object.keys(items).length;
        const changes = Math.max(0, (fp.history || []).length - 1) + (Number(fp.history_left_out) || 0);
        // A part left out is null: DOM append would write it as text.
        clear(box).append(...[
            h('p', {class: 'summary', id: 'host-fp-summary', 'data-differ': list.length, 'data-hash': fp.hash},
                d ? `Differs from the rest of the fleet in ${list.length} setting${list.length === 1 ? '' : 's'} ` +
                    `(${others.length} other host${others.length === 1 ? '' : 's'} compared).`
                    : 'No other host to compare with.',
                ` Fingerprint ${fp.hash}, ${n} items, unchanged since ${fmtDate(fp.first_seen_ms)}` +
                (changes ? `; it changed ${changes} time${changes === 1 ? '' : 's'} before.` : '; it never changed.')),
            list.length ? scrollBox(differencesTable(list)) : null,
            others.length ? h('p', {}, h('a', {id: 'host-settings-link',
                href: `#/settings/${[name, ...others].map(enc).join(',')}`}, 'host settings'),
            ' beside the other hosts') : null,
            h('details', {}, h('summary', {}, 'when it changed'), historyList(fp)),
            h('details', {}, h('summary', {}, `all ${n} items`),
                scrollBox(h('table', {id: 'host-fp-items', class: 'data fingerprints'},
                    h('tbody', {}, Object.keys(items).sort().map((k) => h('tr', {'data-item': k},
                        h('th', {scope: 'row'}, k), h('td', {}, itemText(items[k]))))))))].filter(Boolean));
    }).catch((e) => {
        if (alive())
            clear(box).append(failNote(e));
    });
}

// A pair job's other end, linked: "client, server h3" / "server, client h1"; none for the
// host's own.
function roleText(j, name) {
    if (!j.peer)
        return '';
    return j.host === name ? ['client, server ', hostLink(j.peer)] : ['server, client ', hostLink(j.host)];
}

function jobsTable(name, jobs) {
    return h('table', {id: 'host-jobs', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'latest jobs, newest first'),
        h('thead', {}, h('tr', {}, ['job', 'run', 'test', 'pair', 'state', 'figure', 'ended']
            .map((c, i) => h('th', {scope: 'col', class: i < 2 || i === 5 ? 'num' : null}, c)))),
        h('tbody', {}, jobs.map((j) => h('tr', {'data-job': j.id, 'data-state': j.state},
            h('td', {class: 'num'}, j.id),
            h('td', {class: 'num'}, j.run ? h('a', {href: `#/run/${enc(j.run)}`}, j.run) : ''),
            h('td', {class: 'test'}, j.test || '', j.warmup ? h('span', {class: 'hint'}, ' (warm-up)') : null),
            h('td', {class: 'pair'}, roleText(j, name)),
            h('td', {class: 'state'}, h('span', {class: `badge state-${j.state}`}, j.state),
                j.reason ? h('span', {class: 'hint'}, ` ${j.reason}`) : null),
            h('td', {class: 'num figure'}, j.headline ? fmtValue(j.headline.value, j.headline.unit) : ''),
            h('td', {class: 'ended'}, Number(j.finished_ms) > 0 ? fmtDate(j.finished_ms) : '')))));
}

export function mount(root, args) {
    let live = true;
    const alive = () => live;
    const name = args[0] || '';
    const head = h('p', {class: 'summary', id: 'host-summary'}, 'loading...');
    const verdictBox = h('div', {}, h('p', {class: 'hint'}, 'loading...'));
    const fpBox = h('div', {}, h('p', {class: 'hint'}, 'loading...'));
    const jobsBox = h('div', {}, h('p', {class: 'hint'}, 'loading...'));
    root.append(h('section', {class: 'view host', 'data-host': name},
        h('div', {class: 'view-head'}, h('h1', {}, 'Host ', h('span', {id: 'host-name'}, name)),
            h('a', {href: '#/fleet'}, 'fleet')),
        head,
        part('host-verdicts-part', 'Latest verdict of each test', verdictBox),
        part('host-fp-part', 'Settings', fpBox),
        part('host-jobs-part', 'Latest jobs', jobsBox)));

    Promise.all([api.agents(), api.grid()]).then(([agents, grid]) => {
        if (!live)
            return;
        const me = agents.find((a) => a.name === name);
        if (!me) {
            head.textContent = `No agent named ${name} has registered. `;
            head.append(h('a', {href: '#/fleet'}, 'The fleet'), ' lists the hosts there are.');
            for (const box of [verdictBox, fpBox, jobsBox])
                clear(box);
            return;
        }
        const v = hostVerdict(grid, name);
        clear(head).append(h('span', {class: `badge state-${me.status}`}, me.status), ' ',
            'last seen ', h('span', {title: fmtDate(me.last_seen_ms)}, fmtAgo(me.last_seen_ms)),
            '; latest verdict: ', hostVerdictBadge(v));
        const ends = (row) => row.split('->');
        const measured = (grid.cells || []).filter((c) => c.verdict !== 'no data');
        const cells = [...measured.filter((c) => c.host === name),
            ...measured.filter((c) => c.host !== name && ends(c.host).includes(name))];
        if (!cells.length) {
            clear(verdictBox).append(h('p', {class: 'hint', id: 'host-verdicts-none'},
                'No ended run has measured this host yet.'));
        } else {
            const table = verdictsTable(name, cells);
            clear(verdictBox).append(scrollBox(table));
            loadSparklines(table, cells, alive);
            loadCauses(table, cells, alive);
        }
        fingerprintPart(fpBox, name, agents, alive);
        api.agentJobs(name, JOBS_SHOWN).then((r) => {
            if (!live)
                return;
            const jobs = r.jobs || [];
            clear(jobsBox).append(jobs.length ? scrollBox(jobsTable(name, jobs))
                : h('p', {class: 'hint', id: 'host-jobs-none'}, 'This host has run no job yet.'));
        }).catch((e) => {
            if (live)
                clear(jobsBox).append(failNote(e));
        });
    }).catch((e) => {
        if (live)
            clear(head).append(failNote(e));
    });
    return () => {
        live = false;
    };
}
