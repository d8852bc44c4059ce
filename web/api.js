// The coordinator's HTTP API (same origin), and the dashboard token kept for this tab.

const TOKEN_KEY = 'sockmatrix.token';

// sessionStorage, not localStorage: the token opens state-changing calls (and, on a
// coordinator off loopback, every read), and a tab's lifetime is as long as it should outlive
// the form it was typed into.
export function getToken() {
    try {
        return sessionStorage.getItem(TOKEN_KEY) || '';
    } catch {
        return '';
    }
}

export function setToken(token) {
    try {
        if (token)
            sessionStorage.setItem(TOKEN_KEY, token);
        else
            sessionStorage.removeItem(TOKEN_KEY);
    } catch {
        // Storage can be refused (private windows); the token then lasts for this page only.
    }
}

// A 4xx/5xx answer: the API's message and, when it named one, the field it refers to.
export class ApiError extends Error {
    constructor(status, message, field) {
        super(message);
        this.status = status;
        this.field = field || '';
    }
}

// The WebSocket's subprotocols: a browser cannot set headers on one, so the token rides as
// "sm-token.<token>", percent-encoded into the characters a subprotocol may hold. The
// coordinator answers with "sm-events" and never logs the list.
export function wsProtocols() {
    const token = getToken();
    if (!token)
        return ['sm-events'];
    const enc = encodeURIComponent(token).replace(/[!'()*]/g,
        (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
    return ['sm-events', 'sm-token.' + enc];
}

// A read refused for want of the token (a coordinator off loopback): the page asks for it
// once, whichever view made the request.
function tokenNeeded() {
    window.dispatchEvent(new CustomEvent('sm-token-needed'));
}

async function request(method, path, body) {
    const headers = {Accept: 'application/json'};
    const init = {method, headers, cache: 'no-store'};
    const token = getToken();
    if (token)
        headers.Authorization = 'Bearer ' + token;
    if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    let resp;
    try {
        resp = await fetch(path, init);
    } catch (e) {
        throw new ApiError(0, `cannot reach the coordinator (${e.message})`, '');
    }
    const text = await resp.text();
    let json = null;
    try {
        json = text ? JSON.parse(text) : null;
    } catch {
        // A proxy's HTML error page, say: keep the status as the message.
    }
    if (!resp.ok) {
        if (resp.status === 401 && method === 'GET')
            tokenNeeded();
        const msg = json && json.error ? json.error : `${resp.status} ${resp.statusText}`;
        throw new ApiError(resp.status, msg, json && json.field);
    }
    if (json === null)
        throw new ApiError(resp.status, `${path}: expected JSON`, '');
    return json;
}

const enc = encodeURIComponent;

export const api = {
    agents: () => request('GET', '/api/agents').then((j) => j.agents || []),
    presets: () => request('GET', '/api/presets').then((j) => j.presets || []),
    runs: () => request('GET', '/api/runs').then((j) => j.runs || []),
    run: (id) => request('GET', `/api/runs/${enc(id)}`),
    startRun: (body) => request('POST', '/api/runs', body),
    // One page of a run's jobs in run order (1000 at most); page.next is the next page's cursor.
    runJobs: (id, after) =>
        request('GET', `/api/runs/${enc(id)}/jobs?limit=1000` + (after ? `&after=${enc(after)}` : '')),
    // One cell's repetitions in run order with the table's median and CI.
    runCell: (id, cell, disturbed) => request('GET', `/api/runs/${enc(id)}/cells/${enc(cell)}` +
        (disturbed ? '?disturbed=include' : '')),
    cancelRun: (id) => request('POST', `/api/runs/${enc(id)}/cancel`, '{}'),
    // A run of the cells run id could not judge (inconclusive or failed), answered as
    // POST /api/runs answers: {"run": "N"}.
    againRun: (id) => request('POST', `/api/runs/${enc(id)}/again`, '{}'),
    table: (id, scope, disturbed) =>
        request('GET', `/api/runs/${enc(id)}/table?format=json` + (scope ? `&scope=${scope}` : '') +
            (disturbed ? '&disturbed=include' : '')),
    fingerprint: (name) => request('GET', `/api/agents/${enc(name)}/fingerprint`),
    // A host's latest jobs, newest first (limit: 1 to 100).
    agentJobs: (name, limit) => request('GET', `/api/agents/${enc(name)}/jobs?limit=${limit}`),
    // The names go as the API spells the list (commas), each name encoded.
    fingerprintDiff: (hosts) =>
        request('GET', `/api/fingerprints/diff?hosts=${hosts.map(enc).join(',')}`),
    compare: (a, b, disturbed) => request('GET', `/api/compare?a=${enc(a)}&b=${enc(b)}` +
        (disturbed ? '&disturbed=include' : '')),
    grid: () => request('GET', '/api/grid'),
    trends: (host, test, metric, disturbed) => request('GET',
        `/api/trends?host=${enc(host)}&test=${enc(test)}` + (metric ? `&metric=${enc(metric)}` : '') +
        (disturbed ? '&disturbed=include' : '')),
    schedules: () => request('GET', '/api/schedules').then((j) => j.schedules || []),
    // One schedule with its last runs ("recent_runs", newest first) and events.
    schedule: (id) => request('GET', `/api/schedules/${enc(id)}`),
    addSchedule: (body) => request('POST', '/api/schedules', body),
    pauseSchedule: (id) => request('POST', `/api/schedules/${enc(id)}/pause`, '{}'),
    resumeSchedule: (id) => request('POST', `/api/schedules/${enc(id)}/resume`, '{}'),
    deleteSchedule: (id) => request('DELETE', `/api/schedules/${enc(id)}`),
    // An experiment planned from run id's anomaly of {host, test}: {"plan": [...], "run": "N"
    // or null when nothing can be tested}.
    explain: (id, body) => request('POST', `/api/runs/${enc(id)}/experiments`, body),
    // An experiment run's answer (a run whose "explains" is set).
    experiment: (id) => request('GET', `/api/runs/${enc(id)}/experiment`),
    anomalies: (id, baseline, disturbed) => {
        const q = [baseline ? `baseline=${enc(baseline)}` : '', disturbed ? 'disturbed=include' : '']
            .filter(Boolean).join('&');
        return request('GET', `/api/runs/${enc(id)}/anomalies` + (q ? `?${q}` : ''));
    },
};

// The export links' targets: the API's own bytes, so a download equals `sockmatrix export`.
export function tableUrl(id, format, scope, disturbed) {
    return `/api/runs/${enc(id)}/table?format=${format}` + (scope ? `&scope=${scope}` : '') +
        (disturbed ? '&disturbed=include' : '');
}

// A download of url under name. With a token the link cannot simply be followed (a navigation
// carries no Authorization), so the bytes are fetched with it and saved from a blob.
export async function download(url, name) {
    const token = getToken();
    const resp = await fetch(url, {headers: {Authorization: 'Bearer ' + token}, cache: 'no-store'});
    if (!resp.ok)
        throw new ApiError(resp.status, `${resp.status} ${resp.statusText}`, '');
    const blob = URL.createObjectURL(await resp.blob());
    const a = document.createElement('a');
    a.href = blob;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(blob), 10000);
}
