// The live view of the fleet and its runs: one WebSocket to /ws, reconnected with backoff,
// and the latest agents and runs it told us of. Views listen for its events.

import {api, wsProtocols} from './api.js';

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 10000;
const PING_MS = 20000;
// While the socket is down the page still shows the truth, only later: a coordinator restart
// takes seconds, a page left open on a lost coordinator should not look frozen.
const POLL_MS = 5000;
const JOB_RUNS_KEPT = 20;
const JOBS_KEPT_PER_RUN = 20000;

// Events (CustomEvent, the payload in detail):
//   status   {open}                   the socket opened or closed
//   snapshot {agents, runs}           everything, after each connect (and each poll while down)
//   agent    agent item               as in GET /api/agents
//   run      run item                 as in GET /api/runs
//   job      {id, run, host, peer, state, reason}
//   anomaly  {run, anomaly}
export class Live extends EventTarget {
    constructor(statusEl) {
        super();
        this.statusEl = statusEl;
        this.agents = new Map();
        this.runs = new Map();
        this.jobs = new Map();
        this.haveSnapshot = false;
        this.open = false;
        this.ws = null;
        this.backoff = BACKOFF_MIN_MS;
        this.retryTimer = 0;
        this.pollTimer = 0;
        this.pingTimer = 0;
        this.showStatus();
    }

    start() {
        this.connect();
        this.pingTimer = setInterval(() => this.send({type: 'ping'}), PING_MS);
        this.schedulePoll(0);
    }

    connect() {
        clearTimeout(this.retryTimer);
        const url = (location.protocol === 'https:' ? 'wss' : 'ws') + '://' + location.host + '/ws';
        let ws;
        try {
            ws = new WebSocket(url, wsProtocols());
        } catch {
            this.retry();
            return;
        }
        this.ws = ws;
        ws.addEventListener('open', () => {
            this.open = true;
            this.backoff = BACKOFF_MIN_MS;
            clearTimeout(this.pollTimer);
            this.showStatus();
            this.emit('status', {open: true});
        });
        ws.addEventListener('message', (ev) => this.onMessage(ev.data));
        // An error is always followed by close; retrying once, from close, is enough.
        ws.addEventListener('close', () => {
            if (this.ws !== ws)
                return;
            this.ws = null;
            const wasOpen = this.open;
            this.open = false;
            this.showStatus();
            if (wasOpen)
                this.emit('status', {open: false});
            this.retry();
            this.schedulePoll(POLL_MS);
        });
    }

    // 1 s, 2 s, 4 s, 8 s, then every 10 s: a restarting coordinator is back within the first
    // few, a lost one is not hammered.
    retry() {
        clearTimeout(this.retryTimer);
        const wait = this.backoff;
        this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
        this.retryTimer = setTimeout(() => this.connect(), wait);
    }

    schedulePoll(wait) {
        clearTimeout(this.pollTimer);
        this.pollTimer = setTimeout(() => this.poll(), wait);
    }

    async poll() {
        if (this.open)
            return;
        try {
            const [agents, runs] = await Promise.all([api.agents(), api.runs()]);
            // The socket may have opened meanwhile; its snapshot is the newer truth.
            if (!this.open)
                this.applySnapshot(agents, runs);
        } catch {
            // The coordinator is down as well; the status already says so.
        }
        if (!this.open)
            this.schedulePoll(POLL_MS);
    }

    send(msg) {
        if (this.ws && this.open)
            this.ws.send(JSON.stringify(msg));
    }

    onMessage(data) {
        let m;
        try {
            m = JSON.parse(data);
        } catch {
            return;
        }
        if (!m || typeof m !== 'object')
            return;
        switch (m.type) {
        case 'snapshot':
            this.applySnapshot(m.agents || [], m.runs || []);
            break;
        case 'agent':
            if (m.agent && m.agent.name) {
                // Merged: an event may carry only what changed (status without facts).
                const a = Object.assign(this.agents.get(m.agent.name) || {}, m.agent);
                this.agents.set(a.name, a);
                this.emit('agent', a);
            }
            break;
        case 'run':
            if (m.run && m.run.id !== undefined) {
                const r = Object.assign(this.runs.get(String(m.run.id)) || {}, m.run);
                this.runs.set(String(r.id), r);
                this.emit('run', r);
            }
            break;
        case 'job':
            if (m.job) {
                this.keepJob(m.job);
                this.emit('job', m.job);
            }
            break;
        case 'anomaly':
            if (m.anomaly)
                this.emit('anomaly', {run: String(m.run), anomaly: m.anomaly});
            break;
        default:
            break; // pong and types a newer coordinator adds
        }
    }

    // The jobs told of since the page loaded, per run: the coordinator tells each job's news
    // once, and a run view opened right after the launch (or left and come back to) must still
    // list the jobs that changed before it was there.
    keepJob(job) {
        const run = String(job.run);
        let jobs = this.jobs.get(run);
        if (!jobs) {
            jobs = new Map();
            this.jobs.set(run, jobs);
            for (const old of this.jobs.keys()) {
                if (this.jobs.size <= JOB_RUNS_KEPT)
                    break;
                this.jobs.delete(old); // a Map iterates oldest first
            }
        }
        if (jobs.size < JOBS_KEPT_PER_RUN || jobs.has(String(job.id)))
            jobs.set(String(job.id), job);
    }

    jobsOf(run) {
        return [...(this.jobs.get(String(run)) || new Map()).values()];
    }

    applySnapshot(agents, runs) {
        this.agents = new Map(agents.map((a) => [a.name, a]));
        this.runs = new Map(runs.map((r) => [String(r.id), r]));
        this.haveSnapshot = true;
        this.emit('snapshot', {agents, runs});
    }

    emit(type, detail) {
        this.dispatchEvent(new CustomEvent(type, {detail}));
    }

    showStatus() {
        if (!this.statusEl)
            return;
        this.statusEl.textContent = this.open ? 'live' : 'reconnecting';
        this.statusEl.dataset.state = this.open ? 'live' : 'reconnecting';
        this.statusEl.title = this.open
            ? 'live updates over /ws'
            : 'the live connection is down; retrying, and refreshing every few seconds';
    }

    // Subscribes a view; the returned function unsubscribes it when the view is left.
    on(handlers) {
        const pairs = Object.entries(handlers).map(([type, fn]) => {
            const l = (ev) => fn(ev.detail);
            this.addEventListener(type, l);
            return [type, l];
        });
        return () => pairs.forEach(([type, l]) => this.removeEventListener(type, l));
    }
}
