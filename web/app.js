// The dashboard's entry: the live connection, and a hash router that mounts one view at a time.

import {Live} from './live.js';
import {h, clear} from './dom.js';
import * as fleet from './fleet.js';
import * as launch from './launch.js';
import * as run from './run.js';
import * as compare from './compare.js';
import * as history from './history.js';

// Each view's mount(root, args, ctx) draws into root and returns a function that undoes its
// subscriptions and timers, so a view left behind never writes into the next one.
const routes = {fleet, launch, run, compare, history};

const live = new Live(document.getElementById('ws-status'));
const root = document.getElementById('view');
let unmount = null;

function parse(hash) {
    const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
    const name = parts[0] || 'fleet';
    return routes[name] ? {name, args: parts.slice(1)} : null;
}

function route() {
    const r = parse(location.hash);
    if (!r) {
        location.replace('#/fleet');
        return;
    }
    if (unmount)
        unmount();
    unmount = null;
    clear(root);
    for (const a of document.querySelectorAll('nav a[data-route]')) {
        if (a.dataset.route === r.name)
            a.setAttribute('aria-current', 'page');
        else
            a.removeAttribute('aria-current');
    }
    try {
        unmount = routes[r.name].mount(root, r.args, {live}) || null;
    } catch (e) {
        root.append(h('p', {class: 'error', role: 'alert'}, `this view failed: ${e.message}`));
    }
}

window.addEventListener('hashchange', route);
live.start();
route();
