// Schedules view: the recurring runs (GET /api/schedules) with their next firing, last runs and
// the buttons that pause, resume or delete one, and a form that adds one. Every write carries
// the dashboard token of the launch form (the same field, kept for this tab); the coordinator
// checks every field and its errors are shown at the field or button they concern.
// #/schedules/ID marks that schedule's row: the run page links there.

import {api, ApiError} from './api.js';
import {h, clear, scrollBox, hostLink} from './dom.js';
import {tokenField, refusalText} from './launch.js';

const REFRESH_MS = 3000; // next firing and runs move when a schedule fires
const RECENT_SHOWN = 5;
const SPEC = 'spec'; // the "what" choice that takes a spec typed as JSON

export function utc(ms) {
    const x = Number(ms);
    if (!Number.isFinite(x) || x <= 0)
        return '';
    return new Date(x).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
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

// The hosts a schedule runs its spec on, when it names them: each a link to its page.
function hostsOf(s) {
    if (!Array.isArray(s.hosts) || !s.hosts.length)
        return null;
    return h('div', {class: 'hint sched-hosts'}, 'on ',
        s.hosts.flatMap((n, i) => (i ? [', ', hostLink(n)] : [hostLink(n)])));
}

function field(id, label, control, hint) {
    return h('div', {class: 'field', 'data-for': id},
        h('label', {for: id}, label), control,
        hint ? h('small', {class: 'hint', id: `${id}-hint`}, hint) : null);
}

// Which of the form's boxes an API field belongs to: "spec.tests[0].count" is the spec's.
function boxFor(apiField, what) {
    const top = apiField.split(/[.[]/)[0];
    if (top === 'spec')
        return what === SPEC ? 'sched-spec' : 'sched-what';
    return {
        name: 'sched-name', preset: 'sched-what', every: 'sched-every', cron: 'sched-cron',
        hosts: 'sched-hosts', webhook: 'sched-webhook', Authorization: 'sched-token',
    }[top] || 'sched-general';
}

// Host names separated by commas or spaces; empty or "all": the spec's own hosts.
function hostsList(text) {
    const t = text.trim();
    return t === '' || t === 'all' ? undefined : t.split(/[\s,]+/).filter(Boolean);
}

function runLink(r) {
    return h('a', {href: `#/run/${encodeURIComponent(r.id)}`, 'data-run': r.id},
        `${r.id} `, h('span', {class: `badge state-${r.state}`}, r.state));
}

export function mount(root, args, {live}) {
    let alive = true;
    let presets = [];
    const current = args[0] || '';
    // Per schedule: what the page shows beside the data (a delete being confirmed, an error).
    const ui = new Map();
    const uiOf = (id) => ui.get(id) || {};

    const token = tokenField('sched-token');
    const name = h('input', {id: 'sched-name', name: 'name', type: 'text', autocomplete: 'off',
        placeholder: 'nightly'});
    const what = h('select', {id: 'sched-what', name: 'what'});
    const spec = h('textarea', {id: 'sched-spec', name: 'spec', rows: 8, spellcheck: 'false',
        autocomplete: 'off', 'aria-describedby': 'sched-spec-hint'});
    const when = h('select', {id: 'sched-when', name: 'when'},
        h('option', {value: 'every'}, 'every (interval)'), h('option', {value: 'cron'}, 'cron (UTC)'));
    const every = h('input', {id: 'sched-every', name: 'every', type: 'text', autocomplete: 'off',
        placeholder: '15m', 'aria-describedby': 'sched-every-hint'});
    const cron = h('input', {id: 'sched-cron', name: 'cron', type: 'text', autocomplete: 'off',
        placeholder: '0 3 * * *', 'aria-describedby': 'sched-cron-hint'});
    const hosts = h('input', {id: 'sched-hosts', name: 'hosts', type: 'text', autocomplete: 'off',
        placeholder: 'all', 'aria-describedby': 'sched-hosts-hint'});
    const webhook = h('input', {id: 'sched-webhook', name: 'webhook', type: 'text',
        autocomplete: 'off', placeholder: 'https://hooks.example.net/sockmatrix',
        'aria-describedby': 'sched-webhook-hint'});
    const submit = h('button', {id: 'schedule-submit', type: 'submit'}, 'Add schedule');
    const formError = h('p', {id: 'schedule-error', class: 'error', role: 'alert', hidden: true});
    const added = h('p', {id: 'schedule-added', class: 'hint', 'aria-live': 'polite'});
    // A webhook's secret comes once, in the answer that made the schedule: shown here until
    // the next add, never again (rotate-secret makes a new one).
    const secret = h('p', {id: 'schedule-secret', class: 'hint', hidden: true});

    const specField = field('sched-spec', 'spec (JSON, as POST /api/runs takes it)', spec,
        'starts as the preset picked before; its hosts are replaced by the hosts below when given');
    const everyField = field('sched-every', 'every', every,
        'seconds, or a number with s, m, h or d (30s, 15m, 6h, 1d); at least 10 s');
    const cronField = field('sched-cron', 'cron', cron,
        'minute hour day-of-month month day-of-week, in UTC');
    const form = h('form', {id: 'schedule-form', class: 'launch', novalidate: true},
        h('fieldset', {class: 'group'}, h('legend', {}, 'what'),
            field('sched-name', 'name', name),
            field('sched-what', 'preset or spec', what), specField),
        h('fieldset', {class: 'group'}, h('legend', {}, 'when and where'),
            field('sched-when', 'fires', when), everyField, cronField,
            field('sched-hosts', 'hosts', hosts, 'names separated by commas; empty: the spec\'s'),
            field('sched-webhook', 'webhook', webhook,
                'optional: told of a new flag or regression (http:// or https://); the secret ' +
                'its receiver checks deliveries with is shown once, when the schedule is added')),
        h('fieldset', {class: 'group'}, h('legend', {}, 'authorisation'), token.field),
        h('div', {class: 'actions', 'data-for': 'sched-general'}, submit),
        formError, added, secret);

    const tbody = h('tbody');
    const table = h('table', {id: 'schedules-table', class: 'data'},
        h('caption', {class: 'visually-hidden'}, 'schedules'),
        h('thead', {}, h('tr', {},
            ['name', 'when', 'next (UTC)', 'paused', 'last run', 'runs', 'last runs', '']
                .map((c, i) => h('th', {scope: 'col', class: i === 5 ? 'num' : null}, c)))),
        tbody);
    const listError = h('p', {id: 'schedules-error', class: 'error', role: 'alert', hidden: true});
    root.append(h('section', {class: 'view schedules'},
        h('h1', {}, 'Schedules'),
        h('p', {class: 'hint'}, 'Recurring runs: each firing starts its run as the Launch page ' +
            'does, and is judged against the schedule\'s previous run.'),
        h('section', {class: 'card'}, h('h2', {}, 'Schedules'), listError, scrollBox(table)),
        h('section', {class: 'card'}, h('h2', {}, 'Add a schedule'), form)));

    const syncForm = () => {
        specField.hidden = what.value !== SPEC;
        everyField.hidden = when.value !== 'every';
        cronField.hidden = when.value !== 'cron';
    };
    // Choosing "spec" starts the text from the preset picked before, to be edited.
    let lastPreset = '';
    what.addEventListener('change', () => {
        const p = presets.find((x) => x.name === lastPreset);
        if (what.value === SPEC && spec.value.trim() === '' && p && p.spec)
            spec.value = JSON.stringify(p.spec, null, 2);
        if (what.value !== SPEC)
            lastPreset = what.value;
        syncForm();
    });
    when.addEventListener('change', syncForm);

    const clearErrors = () => {
        formError.hidden = true;
        formError.textContent = '';
        for (const e of form.querySelectorAll('.field-error'))
            e.remove();
        for (const e of form.querySelectorAll('[aria-invalid]'))
            e.removeAttribute('aria-invalid');
    };
    const showError = (msg, apiField) => {
        formError.hidden = false;
        formError.textContent = msg;
        const box = form.querySelector(`[data-for="${boxFor(apiField || '', what.value)}"]`) ||
            form.querySelector('[data-for="sched-general"]');
        const control = box.querySelector('input, select, textarea');
        if (control)
            control.setAttribute('aria-invalid', 'true');
        box.append(h('p', {class: 'field-error', 'data-field': apiField || '', role: 'alert'}, msg));
    };

    const buildBody = () => {
        const body = {name: name.value.trim()};
        if (what.value === SPEC) {
            try {
                body.spec = JSON.parse(spec.value);
            } catch (e) {
                throw new ApiError(400, `spec: not JSON (${e.message})`, 'spec');
            }
        } else {
            body.preset = what.value;
        }
        if (when.value === 'cron')
            body.cron = cron.value.trim();
        else
            body.every = every.value.trim();
        const list = hostsList(hosts.value);
        if (list)
            body.hosts = list;
        if (webhook.value.trim())
            body.webhook = webhook.value.trim();
        return body;
    };

    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        clearErrors();
        added.textContent = '';
        secret.replaceChildren();
        secret.hidden = true;
        token.apply();
        submit.disabled = true;
        try {
            const r = await api.addSchedule(buildBody());
            if (!alive)
                return;
            added.textContent = `Schedule ${r.id} added: first run at ${utc(r.next_ms)}.`;
            if (r.webhook_secret) {
                secret.replaceChildren('Webhook secret, shown only now: ',
                    h('code', {id: 'schedule-secret-value'}, r.webhook_secret),
                    '. Give it to the receiver: it checks each delivery\'s signature with it.');
                secret.hidden = false;
            }
            await refresh();
        } catch (e) {
            if (!alive)
                return;
            const apiField = e instanceof ApiError ? e.field || (e.status === 401 ? 'Authorization' : '') : '';
            showError(refusalText(e), apiField);
        } finally {
            submit.disabled = false;
        }
    });

    // A row's write: the token of the form, the answer's error at the row's buttons.
    const act = async (s, call) => {
        token.apply();
        ui.set(s.id, {...uiOf(s.id), busy: true, error: null});
        draw();
        try {
            await call(s.id);
            ui.set(s.id, {});
        } catch (e) {
            ui.set(s.id, {error: {text: refusalText(e), field: e instanceof ApiError ? e.field : ''}});
        }
        if (alive)
            await refresh();
    };

    const actions = (s) => {
        const u = uiOf(s.id);
        const cell = h('td', {class: 'actions-cell'});
        const box = h('div', {class: 'actions'});
        if (u.confirming) {
            box.append(h('span', {class: 'confirm'}, `Delete ${s.name}? Its runs stay.`),
                h('button', {type: 'button', class: 'danger sched-delete-confirm', disabled: u.busy,
                    onclick: () => act(s, api.deleteSchedule)}, 'Delete'),
                h('button', {type: 'button', class: 'sched-delete-keep',
                    onclick: () => {
                        ui.set(s.id, {});
                        draw();
                    }}, 'Keep'));
        } else {
            box.append(
                h('button', {type: 'button', class: 'sched-toggle', disabled: u.busy,
                    'data-action': s.paused ? 'resume' : 'pause',
                    onclick: () => act(s, s.paused ? api.resumeSchedule : api.pauseSchedule)},
                s.paused ? 'Resume' : 'Pause'),
                h('button', {type: 'button', class: 'danger sched-delete', disabled: u.busy,
                    onclick: () => {
                        ui.set(s.id, {confirming: true});
                        draw();
                    }}, 'Delete'));
        }
        cell.append(box);
        if (u.error)
            cell.append(h('p', {class: 'field-error', role: 'alert', 'data-field': u.error.field || ''},
                u.error.text));
        return cell;
    };

    const row = (s, recent) => {
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
        actions(s));
    };

    let list = [];
    const recent = new Map(); // schedule id -> its last runs, newest first
    const drawn = new Map(); // schedule id -> what its row was drawn from
    let loaded = false;
    const draw = () => {
        const ids = new Set(list.map((s) => s.id));
        for (const id of [...drawn.keys()])
            if (!ids.has(id))
                drawn.delete(id);
        const rows = [];
        for (const s of list) {
            const key = JSON.stringify([s, recent.get(s.id), uiOf(s.id)]);
            const old = tbody.querySelector(`tr[data-schedule="${CSS.escape(s.id)}"]`);
            rows.push(old && drawn.get(s.id) === key ? old : row(s, recent.get(s.id)));
            drawn.set(s.id, key);
        }
        // Rows kept as they were keep their focus; the rest are replaced in order.
        for (const tr of [...tbody.children])
            if (!rows.includes(tr))
                tr.remove();
        rows.forEach((tr, i) => {
            if (tbody.children[i] !== tr)
                tbody.insertBefore(tr, tbody.children[i] || null);
        });
        if (loaded && !list.length && !tbody.querySelector('tr.empty'))
            tbody.append(h('tr', {class: 'empty'}, h('td', {colspan: 8, class: 'hint'},
                'No schedule yet: add one below.')));
        table.dataset.loaded = loaded ? '1' : '0';
    };

    let seq = 0;
    let timer = null;
    async function refresh() {
        const mine = ++seq;
        clearTimeout(timer);
        try {
            const got = (await api.schedules()).map((s) => ({...s, id: String(s.id)}));
            const details = await Promise.all(got.map((s) => api.schedule(s.id)
                .then((d) => d.recent_runs || []).catch(() => recent.get(s.id) || [])));
            if (!alive || mine !== seq)
                return;
            // The links' names follow: one deleted here (or elsewhere) is said to be gone.
            for (const id of [...names.keys()])
                if (!got.some((s) => s.id === id)) {
                    names.delete(id);
                    gone.add(id);
                }
            for (const s of got)
                names.set(s.id, s.name);
            list = got;
            recent.clear();
            got.forEach((s, i) => recent.set(s.id, details[i]));
            loaded = true;
            listError.hidden = true;
            draw();
            if (current) {
                const tr = tbody.querySelector(`tr[data-schedule="${CSS.escape(current)}"]`);
                if (tr && !tr.dataset.seen) {
                    tr.dataset.seen = '1';
                    tr.scrollIntoView({block: 'nearest'});
                }
            }
        } catch (e) {
            if (!alive || mine !== seq)
                return;
            listError.hidden = false;
            listError.textContent = `cannot list the schedules: ${e.message}`;
        } finally {
            if (alive && mine === seq)
                timer = setTimeout(refresh, REFRESH_MS);
        }
    }

    // A run of a schedule starting or ending moves its row soon, not at the next refresh; a
    // run's many progress events make one refresh.
    let soon = null;
    const off = live.on({run: (r) => {
        if (!r || r.schedule === null || r.schedule === undefined || soon)
            return;
        soon = setTimeout(() => {
            soon = null;
            if (alive)
                refresh();
        }, 500);
    }});

    api.presets().then((ps) => {
        if (!alive)
            return;
        presets = ps;
        clear(what);
        what.append(...ps.map((p) => h('option', {value: p.name}, p.name)),
            h('option', {value: SPEC}, 'spec (JSON)'));
        lastPreset = what.value;
        syncForm();
    }).catch((e) => {
        if (!alive)
            return;
        what.append(h('option', {value: SPEC}, 'spec (JSON)'));
        syncForm();
        showError(`cannot list the presets: ${e.message}`, '');
    });
    syncForm();
    refresh();
    return () => {
        alive = false;
        clearTimeout(timer);
        clearTimeout(soon);
        off();
    };
}
