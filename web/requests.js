// The write requests of the forms, shaped from what was typed: POST /api/runs (Launch) and
// POST /api/schedules, and which control an API error names. Pure: no DOM, tested by
// tests/web/unit. The coordinator checks every field; these only shape the request.

import {ApiError} from './api.js';

// The workloads the Launch form builds a test of: the spec's field of the sizes axis, and
// the words of its count.
export const WORKLOADS = {
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

export function runBody(f) {
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
export function controlFor(apiField) {
    const f = apiField.replace(/\[\d+\]$/, '');
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

export const SCHEDULE_SPEC = 'spec'; // the schedule form's "what" choice of a spec typed as JSON

// Which of the form's boxes an API field belongs to: "spec.tests[0].count" is the spec's.
export function scheduleBoxFor(apiField, what) {
    const top = apiField.split(/[.[]/)[0];
    if (top === 'spec')
        return what === SCHEDULE_SPEC ? 'sched-spec' : 'sched-what';
    return {
        name: 'sched-name', preset: 'sched-what', every: 'sched-every', cron: 'sched-cron',
        hosts: 'sched-hosts', webhook: 'sched-webhook', Authorization: 'sched-token',
    }[top] || 'sched-general';
}

// Host names separated by commas or spaces; empty or "all": the spec's own hosts.
export function hostsList(text) {
    const t = text.trim();
    return t === '' || t === 'all' ? undefined : t.split(/[\s,]+/).filter(Boolean);
}

// POST /api/schedules' body from the schedule form's values (strings as typed): f.what a
// preset's name or SCHEDULE_SPEC (then f.spec is JSON), f.when 'every' or 'cron'. A spec that is
// not JSON is refused here, as the API would name it: an ApiError of field "spec".
export function scheduleBody(f) {
    const body = {name: f.name.trim()};
    if (f.what === SCHEDULE_SPEC) {
        try {
            body.spec = JSON.parse(f.spec);
        } catch (e) {
            throw new ApiError(400, `spec: not JSON (${e.message})`, 'spec');
        }
    } else {
        body.preset = f.what;
    }
    if (f.when === 'cron')
        body.cron = f.cron.trim();
    else
        body.every = f.every.trim();
    const list = hostsList(f.hosts);
    if (list)
        body.hosts = list;
    if (f.webhook.trim())
        body.webhook = f.webhook.trim();
    return body;
}
