// A run's jobs as its page lists them (GET /api/runs/ID/jobs), in run order: the test as the
// table names it, the headline figure in the table's notation, a disturbed job's reason, its
// result a click away; the job running now said above the list, which follows it.

import {h, hostLink} from '../dom.js';
import {fmtValue} from '../format.js';
import {disturbedReason} from './verdict.js';
import {followRunning, firstStart} from './run_live.js';
import {cellHref} from './cell_samples.js';

// What a job's line is drawn from: a line whose key did not change is kept as it is.
export function jobKey(j) {
    return JSON.stringify([j.state, j.attempt, j.reason, j.finished_ms, j.headline]);
}

// The job's result JSON, written into the details only when they are first opened.
function jobDetails(j) {
    const pre = h('pre', {class: 'job-json'});
    const details = h('details', {class: 'job-details', 'data-job': j.id},
        h('summary', {}, j.samples ? `samples (${(j.samples.metrics || []).length} figures)`
            : 'result'), pre);
    details.addEventListener('toggle', () => {
        if (details.open && !pre.textContent) {
            const shown = {samples: j.samples, result: j.result, sides: j.sides, params: j.params};
            pre.textContent = JSON.stringify(shown, null, 2);
        }
    });
    return details;
}

// One job's line; runId: its run, for the link to its cell's samples.
export function jobLi(j, runId) {
    const who = j.peer ? [hostLink(j.host), '->', hostLink(j.peer)] : hostLink(j.host);
    const why = disturbedReason(j);
    const rep = j.repetition === null || j.repetition === undefined ? null
        : h('span', {class: `rep${j.warmup ? ' warmup' : ''}`},
            j.warmup ? `warm-up ${j.repetition}` : `rep ${j.repetition}`);
    const took = j.duration_ms === null || j.duration_ms === undefined ? null
        : h('span', {class: 'duration'}, fmtValue(j.duration_ms / 1000, 's'));
    const head = j.headline ? h('span', {class: 'headline', title: j.headline.metric},
        fmtValue(j.headline.value, j.headline.unit)) : null;
    return h('li', {'data-job': j.id, 'data-state': j.state, 'data-warmup': j.warmup ? '1' : '0',
        class: 'job'},
    h('a', {class: 'job-id', href: `/api/jobs/${encodeURIComponent(j.id)}`,
        title: 'the job as JSON'}, `#${j.id}`),
    h('span', {class: 'host'}, who),
    h('span', {class: 'test'}, j.test || ''),
    rep,
    h('span', {class: `badge state-${j.state}`}, j.state),
    took, head,
    // Kept, but not in the table's statistics unless asked for (docs/analysis.md); the
    // agent's reason beside it.
    why ? h('span', {class: 'badge disturbed', title: why}, 'disturbed') : null,
    why ? h('span', {class: 'disturbed-reason'}, why) : null,
    j.state === 'failed' && j.reason ? h('span', {class: 'reason'}, j.reason) : null,
    j.cell === null || j.cell === undefined ? null
        : h('a', {class: 'samples-link', href: cellHref(runId, j.cell),
            title: 'every repetition of this cell'}, `cell ${j.cell}`),
    jobDetails(j));
}

// The list's elements and the lines drawn: ul, the note of no jobs, the note of the job
// running now, and lis (job id -> {li, key}).
export function jobList() {
    return {
        ul: h('ul', {id: 'run-jobs', class: 'jobs', 'aria-live': 'polite'}),
        note: h('p', {id: 'run-jobs-note', class: 'hint'}, 'No jobs yet.'),
        nowNote: h('p', {id: 'run-now', class: 'run-now', hidden: true}),
        lis: new Map(),
    };
}

// The line of job j, its old one x ({li, key}) replaced when the job changed (an open details
// staying open); returns what the list keeps of it.
function jobLine(j, x, runId) {
    const key = jobKey(j);
    if (x && x.key === key)
        return x;
    const li = jobLi(j, runId);
    const open = x && x.li.querySelector('details')?.open;
    if (x)
        x.li.replaceWith(li);
    if (open)
        li.querySelector('details').open = true;
    return {li, key};
}

// The list becomes the API's: rows whose job did not change stay (an open details too).
// Returns when the first of the jobs started (0: none has).
export function showJobs(jl, list, runId) {
    const want = new Set(list.map((j) => String(j.id)));
    for (const [jid, x] of jl.lis)
        if (!want.has(jid)) {
            x.li.remove();
            jl.lis.delete(jid);
        }
    let prev = null;
    for (const j of list) {
        const jid = String(j.id);
        const x = jobLine(j, jl.lis.get(jid), runId);
        jl.lis.set(jid, x);
        const at = prev ? prev.nextSibling : jl.ul.firstChild;
        if (at !== x.li)
            jl.ul.insertBefore(x.li, at);
        prev = x.li;
    }
    jl.note.hidden = list.length > 0;
    followRunning(jl.ul, list, jl.nowNote, jl.lis);
    return firstStart(list);
}
