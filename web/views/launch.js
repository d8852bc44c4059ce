// Launch view: start a run from a preset, or from a one-test matrix built here. The coordinator
// validates every field; this form only shapes the request and shows its answer next to the
// field it names.

import {api, ApiError} from '../api.js';
import {h, clear} from '../dom.js';
import {WORKLOADS, runBody, controlFor} from '../requests.js';
import {field, tokenField, refusalText, clearFieldErrors} from '../components/form.js';

function checks(name, legend, values, checked) {
    return h('fieldset', {class: 'field checks', 'data-for': name},
        h('legend', {}, legend),
        values.map((v) => h('label', {class: 'check'},
            h('input', {type: 'checkbox', name, value: v, checked: checked.includes(v)}), ' ', v)));
}

function select(id, ...options) {
    return h('select', {id, name: id}, options.map(([value, text]) => h('option', {value}, text)));
}

// The form's controls, by name.
function controls() {
    return {
        presetSel: h('select', {id: 'preset', name: 'preset'}),
        presetDesc: h('p', {class: 'hint', id: 'preset-desc', 'aria-live': 'polite'}),
        workload: select('workload', ...Object.keys(WORKLOADS).map((w) => [w, w])),
        scope: select('scope', ['local', 'local (both ends on each host)'],
            ['pair', 'pair (client on one host, server on another)']),
        pairs: select('pairs', ['mesh', 'mesh (every ordered pair)'], ['ring', 'ring']),
        transports: checks('transport', 'transports', ['tcp', 'unix'], ['tcp', 'unix']),
        clients: checks('client', 'http client models', ['thread', 'pool', 'multi'],
            ['thread', 'pool', 'multi']),
        sizes: h('input', {id: 'sizes', name: 'sizes', type: 'text', inputmode: 'numeric',
            placeholder: '128, 4096, 131072', autocomplete: 'off', 'aria-describedby': 'sizes-hint'}),
        count: h('input', {id: 'count', name: 'count', type: 'text', inputmode: 'numeric',
            autocomplete: 'off', placeholder: "workload's default"}),
        name: h('input', {id: 'run-name', name: 'name', type: 'text', value: 'custom',
            autocomplete: 'off'}),
        hosts: h('input', {id: 'hosts', name: 'hosts', type: 'text', value: 'all',
            autocomplete: 'off', 'aria-describedby': 'hosts-hint'}),
        // A number, or "auto" (sent as typed: the spec takes it for adaptive repetitions).
        reps: h('input', {id: 'repetitions', name: 'repetitions', type: 'text',
            autocomplete: 'off', placeholder: "preset's", list: 'repetitions-choices',
            'aria-describedby': 'repetitions-hint'}),
        repsChoices: h('datalist', {id: 'repetitions-choices'}, h('option', {value: 'auto'})),
        parallel: h('select', {id: 'parallel', name: 'parallel', 'aria-describedby': 'parallel-hint'},
            h('option', {value: ''}, 'automatic'),
            h('option', {value: 'false'}, 'one job at a time'),
            h('option', {value: 'true'}, 'in parallel')),
        token: tokenField('token'),
        submit: h('button', {id: 'launch-submit', type: 'submit'}, 'Start run'),
        error: h('p', {id: 'launch-error', class: 'error', role: 'alert', hidden: true}),
    };
}

// The matrix of a custom run: one test, whose list values are axes.
function customGroup(c) {
    c.sizesField = field('sizes', WORKLOADS.stream.sizesLabel, c.sizes,
        'comma list; each size is one variant');
    c.pairsField = field('pairs', 'pairs', c.pairs);
    return h('fieldset', {id: 'custom', class: 'group'},
        h('legend', {}, 'matrix (one test; list values are axes)'),
        field('run-name', 'run name', c.name, 'runs of one name are each other\'s baselines'),
        field('workload', 'workload', c.workload),
        field('scope', 'scope', c.scope),
        c.pairsField, c.transports, c.clients, c.sizesField,
        field('count', 'messages', c.count, 'empty: the workload\'s default'));
}

// The form: its controls (as controls() has them), custom the matrix's group, form itself.
function launchForm() {
    const c = controls();
    c.custom = customGroup(c);
    c.form = h('form', {id: 'launch-form', class: 'launch', novalidate: true},
        h('fieldset', {class: 'group'}, h('legend', {}, 'what'),
            field('preset', 'preset', c.presetSel), c.presetDesc),
        c.custom,
        h('fieldset', {class: 'group'}, h('legend', {}, 'where and how often'),
            field('hosts', 'hosts', c.hosts, 'all, names separated by commas (h1,h2), or label:rack=2'),
            field('repetitions', 'repetitions', c.reps,
                'empty: the preset\'s (custom: 5); auto: 5 to 30, until the CI is within ±5%'),
            field('parallel', 'jobs of different hosts', c.parallel,
                'automatic: side by side, but one at a time when hosts share one machine ' +
                '(the same boot id), as a lab of namespaces does')),
        h('fieldset', {class: 'group'}, h('legend', {}, 'authorisation'),
            c.token.field),
        h('div', {class: 'actions', 'data-for': 'general'}, c.submit),
        c.repsChoices, c.error);
    return c;
}

// What the preset picked runs (p: it, from GET /api/presets; isCustom: "custom" is picked).
function presetText(p, isCustom) {
    if (isCustom)
        return 'Build one test below; a list of sizes or several transports makes a matrix.';
    if (!p)
        return '';
    return p.description + (p.spec && p.spec.repetitions
        ? ` (${p.spec.repetitions} repetitions, ${p.spec.warmup ?? 1} warm-up)` : '');
}

// The form follows its choices: the matrix for "custom", the labels of the workload's sizes
// and count, the http clients and the pairs where they apply.
function syncCustom(c, presets) {
    const isCustom = c.presetSel.value === 'custom';
    c.custom.hidden = !isCustom;
    const w = WORKLOADS[c.workload.value];
    c.sizesField.querySelector('label').textContent = w.sizesLabel;
    c.sizes.disabled = !w.sizes;
    c.count.closest('.field').querySelector('label').textContent = w.count;
    c.clients.hidden = c.workload.value !== 'http';
    c.pairsField.hidden = c.scope.value !== 'pair';
    const p = presets.find((x) => x.name === c.presetSel.value);
    c.presetDesc.textContent = presetText(p, isCustom);
    c.reps.placeholder = isCustom ? '5'
        : p && p.spec && p.spec.repetitions ? `preset's (${p.spec.repetitions})` : "preset's";
}

// http and pair jobs run over TCP only: untick unix rather than let the first launch fail.
function onShape(c, presets) {
    if (c.workload.value === 'http' || c.scope.value === 'pair') {
        const unix = c.form.querySelector('input[name=transport][value=unix]');
        unix.checked = false;
    }
    syncCustom(c, presets);
}

function showError(c, msg, apiField) {
    c.error.hidden = false;
    c.error.textContent = msg;
    if (!apiField)
        return;
    const id = controlFor(apiField);
    const box = c.form.querySelector(`[data-for="${id}"]`) ||
        c.form.querySelector('[data-for="general"]');
    const control = box.querySelector('input, select');
    if (control && !control.disabled)
        control.setAttribute('aria-invalid', 'true');
    box.append(h('p', {class: 'field-error', 'data-field': apiField, role: 'alert'}, msg));
}

function formValues(c) {
    const checked = (n) => [...c.form.querySelectorAll(`input[name=${n}]:checked`)].map((i) => i.value);
    return {
        preset: c.presetSel.value, hosts: c.hosts.value, repetitions: c.reps.value,
        name: c.name.value, workload: c.workload.value, scope: c.scope.value, pairs: c.pairs.value,
        transports: checked('transport'), clients: checked('client'), sizes: c.sizes.value,
        count: c.count.value, parallel: c.parallel.value,
    };
}

// The form's POST /api/runs: the new run's page, or the error at its field.
async function start(v) {
    const c = v.c;
    clearFieldErrors(c.form, c.error);
    c.token.apply();
    const body = runBody(formValues(c));
    c.submit.disabled = true;
    c.submit.textContent = 'Starting...';
    try {
        const r = await api.startRun(body);
        if (v.alive)
            location.hash = `#/run/${encodeURIComponent(r.run)}`;
    } catch (e) {
        if (!v.alive)
            return;
        if (e instanceof ApiError && e.status === 401)
            showError(c, refusalText(e), e.field || 'Authorization');
        else
            showError(c, e.message, e instanceof ApiError ? e.field : '');
    } finally {
        c.submit.disabled = false;
        c.submit.textContent = 'Start run';
    }
}

// The presets (GET /api/presets) and "custom"; when they cannot be listed, "custom" alone.
function setPresets(v, list, e) {
    v.presets = list || [];
    if (list) {
        clear(v.c.presetSel);
        v.c.presetSel.append(...list.map((p) => h('option', {value: p.name}, p.name)));
    }
    v.c.presetSel.append(h('option', {value: 'custom'}, 'custom'));
    syncCustom(v.c, v.presets);
    if (!list)
        showError(v.c, `cannot list the presets: ${e.message}`, '');
}

export function mount(root) {
    const v = {alive: true, presets: [], c: launchForm()};
    const c = v.c;
    root.append(h('section', {class: 'view launch'}, h('h1', {}, 'Launch a run'), c.form));
    c.presetSel.addEventListener('change', () => syncCustom(c, v.presets));
    c.workload.addEventListener('change', () => onShape(c, v.presets));
    c.scope.addEventListener('change', () => onShape(c, v.presets));
    c.form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        start(v);
    });
    api.presets().then((list) => {
        if (v.alive)
            setPresets(v, list, null);
    }).catch((e) => {
        if (v.alive)
            setPresets(v, null, e);
    });
    syncCustom(c, v.presets);
    return () => {
        v.alive = false;
    };
}
