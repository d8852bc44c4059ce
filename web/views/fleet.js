// Fleet view: every agent the coordinator knows, its state, its latest verdict (from the fleet
// grid, GET /api/grid) and the facts that explain its numbers (the 2010 post listed CPU and
// memory for exactly this). Each host's name opens its page.

import {api} from '../api.js';
import {h, clear, scrollBox, hostLink} from '../dom.js';
import {fmtGiB, fmtAgo, fmtDate} from '../format.js';
import {hostVerdict, hostVerdictBadge} from '../components/verdict.js';

function labelsText(labels) {
    if (!labels || typeof labels !== 'object')
        return '';
    return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(', ');
}

// grid: GET /api/grid's answer, null until it is in.
function row(a, grid) {
    const f = a.facts || {};
    return h('tr', {'data-agent': a.name},
        h('th', {scope: 'row'}, hostLink(a.name)),
        h('td', {class: 'state'}, h('span', {class: `badge state-${a.status}`}, a.status || '')),
        h('td', {class: 'verdict'}, grid ? hostVerdictBadge(hostVerdict(grid, a.name)) : ''),
        h('td', {class: 'labels'}, labelsText(a.labels)),
        h('td', {class: 'cpu'}, f.cpu_model || ''),
        h('td', {class: 'num cores'}, f.cores ?? ''),
        h('td', {class: 'num mem'}, fmtGiB(f.mem_bytes)),
        h('td', {class: 'kernel'}, f.kernel || ''),
        // Hosts with one boot id are one machine: their runs go one job at a time.
        h('td', {class: 'machine', title: [f.boot_id && `boot id ${f.boot_id}`,
            f.machine_id && `machine id ${f.machine_id}`].filter(Boolean).join(', ')},
        (f.boot_id || f.machine_id || '').slice(0, 8)),
        h('td', {class: 'data-addr'}, a.data_addr || ''),
        h('td', {class: 'seen', title: fmtDate(a.last_seen_ms), 'data-ms': a.last_seen_ms},
            fmtAgo(a.last_seen_ms)));
}

function fleetTable(tbody) {
    return h('table', {id: 'fleet-table', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'agents of the fleet'),
        h('thead', {}, h('tr', {},
            h('th', {scope: 'col'}, 'host'),
            h('th', {scope: 'col'}, 'state'),
            h('th', {scope: 'col', title: 'the verdict of each test in the latest ended run that has ' +
                'it: flagged names the tests on which the host stands apart'}, 'latest verdict'),
            h('th', {scope: 'col'}, 'labels'),
            h('th', {scope: 'col'}, 'CPU model'),
            h('th', {scope: 'col', class: 'num'}, 'cores'),
            h('th', {scope: 'col', class: 'num'}, 'memory (GiB)'),
            h('th', {scope: 'col'}, 'kernel'),
            h('th', {scope: 'col',
                title: 'the first digits of its boot id (or machine id): one id, one machine'},
            'machine'),
            h('th', {scope: 'col'}, 'data address'),
            h('th', {scope: 'col'}, 'last seen'))),
        tbody);
}

function render(v) {
    const agents = [...v.live.agents.values()].sort((a, b) => a.name.localeCompare(b.name));
    clear(v.tbody);
    v.tbody.append(...agents.map((a) => row(a, v.grid)));
    const up = agents.filter((a) => a.status !== 'lost').length;
    v.summary.textContent = agents.length
        ? `${agents.length} agents, ${up} online or busy, ${agents.length - up} lost`
        : 'No agent has registered yet. Start sockmatrix-agent --coordinator ... on each host.';
}

function update(v, a) {
    const old = v.tbody.querySelector(`tr[data-agent="${CSS.escape(a.name)}"]`);
    if (old)
        old.replaceWith(row(a, v.grid));
    else
        render(v);
}

// The verdicts change when a run ends: the grid is asked again then (one request at a time).
function loadGrid(v) {
    if (v.asking) {
        v.again = true;
        return;
    }
    v.asking = true;
    api.grid().then((g) => {
        if (!v.alive)
            return;
        v.grid = g;
        v.table.dataset.verdicts = 'loaded';
        render(v);
    }).catch((e) => {
        if (!v.alive)
            return;
        v.error.hidden = false;
        v.error.textContent = `latest verdicts: ${e.message}`;
    }).finally(() => {
        v.asking = false;
        if (v.again && v.alive) {
            v.again = false;
            loadGrid(v);
        }
    });
}

// The agents from the live snapshot, or from the API until it comes.
function loadAgents(v) {
    if (v.live.haveSnapshot) {
        render(v);
        return;
    }
    api.agents().then((agents) => {
        if (v.live.haveSnapshot)
            return; // the live snapshot arrived first and is at least as new
        for (const a of agents)
            v.live.agents.set(a.name, a);
        render(v);
    }).catch((e) => {
        v.error.hidden = false;
        v.error.textContent = e.message;
    });
}

export function mount(root, _args, {live}) {
    const tbody = h('tbody');
    // grid: GET /api/grid's answer, null until it is in.
    const v = {live, alive: true, grid: null, asking: false, again: false, tbody,
        table: fleetTable(tbody),
        summary: h('p', {class: 'summary', id: 'fleet-summary'}, 'loading the fleet...'),
        error: h('p', {class: 'error', role: 'alert', hidden: true})};
    root.append(h('section', {class: 'view fleet'},
        h('div', {class: 'view-head'}, h('h1', {}, 'Fleet'),
            h('a', {href: '#/settings', id: 'compare-hosts-link'}, 'host settings')),
        v.summary, v.error, scrollBox(v.table)));
    loadGrid(v);
    const runEnded = (r) => {
        if (r && r.state && r.state !== 'running')
            loadGrid(v);
    };
    const off = live.on({snapshot: () => render(v), agent: (a) => update(v, a), run: runEnded});
    loadAgents(v);
    // "3 s ago" goes stale by itself; a lost agent shows it most.
    const tick = setInterval(() => {
        for (const td of tbody.querySelectorAll('td.seen'))
            td.textContent = fmtAgo(td.dataset.ms);
    }, 5000);
    return () => {
        v.alive = false;
        off();
        clearInterval(tick);
    };
}
