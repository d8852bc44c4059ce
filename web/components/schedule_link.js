// A run's link to the schedule that started it ("schedule nightly"), for the run page and the
// History list, and the schedules' names by id those links are filled in from.

import {api} from '../api.js';
import {h} from '../dom.js';

// The schedules' names by id for the links of runs to their schedule: one listing shared by
// every link, asked again only for an id it did not have (a schedule made since).
const names = new Map();
const gone = new Set(); // deleted schedules: GET /api/schedules no longer lists them
let listing = null;

function listNames() {
    if (!listing)
        listing = api.schedules().then((list) => {
            for (const s of list)
                names.set(String(s.id), s.name);
        }).finally(() => {
            listing = null;
        });
    return listing;
}

async function scheduleName(id) {
    if (!names.has(id) && !gone.has(id)) {
        await listNames();
        if (!names.has(id))
            gone.add(id);
    }
    return names.has(id) ? names.get(id) : null;
}

// The Schedules view's listing (ids as strings) makes the links' names follow it: one deleted
// there (or elsewhere) is said to be gone.
export function noteSchedules(list) {
    for (const id of [...names.keys()])
        if (!list.some((s) => s.id === id)) {
            names.delete(id);
            gone.add(id);
        }
    for (const s of list)
        names.set(s.id, s.name);
}

// "schedule nightly", a link to that schedule's row; the run's JSON gives only the id, so the
// name is filled in when the listing answers ("schedule 3 (deleted)" when it is gone).
export function scheduleLink(id) {
    const sid = String(id);
    const a = h('a', {class: 'schedule-link', href: `#/schedules/${encodeURIComponent(sid)}`,
        'data-schedule': sid}, `schedule ${sid}`);
    scheduleName(sid).then((name) => {
        a.textContent = name === null ? `schedule ${sid} (deleted)` : `schedule ${name}`;
    }).catch(() => {
        // The id stays: the listing failed, the link still leads to the view.
    });
    return a;
}
