// The Schedules view's table: one row per schedule (its name and hosts, when it fires, its next
// firing in UTC, whether it is paused, its last runs) with the buttons that pause, resume or
// delete it (a delete confirmed first) and the API's error under them.

import {h, hostLink} from '../dom.js';
import {utc, whenText} from '../format.js';

const RECENT_SHOWN = 5;

// The hosts a schedule runs its spec on, when it names them: each a link to its page.
function hostsOf(s) {
    if (!Array.isArray(s.hosts) || !s.hosts.length)
        return null;
    return h('div', {class: 'hint sched-hosts'}, 'on ',
        s.hosts.flatMap((n, i) => (i ? [', ', hostLink(n)] : [hostLink(n)])));
}

function runLink(r) {
    return h('a', {href: `#/run/${encodeURIComponent(r.id)}`, 'data-run': r.id},
        `${r.id} `, h('span', {class: `badge state-${r.state}`}, r.state));
}

// The table: t.table the element, t.tbody its rows, t.drawn what each row was drawn from.
export function schedulesTable() {
    const tbody = h('tbody');
    const table = h('table', {id: 'schedules-table', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'schedules'),
        h('thead', {}, h('tr', {},
            ['name', 'when', 'next (UTC)', 'paused', 'last run', 'runs', 'last runs', '']
                .map((c, i) => h('th', {scope: 'col', class: i === 5 ? 'num' : null}, c)))),
        tbody);
    return {table, tbody, drawn: new Map()};
}

// A row's buttons. u: what the page shows beside the data ({confirming, busy, error});
// on: {pause(s), resume(s), remove(s), confirm(s), keep(s)}, what the buttons do.
function actions(s, u, on) {
    const cell = h('td', {class: 'actions-cell'});
    const box = h('div', {class: 'actions'});
    if (u.confirming) {
        box.append(h('span', {class: 'confirm'}, `Delete ${s.name}? Its runs stay.`),
            h('button', {type: 'button', class: 'danger sched-delete-confirm', disabled: u.busy,
                onclick: () => on.remove(s)}, 'Delete'),
            h('button', {type: 'button', class: 'sched-delete-keep',
                onclick: () => on.keep(s)}, 'Keep'));
    } else {
        box.append(
            h('button', {type: 'button', class: 'sched-toggle', disabled: u.busy,
                'data-action': s.paused ? 'resume' : 'pause',
                onclick: () => (s.paused ? on.resume(s) : on.pause(s))},
            s.paused ? 'Resume' : 'Pause'),
            h('button', {type: 'button', class: 'danger sched-delete', disabled: u.busy,
                onclick: () => on.confirm(s)}, 'Delete'));
    }
    cell.append(box);
    if (u.error)
        cell.append(h('p', {class: 'field-error', role: 'alert', 'data-field': u.error.field || ''},
            u.error.text));
    return cell;
}

// One schedule's row; recent: its last runs, newest first; current: the id of #/schedules/ID.
function row(s, recent, u, current, on) {
    const last = s.last_run;
    return h('tr', {'data-schedule': s.id, 'data-name': s.name, 'data-paused': s.paused ? '1' : '0',
        class: s.id === current ? 'current' : null},
    h('td', {class: 'name'}, s.name, ' ', h('span', {class: 'hint'}, `#${s.id}`), hostsOf(s)),
    h('td', {class: 'when'}, whenText(s)),
    h('td', {class: 'next', 'data-next-ms': s.next_ms ?? ''},
        s.next_ms ? utc(s.next_ms) : 'never'),
    h('td', {class: 'paused'}, s.paused ? 'paused' : 'no'),
    h('td', {class: 'last-run'}, last ? runLink(last) : h('span', {class: 'hint'}, 'none yet')),
    h('td', {class: 'num runs'}, s.runs ?? 0),
    h('td', {class: 'recent'}, recent && recent.length
        ? h('ul', {class: 'recent-runs'}, recent.slice(0, RECENT_SHOWN).map((r) => h('li', {}, runLink(r))))
        : ''),
    actions(s, u, on));
}

// The rows of list (the schedules, ids as strings) into t: a row drawn from the same schedule,
// runs and u as before is kept as it was (its focus too); the rest are replaced in order.
// d: {list, recent (id -> runs), uiOf(id), current, loaded (whether the list was had), on}.
export function drawSchedules(t, d) {
    const ids = new Set(d.list.map((s) => s.id));
    for (const id of [...t.drawn.keys()])
        if (!ids.has(id))
            t.drawn.delete(id);
    const rows = [];
    for (const s of d.list) {
        const key = JSON.stringify([s, d.recent.get(s.id), d.uiOf(s.id)]);
        const old = t.tbody.querySelector(`tr[data-schedule="${CSS.escape(s.id)}"]`);
        rows.push(old && t.drawn.get(s.id) === key ? old
            : row(s, d.recent.get(s.id), d.uiOf(s.id), d.current, d.on));
        t.drawn.set(s.id, key);
    }
    for (const tr of [...t.tbody.children])
        if (!rows.includes(tr))
            tr.remove();
    rows.forEach((tr, i) => {
        if (t.tbody.children[i] !== tr)
            t.tbody.insertBefore(tr, t.tbody.children[i] || null);
    });
    if (d.loaded && !d.list.length && !t.tbody.querySelector('tr.empty'))
        t.tbody.append(h('tr', {class: 'empty'}, h('td', {colspan: 8, class: 'hint'},
            'No schedule yet: add one below.')));
    t.table.dataset.loaded = d.loaded ? '1' : '0';
}
