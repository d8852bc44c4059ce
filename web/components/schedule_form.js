// The Schedules view's form that adds a schedule: a name, a preset or a spec typed as JSON (it
// starts from the preset picked before), every or cron, hosts and a webhook, and the token;
// each error of the API shown at its field.

import {h, clear} from '../dom.js';
import {utc} from '../format.js';
import {SCHEDULE_SPEC, scheduleBoxFor, scheduleBody} from '../requests.js';
import {field, tokenField} from './form.js';

function input(id, placeholder, described) {
    return h('input', {id, name: id.replace(/^sched-/, ''), type: 'text', autocomplete: 'off',
        placeholder, 'aria-describedby': described ? `${id}-hint` : null});
}

// The form's controls and the lines under it.
function controls() {
    return {
        token: tokenField('sched-token'),
        name: input('sched-name', 'nightly', false),
        what: h('select', {id: 'sched-what', name: 'what'}),
        spec: h('textarea', {id: 'sched-spec', name: 'spec', rows: 8, spellcheck: 'false',
            autocomplete: 'off', 'aria-describedby': 'sched-spec-hint'}),
        when: h('select', {id: 'sched-when', name: 'when'},
            h('option', {value: 'every'}, 'every (interval)'),
            h('option', {value: 'cron'}, 'cron (UTC)')),
        every: input('sched-every', '15m', true),
        cron: input('sched-cron', '0 3 * * *', true),
        hosts: input('sched-hosts', 'all', true),
        webhook: input('sched-webhook', 'https://hooks.example.net/sockmatrix', true),
        submit: h('button', {id: 'schedule-submit', type: 'submit'}, 'Add schedule'),
        formError: h('p', {id: 'schedule-error', class: 'error', role: 'alert', hidden: true}),
        added: h('p', {id: 'schedule-added', class: 'hint', 'aria-live': 'polite'}),
        // A webhook's secret comes once, in the answer that made the schedule: shown here
        // until the next add, never again (rotate-secret makes a new one).
        secret: h('p', {id: 'schedule-secret', class: 'hint', hidden: true}),
    };
}

// The form: f.form the element, its controls by name, the presets and the one picked last.
export function scheduleForm() {
    const f = {...controls(), presets: [], lastPreset: ''};
    f.specField = field('sched-spec', 'spec (JSON, as POST /api/runs takes it)', f.spec,
        'starts as the preset picked before; its hosts are replaced by the hosts below when given');
    f.everyField = field('sched-every', 'every', f.every,
        'seconds, or a number with s, m, h or d (30s, 15m, 6h, 1d); at least 10 s');
    f.cronField = field('sched-cron', 'cron', f.cron,
        'minute hour day-of-month month day-of-week, in UTC');
    f.form = h('form', {id: 'schedule-form', class: 'launch', novalidate: true},
        h('fieldset', {class: 'group'}, h('legend', {}, 'what'),
            field('sched-name', 'name', f.name),
            field('sched-what', 'preset or spec', f.what), f.specField),
        h('fieldset', {class: 'group'}, h('legend', {}, 'when and where'),
            field('sched-when', 'fires', f.when), f.everyField, f.cronField,
            field('sched-hosts', 'hosts', f.hosts, 'names separated by commas; empty: the spec\'s'),
            field('sched-webhook', 'webhook', f.webhook,
                'optional: told of a new flag or regression (http:// or https://); the secret ' +
                'its receiver checks deliveries with is shown once, when the schedule is added')),
        h('fieldset', {class: 'group'}, h('legend', {}, 'authorisation'), f.token.field),
        h('div', {class: 'actions', 'data-for': 'sched-general'}, f.submit),
        f.formError, f.added, f.secret);
    f.what.addEventListener('change', () => pickWhat(f));
    f.when.addEventListener('change', () => syncForm(f));
    syncForm(f);
    return f;
}

export function syncForm(f) {
    f.specField.hidden = f.what.value !== SCHEDULE_SPEC;
    f.everyField.hidden = f.when.value !== 'every';
    f.cronField.hidden = f.when.value !== 'cron';
}

// Choosing "spec" starts the text from the preset picked before, to be edited.
function pickWhat(f) {
    const p = f.presets.find((x) => x.name === f.lastPreset);
    if (f.what.value === SCHEDULE_SPEC && f.spec.value.trim() === '' && p && p.spec)
        f.spec.value = JSON.stringify(p.spec, null, 2);
    if (f.what.value !== SCHEDULE_SPEC)
        f.lastPreset = f.what.value;
    syncForm(f);
}

// The presets to choose from (GET /api/presets), or null when they could not be listed (e:
// why): the spec can still be typed.
export function setPresets(f, ps, e) {
    if (ps) {
        f.presets = ps;
        clear(f.what);
        f.what.append(...ps.map((p) => h('option', {value: p.name}, p.name)));
    }
    f.what.append(h('option', {value: SCHEDULE_SPEC}, 'spec (JSON)'));
    if (ps)
        f.lastPreset = f.what.value;
    syncForm(f);
    if (!ps)
        showFormError(f, `cannot list the presets: ${e.message}`, '');
}

// An error at the box of the field the API named (apiField), and in the line under the form.
export function showFormError(f, msg, apiField) {
    f.formError.hidden = false;
    f.formError.textContent = msg;
    const box = f.form.querySelector(`[data-for="${scheduleBoxFor(apiField || '', f.what.value)}"]`) ||
        f.form.querySelector('[data-for="sched-general"]');
    const control = box.querySelector('input, select, textarea');
    if (control)
        control.setAttribute('aria-invalid', 'true');
    box.append(h('p', {class: 'field-error', 'data-field': apiField || '', role: 'alert'}, msg));
}

// The request the form's values make (an ApiError of field "spec" when the spec is no JSON).
export function formBody(f) {
    return scheduleBody({name: f.name.value, what: f.what.value, spec: f.spec.value,
        when: f.when.value, every: f.every.value, cron: f.cron.value, hosts: f.hosts.value,
        webhook: f.webhook.value});
}

// The line of the schedule just added (r: POST /api/schedules' answer), and its webhook's
// secret, shown only now.
export function showAdded(f, r) {
    f.added.textContent = `Schedule ${r.id} added: first run at ${utc(r.next_ms)}.`;
    if (r.webhook_secret) {
        f.secret.replaceChildren('Webhook secret, shown only now: ',
            h('code', {id: 'schedule-secret-value'}, r.webhook_secret),
            '. Give it to the receiver: it checks each delivery\'s signature with it.');
        f.secret.hidden = false;
    }
}
