// The dashboard's entry: the live connection, and a hash router that mounts one view at a time.
//
// The modules, in three kinds (docs/dashboard.md; the lint, eslint.config.js, keeps them so):
//   views/       what this router mounts, one per page: fleet, launch, run, compare, history,
//                host, settings, trends, schedules. A view imports components and helpers,
//                never another view; only this file imports views.
//   components/  pieces views share or are made of (DOM built from data): charts, results
//                tables, verdict words and banners, forms, the schedule link, a run's jobs.
//   helpers      beside this file: api.js (the HTTP API), live.js (the /ws events), dom.js
//                (h(), svg(), links), and the pure ones, no DOM, unit-tested: format.js
//                (numbers, units, times as text), scales.js (chart axes and colours),
//                requests.js (the forms' requests from what was typed).

import {Live} from './live.js';
import {getToken, setToken} from './api.js';
import {h, clear} from './dom.js';
import * as fleet from './views/fleet.js';
import * as launch from './views/launch.js';
import * as run from './views/run.js';
import * as compare from './views/compare.js';
import * as history from './views/history.js';
import * as hosts from './views/host.js';
import * as settings from './views/settings.js';
import * as trends from './views/trends.js';
import * as schedules from './views/schedules.js';

// Each view's mount(root, args, ctx) draws into root and returns a function that undoes its
// subscriptions and timers, so a view left behind never writes into the next one.
const routes = {fleet, launch, run, compare, history, hosts, settings, trends, schedules};

const live = new Live(document.getElementById('ws-status'));
const root = document.getElementById('view');
let unmount = null;

// "#/view/arg/arg?key=value": the view, its arguments, and options that keep a view's state
// (disturbed=include) as a query after the path.
function parse(hash) {
    const [path, q] = hash.replace(/^#\/?/, '').split('?', 2);
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const name = parts[0] || 'fleet';
    return routes[name] ? {name, args: parts.slice(1), query: new URLSearchParams(q || '')} : null;
}

function route() {
    const r = parse(location.hash);
    if (!r) {
        location.replace('#/fleet');
        return;
    }
    // #/hosts/h1,h2 was the host settings' address before a host had a page of its own: a
    // comma is in no agent's name, so such a link (or a bare #/hosts) still opens the side by side.
    if (r.name === 'hosts' && (!r.args[0] || r.args[0].includes(','))) {
        location.replace('#/settings/' + (r.args[0] || '').split(',').filter(Boolean)
            .map(encodeURIComponent).join(','));
        return;
    }
    if (unmount)
        unmount();
    unmount = null;
    clear(root);
    // A host's page and the host settings belong to the fleet view.
    const tab = r.name === 'hosts' || r.name === 'settings' ? 'fleet' : r.name;
    for (const a of document.querySelectorAll('nav a[data-route]')) {
        if (a.dataset.route === tab)
            a.setAttribute('aria-current', 'page');
        else
            a.removeAttribute('aria-current');
    }
    try {
        unmount = routes[r.name].mount(root, r.args, {live, query: r.query}) || null;
    } catch (e) {
        root.append(h('p', {class: 'error', role: 'alert'}, `this view failed: ${e.message}`));
    }
}

// A coordinator off loopback answers reads only with its token: the first refused read shows
// a field for it in the header, and the token typed there serves every request of this tab.
function askToken() {
    if (document.getElementById('token-ask'))
        return;
    const input = h('input', {id: 'token-ask-input', type: 'password', autocomplete: 'off',
        'aria-label': 'dashboard token', placeholder: 'dashboard token', value: getToken()});
    const form = h('form', {id: 'token-ask', class: 'token-ask',
        onsubmit: (ev) => {
            ev.preventDefault();
            setToken(input.value.trim());
            form.remove();
            live.connect();
            route();
        }},
    h('span', {role: 'alert'}, 'This coordinator needs its dashboard token to be read.'),
    input, h('button', {type: 'submit'}, 'Use'));
    document.querySelector('header.top').append(form);
    input.focus();
}

window.addEventListener('sm-token-needed', askToken);
window.addEventListener('hashchange', route);
live.start();
route();
