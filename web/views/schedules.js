// Schedules view: the recurring runs (GET /api/schedules) with their next firing, last runs and
// the buttons that pause, resume or delete one, and a form that adds one. Every write carries
// the dashboard token of the launch form (the same field, kept for this tab); the coordinator
// checks every field and its errors are shown at the field or button they concern.
// #/schedules/ID marks that schedule's row: the run page links there.

import {api, ApiError} from '../api.js';
import {h, scrollBox} from '../dom.js';
import {refusalText, clearFieldErrors} from '../components/form.js';
import {noteSchedules} from '../components/schedule_link.js';
import {scheduleForm, setPresets, showFormError, formBody, showAdded}
    from '../components/schedule_form.js';
import {schedulesTable, drawSchedules} from '../components/schedule_table.js';

const REFRESH_MS = 3000; // next firing and runs move when a schedule fires
const SOON_MS = 500; // a schedule's run's events move its row this soon

// The page's state: the form (f), the table (t), the schedules listed and their last runs,
// and per schedule what the page shows beside the data (ui: a delete being confirmed, an error).
// current: the id of #/schedules/ID, whose row is marked.
function schedulesPage(current) {
    const v = {current, alive: true, f: scheduleForm(), t: schedulesTable(),
        listError: h('p', {id: 'schedules-error', class: 'error', role: 'alert', hidden: true}),
        ui: new Map(), list: [], recent: new Map(), loaded: false, seq: 0, timer: null, soon: null};
    v.uiOf = (id) => v.ui.get(id) || {};
    v.on = {
        pause: (s) => act(v, s, api.pauseSchedule),
        resume: (s) => act(v, s, api.resumeSchedule),
        remove: (s) => act(v, s, api.deleteSchedule),
        confirm: (s) => setUi(v, s.id, {confirming: true}),
        keep: (s) => setUi(v, s.id, {}),
    };
    v.f.form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        add(v);
    });
    return v;
}

function layout(v) {
    return h('section', {class: 'view schedules'},
        h('h1', {}, 'Schedules'),
        h('p', {class: 'hint'}, 'Recurring runs: each firing starts its run as the Launch page ' +
            'does, and is judged against the schedule\'s previous run.'),
        h('section', {class: 'card'}, h('h2', {}, 'Schedules'), v.listError, scrollBox(v.t.table)),
        h('section', {class: 'card'}, h('h2', {}, 'Add a schedule'), v.f.form));
}

function draw(v) {
    drawSchedules(v.t, {list: v.list, recent: v.recent, uiOf: v.uiOf, current: v.current,
        loaded: v.loaded, on: v.on});
}

function setUi(v, id, u) {
    v.ui.set(id, u);
    draw(v);
}

// The form's POST: its errors at their fields, the new schedule in the table.
async function add(v) {
    const f = v.f;
    clearFieldErrors(f.form, f.formError);
    f.added.textContent = '';
    f.secret.replaceChildren();
    f.secret.hidden = true;
    f.token.apply();
    f.submit.disabled = true;
    try {
        const r = await api.addSchedule(formBody(f));
        if (!v.alive)
            return;
        showAdded(f, r);
        await refresh(v);
    } catch (e) {
        if (!v.alive)
            return;
        const apiField = e instanceof ApiError ? e.field || (e.status === 401 ? 'Authorization' : '') : '';
        showFormError(f, refusalText(e), apiField);
    } finally {
        f.submit.disabled = false;
    }
}

// A row's write: the token of the form, the answer's error at the row's buttons.
async function act(v, s, call) {
    v.f.token.apply();
    setUi(v, s.id, {...v.uiOf(s.id), busy: true, error: null});
    try {
        await call(s.id);
        v.ui.set(s.id, {});
    } catch (e) {
        v.ui.set(s.id, {error: {text: refusalText(e), field: e instanceof ApiError ? e.field : ''}});
    }
    if (v.alive)
        await refresh(v);
}

// #/schedules/ID: its row scrolled into view, once.
function showCurrent(v) {
    if (!v.current)
        return;
    const tr = v.t.tbody.querySelector(`tr[data-schedule="${CSS.escape(v.current)}"]`);
    if (tr && !tr.dataset.seen) {
        tr.dataset.seen = '1';
        tr.scrollIntoView({block: 'nearest'});
    }
}

// The schedules and each one's last runs, again every few seconds; an answer to an older
// question is dropped.
async function refresh(v) {
    const mine = ++v.seq;
    clearTimeout(v.timer);
    try {
        const got = (await api.schedules()).map((s) => ({...s, id: String(s.id)}));
        const details = await Promise.all(got.map((s) => api.schedule(s.id)
            .then((d) => d.recent_runs || []).catch(() => v.recent.get(s.id) || [])));
        if (!v.alive || mine !== v.seq)
            return;
        noteSchedules(got);
        v.list = got;
        v.recent.clear();
        got.forEach((s, i) => v.recent.set(s.id, details[i]));
        v.loaded = true;
        v.listError.hidden = true;
        draw(v);
        showCurrent(v);
    } catch (e) {
        if (!v.alive || mine !== v.seq)
            return;
        v.listError.hidden = false;
        v.listError.textContent = `cannot list the schedules: ${e.message}`;
    } finally {
        if (v.alive && mine === v.seq)
            v.timer = setTimeout(() => refresh(v), REFRESH_MS);
    }
}

// A run of a schedule starting or ending moves its row soon, not at the next refresh; a run's
// many progress events make one refresh.
function follow(v, live) {
    return live.on({run: (r) => {
        if (!r || r.schedule === null || r.schedule === undefined || v.soon)
            return;
        v.soon = setTimeout(() => {
            v.soon = null;
            if (v.alive)
                refresh(v);
        }, SOON_MS);
    }});
}

export function mount(root, args, {live}) {
    const v = schedulesPage(args[0] || '');
    root.append(layout(v));
    const off = follow(v, live);
    api.presets().then((ps) => {
        if (v.alive)
            setPresets(v.f, ps, null);
    }).catch((e) => {
        if (v.alive)
            setPresets(v.f, null, e);
    });
    refresh(v);
    return () => {
        v.alive = false;
        clearTimeout(v.timer);
        clearTimeout(v.soon);
        off();
    };
}
