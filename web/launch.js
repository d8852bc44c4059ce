// Launch view: start a run from a preset, or from a one-test matrix built here. The coordinator
// validates every field; this form only shapes the request and shows its answer next to the
// field it names.

import {api, getToken, setToken, ApiError} from './api.js';
import {h, clear} from './dom.js';

const WORKLOADS = {
    stream: {sizes: 'msg_size', sizesLabel: 'message sizes (B)', count: 'messages'},
    rr: {sizes: 'req_size', sizesLabel: 'request sizes (B)', count: 'round trips'},
    connect: {sizes: null, sizesLabel: 'sizes (not used by connect)', count: 'connections'},
    http: {sizes: 'bytes', sizesLabel: 'body sizes (B)', count: 'repeat'},
};

// "all", "label:rack=2" (or just "rack=2"), or host names separated by commas.
export function hostsValue(text) {
    const t = text.trim();
    if (t === '' || t === 'all')
        return t === '' ? undefined : 'all';
    const label = t.startsWith('label:') ? t.slice(6).trim() : t;
    if (/^[^,\s=]+=[^,\s]*$/.test(label))
        return {label};
    return t.split(/[\s,]+/).filter(Boolean);
}

// Integers go as numbers; anything else goes as typed, so that the coordinator names the
// field and the value ("tests[0].msg_size[1]: expected an unsigned integer").
function numberOrText(s) {
    return /^\d+$/.test(s) ? Number(s) : s;
}

// One value stays a value: a list of one would be a matrix axis of one, and its error field
// would read "msg_size[0]" where the form has one number.
function axis(values) {
    return values.length === 1 ? values[0] : values;
}

// "": the coordinator decides (one job at a time when hosts share one machine); "false", "true".
function parallelValue(v) {
    return v === 'true' ? true : v === 'false' ? false : undefined;
}

export function buildBody(f) {
    const reps = f.repetitions.trim();
    const body = {};
    const parallel = parallelValue(f.parallel);
    if (f.preset !== 'custom') {
        body.preset = f.preset;
        const hosts = hostsValue(f.hosts);
        if (hosts !== undefined)
            body.hosts = hosts;
        if (reps !== '')
            body.repetitions = numberOrText(reps);
        if (parallel !== undefined)
            body.parallel = parallel;
        return body;
    }
    body.name = f.name.trim() || 'custom';
    body.hosts = hostsValue(f.hosts) ?? 'all';
    if (reps !== '')
        body.repetitions = numberOrText(reps);
    const w = WORKLOADS[f.workload];
    const test = {workload: f.workload, scope: f.scope};
    if (f.transports.length)
        test.transport = axis(f.transports);
    if (f.workload === 'http' && f.clients.length)
        test.client = axis(f.clients);
    const sizes = f.sizes.split(/[\s,]+/).filter(Boolean).map(numberOrText);
    if (w.sizes && sizes.length)
        test[w.sizes] = axis(sizes);
    const count = f.count.trim();
    if (count !== '')
        test[f.workload === 'http' ? 'repeat' : 'count'] = numberOrText(count);
    if (parallel !== undefined)
        body.parallel = parallel;
    if (f.scope === 'pair')
        body.pairs = f.pairs;
    body.tests = [test];
    return body;
}

// Which control an API field belongs to: "tests[0].msg_size[1]" is the sizes box.
function controlFor(field) {
    const f = field.replace(/\[\d+\]$/, '');
    const test = f.match(/^tests\[\d+\]\.(\w+)/);
    if (test) {
        const key = test[1];
        if (key === 'msg_size' || key === 'req_size' || key === 'bytes')
            return 'sizes';
        if (key === 'count' || key === 'repeat')
            return 'count';
        if (['workload', 'scope', 'transport', 'client'].includes(key))
            return key;
        return 'tests';
    }
    const top = f.split(/[.[]/)[0];
    return {
        hosts: 'hosts', repetitions: 'repetitions', preset: 'preset', name: 'run-name',
        parallel: 'parallel',
        pairs: 'pairs', Authorization: 'token', tests: 'tests',
    }[top] || 'general';
}

function field(id, label, control, hint) {
    return h('div', {class: 'field', 'data-for': id},
        h('label', {for: id}, label), control,
        hint ? h('small', {class: 'hint', id: `${id}-hint`}, hint) : null);
}

function checks(name, legend, values, checked) {
    return h('fieldset', {class: 'field checks', 'data-for': name},
        h('legend', {}, legend),
        values.map((v) => h('label', {class: 'check'},
            h('input', {type: 'checkbox', name, value: v, checked: checked.includes(v)}), ' ', v)));
}

// The dashboard token's field, one for every form that writes (this one, the schedules'):
// it shows the token kept for this tab, and apply() keeps what was typed before a call.
export function tokenField(id) {
    const input = h('input', {id, name: 'token', type: 'password', value: getToken(),
        autocomplete: 'off', 'aria-describedby': `${id}-hint`});
    return {input, apply: () => setToken(input.value.trim()),
        field: field(id, 'dashboard token', input,
            'needed when the coordinator is not on loopback; kept for this tab only')};
}

// A refused call's words: a 401 says where the token goes.
export function refusalText(e) {
    return e instanceof ApiError && e.status === 401
        ? `${e.message}: type the coordinator's token (its --token-file) below` : e.message;
}

export function mount(root) {
    let presets = [];
    let alive = true;
    const presetSel = h('select', {id: 'preset', name: 'preset'});
    const presetDesc = h('p', {class: 'hint', id: 'preset-desc', 'aria-live': 'polite'});
    const workload = h('select', {id: 'workload', name: 'workload'},
        Object.keys(WORKLOADS).map((w) => h('option', {value: w}, w)));
    const scope = h('select', {id: 'scope', name: 'scope'},
        h('option', {value: 'local'}, 'local (both ends on each host)'),
        h('option', {value: 'pair'}, 'pair (client on one host, server on another)'));
    const pairs = h('select', {id: 'pairs', name: 'pairs'},
        h('option', {value: 'mesh'}, 'mesh (every ordered pair)'),
        h('option', {value: 'ring'}, 'ring'));
    const transports = checks('transport', 'transports', ['tcp', 'unix'], ['tcp', 'unix']);
    const clients = checks('client', 'http client models', ['thread', 'pool', 'multi'],
        ['thread', 'pool', 'multi']);
    const sizes = h('input', {id: 'sizes', name: 'sizes', type: 'text', inputmode: 'numeric',
        placeholder: '128, 4096, 131072', autocomplete: 'off', 'aria-describedby': 'sizes-hint'});
    const count = h('input', {id: 'count', name: 'count', type: 'text', inputmode: 'numeric',
        autocomplete: 'off', placeholder: "workload's default"});
    const name = h('input', {id: 'run-name', name: 'name', type: 'text', value: 'custom',
        autocomplete: 'off'});
    const hosts = h('input', {id: 'hosts', name: 'hosts', type: 'text', value: 'all',
        autocomplete: 'off', 'aria-describedby': 'hosts-hint'});
    // A number, or "auto" (sent as typed: the spec takes it for adaptive repetitions).
    const reps = h('input', {id: 'repetitions', name: 'repetitions', type: 'text',
        autocomplete: 'off', placeholder: "preset's", list: 'repetitions-choices',
        'aria-describedby': 'repetitions-hint'});
    const repsChoices = h('datalist', {id: 'repetitions-choices'}, h('option', {value: 'auto'}));
    const parallel = h('select', {id: 'parallel', name: 'parallel',
        'aria-describedby': 'parallel-hint'},
        h('option', {value: ''}, 'automatic'),
        h('option', {value: 'false'}, 'one job at a time'),
        h('option', {value: 'true'}, 'in parallel'));
    const token = tokenField('token');
    const submit = h('button', {id: 'launch-submit', type: 'submit'}, 'Start run');
    const error = h('p', {id: 'launch-error', class: 'error', role: 'alert', hidden: true});

    const sizesField = field('sizes', WORKLOADS.stream.sizesLabel, sizes,
        'comma list; each size is one variant');
    const pairsField = field('pairs', 'pairs', pairs);
    const custom = h('fieldset', {id: 'custom', class: 'group'},
        h('legend', {}, 'matrix (one test; list values are axes)'),
        field('run-name', 'run name', name, 'runs of one name are each other\'s baselines'),
        field('workload', 'workload', workload),
        field('scope', 'scope', scope),
        pairsField, transports, clients, sizesField,
        field('count', 'messages', count, 'empty: the workload\'s default'));

    const form = h('form', {id: 'launch-form', class: 'launch', novalidate: true},
        h('fieldset', {class: 'group'}, h('legend', {}, 'what'),
            field('preset', 'preset', presetSel), presetDesc),
        custom,
        h('fieldset', {class: 'group'}, h('legend', {}, 'where and how often'),
            field('hosts', 'hosts', hosts, 'all, names separated by commas (h1,h2), or label:rack=2'),
            field('repetitions', 'repetitions', reps,
                'empty: the preset\'s (custom: 5); auto: 5 to 30, until the CI is within ±5%'),
            field('parallel', 'jobs of different hosts', parallel,
                'automatic: side by side, but one at a time when hosts share one machine ' +
                '(the same boot id), as a lab of namespaces does')),
        h('fieldset', {class: 'group'}, h('legend', {}, 'authorisation'),
            token.field),
        h('div', {class: 'actions', 'data-for': 'general'}, submit),
        repsChoices, error);
    root.append(h('section', {class: 'view launch'}, h('h1', {}, 'Launch a run'), form));

    const checked = (n) => [...form.querySelectorAll(`input[name=${n}]:checked`)].map((i) => i.value);

    const syncCustom = () => {
        const isCustom = presetSel.value === 'custom';
        custom.hidden = !isCustom;
        const w = WORKLOADS[workload.value];
        sizesField.querySelector('label').textContent = w.sizesLabel;
        sizes.disabled = !w.sizes;
        count.closest('.field').querySelector('label').textContent = w.count;
        clients.hidden = workload.value !== 'http';
        pairsField.hidden = scope.value !== 'pair';
        const p = presets.find((x) => x.name === presetSel.value);
        presetDesc.textContent = isCustom
            ? 'Build one test below; a list of sizes or several transports makes a matrix.'
            : p ? p.description + (p.spec && p.spec.repetitions
                ? ` (${p.spec.repetitions} repetitions, ${p.spec.warmup ?? 1} warm-up)` : '')
                : '';
        reps.placeholder = isCustom ? '5'
            : p && p.spec && p.spec.repetitions ? `preset's (${p.spec.repetitions})` : "preset's";
    };
    // http and pair jobs run over TCP only: untick unix rather than let the first launch fail.
    const onShape = () => {
        if (workload.value === 'http' || scope.value === 'pair') {
            const unix = form.querySelector('input[name=transport][value=unix]');
            unix.checked = false;
        }
        syncCustom();
    };
    presetSel.addEventListener('change', syncCustom);
    workload.addEventListener('change', onShape);
    scope.addEventListener('change', onShape);

    const clearErrors = () => {
        error.hidden = true;
        error.textContent = '';
        for (const e of form.querySelectorAll('.field-error'))
            e.remove();
        for (const e of form.querySelectorAll('[aria-invalid]'))
            e.removeAttribute('aria-invalid');
    };
    const showError = (msg, apiField) => {
        error.hidden = false;
        error.textContent = msg;
        if (!apiField)
            return;
        const id = controlFor(apiField);
        const box = form.querySelector(`[data-for="${id}"]`) ||
            form.querySelector('[data-for="general"]');
        const control = box.querySelector('input, select');
        if (control && !control.disabled)
            control.setAttribute('aria-invalid', 'true');
        box.append(h('p', {class: 'field-error', 'data-field': apiField, role: 'alert'}, msg));
    };

    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        clearErrors();
        token.apply();
        const body = buildBody({
            preset: presetSel.value, hosts: hosts.value, repetitions: reps.value,
            name: name.value, workload: workload.value, scope: scope.value, pairs: pairs.value,
            transports: checked('transport'), clients: checked('client'), sizes: sizes.value,
            count: count.value, parallel: parallel.value,
        });
        submit.disabled = true;
        submit.textContent = 'Starting...';
        try {
            const r = await api.startRun(body);
            if (alive)
                location.hash = `#/run/${encodeURIComponent(r.run)}`;
        } catch (e) {
            if (!alive)
                return;
            if (e instanceof ApiError && e.status === 401)
                showError(refusalText(e), e.field || 'Authorization');
            else
                showError(e.message, e instanceof ApiError ? e.field : '');
        } finally {
            submit.disabled = false;
            submit.textContent = 'Start run';
        }
    });

    api.presets().then((list) => {
        if (!alive)
            return;
        presets = list;
        clear(presetSel);
        presetSel.append(...list.map((p) => h('option', {value: p.name}, p.name)),
            h('option', {value: 'custom'}, 'custom'));
        syncCustom();
    }).catch((e) => {
        if (!alive)
            return;
        presetSel.append(h('option', {value: 'custom'}, 'custom'));
        syncCustom();
        showError(`cannot list the presets: ${e.message}`, '');
    });
    syncCustom();
    return () => {
        alive = false;
    };
}
