// requests.js: the forms' requests shaped from what was typed, and where an API error goes.

import {test} from 'node:test';
import assert from 'node:assert/strict';
import {ApiError} from '../../../web/api.js';
import {hostsValue, runBody, controlFor, hostsList, scheduleBoxFor, scheduleBody, SCHEDULE_SPEC,
    WORKLOADS} from '../../../web/requests.js';

const FORM = {preset: 'custom', hosts: 'all', repetitions: '', name: 'custom', workload: 'stream',
    scope: 'local', pairs: 'mesh', transports: ['tcp', 'unix'], clients: [], sizes: '', count: '',
    parallel: ''};

test('hostsValue: all, a label, or names separated by commas or spaces', () => {
    assert.equal(hostsValue(''), undefined);
    assert.equal(hostsValue('   '), undefined);
    assert.equal(hostsValue('all'), 'all');
    assert.equal(hostsValue(' all '), 'all');
    assert.deepEqual(hostsValue('rack=2'), {label: 'rack=2'});
    assert.deepEqual(hostsValue('label: rack=2'), {label: 'rack=2'});
    assert.deepEqual(hostsValue('label:rack='), {label: 'rack='});
    assert.deepEqual(hostsValue('h1, h2 h3,,h4'), ['h1', 'h2', 'h3', 'h4']);
    assert.deepEqual(hostsValue('h1'), ['h1']);
    // Two labels are no label: sent as names, for the coordinator to refuse.
    assert.deepEqual(hostsValue('a=1,b=2'), ['a=1', 'b=2']);
});

test('runBody of a preset sends only what was typed', () => {
    assert.deepEqual(runBody({...FORM, preset: 'quick', hosts: ''}), {preset: 'quick'});
    assert.deepEqual(runBody({...FORM, preset: 'quick', hosts: 'h1,h2', repetitions: ' 7 ',
        parallel: 'false'}), {preset: 'quick', hosts: ['h1', 'h2'], repetitions: 7, parallel: false});
    assert.deepEqual(runBody({...FORM, preset: 'quick', repetitions: 'auto', parallel: 'true'}),
        {preset: 'quick', hosts: 'all', repetitions: 'auto', parallel: true});
});

test('runBody of a custom matrix: one test, list values as axes, one value a value', () => {
    assert.deepEqual(runBody({...FORM, sizes: '128, 4096', count: '1000'}), {
        name: 'custom', hosts: 'all',
        tests: [{workload: 'stream', scope: 'local', transport: ['tcp', 'unix'],
            msg_size: [128, 4096], count: 1000}],
    });
    assert.deepEqual(runBody({...FORM, name: '  ', hosts: '', workload: 'rr', transports: ['tcp'],
        sizes: '64'}), {name: 'custom', hosts: 'all',
        tests: [{workload: 'rr', scope: 'local', transport: 'tcp', req_size: 64}]});
});

test('runBody sends what is no integer as typed, for the coordinator to name', () => {
    const b = runBody({...FORM, sizes: '1k, -5, 2.5', count: '0x10', repetitions: '-1'});
    assert.deepEqual(b.tests[0].msg_size, ['1k', '-5', '2.5']);
    assert.equal(b.tests[0].count, '0x10');
    assert.equal(b.repetitions, '-1');
});

test('runBody: http counts repeats and has clients, connect has no sizes, pairs go with pair', () => {
    assert.deepEqual(runBody({...FORM, workload: 'http', transports: ['tcp'], clients: ['pool'],
        sizes: '1024', count: '5'}).tests[0],
    {workload: 'http', scope: 'local', transport: 'tcp', client: 'pool', bytes: 1024, repeat: 5});
    assert.deepEqual(runBody({...FORM, workload: 'connect', transports: [], sizes: '1,2'}).tests[0],
        {workload: 'connect', scope: 'local'});
    const pair = runBody({...FORM, scope: 'pair', pairs: 'ring', transports: ['tcp']});
    assert.equal(pair.pairs, 'ring');
    assert.equal(pair.tests[0].scope, 'pair');
    assert.equal(runBody(FORM).pairs, undefined);
    assert.equal(WORKLOADS.connect.sizes, null);
});

test('controlFor maps an API field to the Launch form\'s control', () => {
    assert.equal(controlFor('tests[0].msg_size[1]'), 'sizes');
    assert.equal(controlFor('tests[0].req_size'), 'sizes');
    assert.equal(controlFor('tests[2].bytes'), 'sizes');
    assert.equal(controlFor('tests[0].count'), 'count');
    assert.equal(controlFor('tests[0].repeat'), 'count');
    assert.equal(controlFor('tests[0].transport[1]'), 'transport');
    assert.equal(controlFor('tests[0].client'), 'client');
    assert.equal(controlFor('tests[0].warmup'), 'tests');
    assert.equal(controlFor('tests'), 'tests');
    assert.equal(controlFor('hosts[3]'), 'hosts');
    assert.equal(controlFor('name'), 'run-name');
    assert.equal(controlFor('Authorization'), 'token');
    assert.equal(controlFor('parallel'), 'parallel');
    assert.equal(controlFor('whatever.else'), 'general');
    assert.equal(controlFor(''), 'general');
});

test('hostsList: the spec\'s own hosts for empty or all, else the names', () => {
    assert.equal(hostsList(''), undefined);
    assert.equal(hostsList(' all '), undefined);
    assert.deepEqual(hostsList('h1 h2,h3'), ['h1', 'h2', 'h3']);
});

test('scheduleBoxFor maps an API field to the schedule form\'s box', () => {
    assert.equal(scheduleBoxFor('spec.tests[0].count', SCHEDULE_SPEC), 'sched-spec');
    assert.equal(scheduleBoxFor('spec.tests[0].count', 'quick'), 'sched-what');
    assert.equal(scheduleBoxFor('cron', 'quick'), 'sched-cron');
    assert.equal(scheduleBoxFor('every', 'quick'), 'sched-every');
    assert.equal(scheduleBoxFor('hosts[1]', 'quick'), 'sched-hosts');
    assert.equal(scheduleBoxFor('webhook', 'quick'), 'sched-webhook');
    assert.equal(scheduleBoxFor('Authorization', 'quick'), 'sched-token');
    assert.equal(scheduleBoxFor('', 'quick'), 'sched-general');
    assert.equal(scheduleBoxFor('other', SCHEDULE_SPEC), 'sched-general');
});

const SCHED = {name: ' nightly ', what: 'quick', spec: '', when: 'every', every: ' 15m ', cron: '',
    hosts: '', webhook: ' '};

test('scheduleBody: a preset or a parsed spec, every or cron, hosts and webhook when given', () => {
    assert.deepEqual(scheduleBody(SCHED), {name: 'nightly', preset: 'quick', every: '15m'});
    assert.deepEqual(scheduleBody({...SCHED, what: SCHEDULE_SPEC, spec: '{"tests": [1]}',
        when: 'cron', cron: ' 0 3 * * * ', hosts: 'h1,h2', webhook: ' https://x.example/h '}),
    {name: 'nightly', spec: {tests: [1]}, cron: '0 3 * * *', hosts: ['h1', 'h2'],
        webhook: 'https://x.example/h'});
});

test('scheduleBody refuses a spec that is not JSON as the API would, at the spec', () => {
    assert.throws(() => scheduleBody({...SCHED, what: SCHEDULE_SPEC, spec: '{nope'}), (e) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.status, 400);
        assert.equal(e.field, 'spec');
        assert.match(e.message, /^spec: not JSON \(/);
        return true;
    });
    assert.throws(() => scheduleBody({...SCHED, what: SCHEDULE_SPEC, spec: ''}), ApiError);
});
