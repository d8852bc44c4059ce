// Host settings: pick two or more agents, and see their fingerprints side by side, the items on
// which they differ highlighted (GET /api/fingerprints/diff) among all the items they have
// (GET /api/agents/{name}/fingerprint). The hash keeps the choice: #/settings/h1,h2 (an old
// #/hosts/h1,h2 link comes here through the router).

import {api} from '../api.js';
import {h, clear, scrollBox, hostLink} from '../dom.js';
import {fmtDate} from '../format.js';

const MAX_HOSTS = 16;

// An item's text as the API's side by side writes it (sm_fp_item_text).
function itemText(v) {
    if (v === undefined)
        return '(absent)';
    if (v && typeof v === 'object')
        return `unreadable (${v.unreadable})`;
    return String(v);
}

// The values of one row that are not the row's most common one: those cells stand apart.
function oddCells(values) {
    const count = new Map();
    for (const v of values)
        count.set(v, (count.get(v) || 0) + 1);
    const top = Math.max(...count.values());
    const tops = [...count.values()].filter((c) => c === top).length;
    return values.map((v) => tops === 1 && count.get(v) !== top);
}

function hostPicker(agents, chosen, onCompare) {
    const boxes = agents.map((a) => h('label', {class: 'pick'},
        h('input', {type: 'checkbox', name: 'host', value: a.name, checked: chosen.includes(a.name),
            'data-host': a.name}),
        ' ', a.name));
    const note = h('span', {class: 'hint', id: 'hosts-pick-note'});
    const form = h('form', {id: 'hosts-pick', class: 'pick-hosts',
        onsubmit: (ev) => {
            ev.preventDefault();
            const names = [...form.querySelectorAll('input[name=host]:checked')].map((i) => i.value);
            if (names.length < 2 || names.length > MAX_HOSTS) {
                note.textContent = `pick 2 to ${MAX_HOSTS} hosts`;
                return;
            }
            note.textContent = '';
            onCompare(names);
        }},
    h('fieldset', {}, h('legend', {}, 'hosts'), boxes),
    h('button', {type: 'submit', id: 'hosts-compare'}, 'Show host settings'), ' ', note);
    return form;
}

// The whole table: one row per item any of the hosts has, one column per host; the rows the
// side by side lists come first and carry class "differs", and their odd cells class "odd".
function compareTable(hosts, fps, diff, onlyDiffers) {
    const differs = new Map((diff.items || []).map((it) => [it.item, it]));
    const names = new Set();
    for (const fp of fps)
        for (const k of Object.keys((fp.fingerprint && fp.fingerprint.items) || {}))
            names.add(k);
    for (const k of differs.keys())
        names.add(k);
    // The rows that differ first, so that the answer is at the top of a long table.
    const items = [...names].sort()
        .sort((x, y) => Number(differs.has(y)) - Number(differs.has(x)))
        .filter((k) => !onlyDiffers || differs.has(k));
    const rows = items.map((k) => {
        const d = differs.get(k);
        const values = hosts.map((host, i) => d ? d.values[host]
            : itemText(((fps[i].fingerprint || {}).items || {})[k]));
        const odd = d ? oddCells(values) : values.map(() => false);
        return h('tr', {'data-item': k, class: d ? 'differs' : null},
            h('th', {scope: 'row', title: d && d.label !== k ? d.label : null}, k),
            values.map((v, i) => h('td', {'data-host': hosts[i], class: odd[i] ? 'odd' : null}, v)));
    });
    return h('table', {id: 'hosts-table', class: 'data fingerprints'},
        h('caption', {class: 'visually-hidden'}, 'fingerprints side by side'),
        h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'item'),
            hosts.map((n) => h('th', {scope: 'col', 'data-host': n}, hostLink(n))))),
        h('tbody', {}, rows));
}

function seenLine(hosts, fps) {
    return hosts.flatMap((n, i) => [i ? '; ' : '', hostLink(n),
        `: fingerprint ${fps[i].hash}, seen ${fmtDate(fps[i].last_seen_ms)}` +
        (fps[i].history && fps[i].history.length > 1 ? ` (${fps[i].history.length} versions)` : '')]);
}

export function mount(root, args) {
    let alive = true;
    const chosen = (args[0] || '').split(',').filter(Boolean);
    const error = h('p', {class: 'error', role: 'alert', hidden: true});
    const pickBox = h('div', {});
    const summary = h('p', {class: 'summary', id: 'hosts-summary', 'aria-live': 'polite'});
    const seen = h('p', {class: 'hint', id: 'hosts-seen'});
    const only = h('input', {type: 'checkbox', id: 'hosts-only-differs'});
    const onlyField = h('div', {class: 'field inline', hidden: true},
        only, h('label', {for: 'hosts-only-differs'}, 'only the items that differ'));
    const tableBox = h('div', {});
    root.append(h('section', {class: 'view hosts settings'},
        h('div', {class: 'view-head'}, h('h1', {}, 'Host settings'),
            h('a', {href: '#/fleet'}, 'fleet')),
        h('p', {class: 'hint'}, 'Each host\'s latest fingerprint: kernel, sysctls, qdiscs, ' +
            'offloads, CPUs, limits, versions. Highlighted rows are the settings on which the ' +
            'hosts differ (info items are shown, never compared).'),
        error, pickBox, summary, seen, onlyField, scrollBox(tableBox)));

    let shown = null; // {hosts, fps, diff}
    const draw = () => {
        clear(tableBox);
        if (shown)
            tableBox.append(compareTable(shown.hosts, shown.fps, shown.diff, only.checked));
    };
    only.addEventListener('change', draw);

    const fail = (e) => {
        if (!alive)
            return;
        error.hidden = false;
        error.textContent = e.message;
    };
    const compare = (hosts) => {
        summary.textContent = 'loading...';
        Promise.all([api.fingerprintDiff(hosts), ...hosts.map((n) => api.fingerprint(n))])
            .then(([diff, ...fps]) => {
                if (!alive)
                    return;
                error.hidden = true;
                const n = (diff.items || []).length;
                summary.textContent = `${n} ${n === 1 ? 'item differs' : 'items differ'}, ` +
                    `${diff.same} items the same`;
                summary.dataset.differ = String(n);
                summary.dataset.same = String(diff.same);
                clear(seen).append(...seenLine(hosts, fps));
                onlyField.hidden = false;
                shown = {hosts: diff.hosts || hosts, fps, diff};
                draw();
            })
            .catch((e) => {
                summary.textContent = '';
                shown = null;
                draw();
                fail(e);
            });
    };

    api.agents().then((agents) => {
        if (!alive)
            return;
        agents.sort((a, b) => a.name.localeCompare(b.name));
        pickBox.append(hostPicker(agents, chosen, (names) => {
            const hash = `#/settings/${names.map(encodeURIComponent).join(',')}`;
            if (location.hash === hash)
                compare(names);
            else
                location.hash = hash; // the router mounts this view again with the choice
        }));
        if (chosen.length >= 2)
            compare(chosen);
        else
            summary.textContent = agents.length >= 2 ? 'Pick two or more hosts to see their settings side by side.'
                : 'Host settings side by side need two hosts or more.';
    }).catch(fail);
    return () => {
        alive = false;
    };
}
